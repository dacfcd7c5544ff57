// The reader of the Microsoft Philly trace in its CSV form (docs/replay.md, "The trace"), the
// input of the job-level replay (gpupool/sim/replay.h). Deterministic: no floating point, no
// locale, no clock.
#ifndef GPUPOOL_SIM_PHILLY_H_
#define GPUPOOL_SIM_PHILLY_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/sim/trace_job.h"

namespace gpupool::sim {

// Parses the Philly CSV (`timestamp,duration,num_gpus,gpu_time,cluster`, with that header line)
// held in `text`; `file_name` only names the file in messages. Blank lines are skipped. Jobs come
// back in file order. Errors are InvalidArgument of the form
//   philly.csv:17: num_gpus: expected an integer, got "x"
// Timestamps are UTC (gpupool/sim/utc_time.h). Durations are decimal numbers of seconds, rounded
// half up to whole seconds from their decimal digits (no floating point). num_gpus must be
// positive, duration non-negative; gpu_time is checked to be a number but not used.
absl::StatusOr<std::vector<TraceJob>> ParsePhillyCsv(std::string_view text,
                                                     std::string_view file_name);

// Reads and parses the file at `path`, naming it by its base name in messages (NotFound when it
// cannot be opened).
absl::StatusOr<std::vector<TraceJob>> ReadPhillyCsv(const std::string& path);

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_PHILLY_H_
