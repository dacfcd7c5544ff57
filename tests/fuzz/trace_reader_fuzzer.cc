// Fuzzes gpupool's own trace reader, sim::ParseTrace(). Properties: never crashes, hangs or trips
// a sanitizer; a trace it accepts survives WriteTrace -> ParseTrace -> WriteTrace byte for byte
// (workload.h: "ParseTrace(WriteTrace(t)) gives t back").
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "gpupool/sim/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gpupool::sim::Trace> trace = gpupool::sim::ParseTrace(text, "fuzz.trace");
  if (!trace.ok()) return 0;
  const std::string written = gpupool::sim::WriteTrace(*trace);
  absl::StatusOr<gpupool::sim::Trace> reread = gpupool::sim::ParseTrace(written, "fuzz.trace");
  FUZZ_CHECK(reread.ok(), reread.status().ToString());
  FUZZ_CHECK(gpupool::sim::WriteTrace(*reread) == written, "trace round trip");
  return 0;
}
