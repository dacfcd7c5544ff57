// UTC civil time for the traces: "YYYY-MM-DD HH:MM:SS" to seconds since the Unix epoch and back.
// No time zone database and no clock: the conversion is days-from-civil arithmetic (H.
// Hinnant's algorithm) on the proleptic Gregorian calendar, so the result does not depend on the
// machine or its locale.
#ifndef GPUPOOL_SIM_UTC_TIME_H_
#define GPUPOOL_SIM_UTC_TIME_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpupool::sim {

// Seconds since 1970-01-01 00:00:00 UTC of "YYYY-MM-DD HH:MM:SS" (a 'T' may separate the date
// and the time) or of "YYYY-MM-DD" (midnight), years 1970..9999; surrounding blanks are ignored.
// InvalidArgument naming what is wrong otherwise, e.g.
//   expected "YYYY-MM-DD HH:MM:SS", got "2017-02-30" (day out of range)
absl::StatusOr<int64_t> ParseUtcTime(std::string_view text);

// The inverse, "YYYY-MM-DD HH:MM:SS", for messages and reports. ParseUtcTime(FormatUtcTime(s))
// gives s back for every s >= 0 up to the end of year 9999.
std::string FormatUtcTime(int64_t seconds);

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_UTC_TIME_H_
