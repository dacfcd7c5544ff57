// Fuzzes the Philly CSV reader, sim::ParsePhillyCsv(), and the time parser it uses,
// sim::ParseUtcTime() (on the first line). Properties: never crashes, hangs or trips a sanitizer;
// an accepted time formats back to a time that parses to the same value.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "gpupool/sim/philly.h"
#include "gpupool/sim/utc_time.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gpupool::sim::ParsePhillyCsv(text, "philly.csv");
  const std::string_view first_line = text.substr(0, text.find('\n'));
  absl::StatusOr<int64_t> time = gpupool::sim::ParseUtcTime(first_line);
  if (time.ok()) {
    const std::string formatted = gpupool::sim::FormatUtcTime(*time);
    absl::StatusOr<int64_t> again = gpupool::sim::ParseUtcTime(formatted);
    FUZZ_CHECK(again.ok() && *again == *time, formatted);
  }
  return 0;
}
