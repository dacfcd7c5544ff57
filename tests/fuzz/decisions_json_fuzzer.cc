// Fuzzes io::ParseDecisions(). Properties: never crashes, hangs or trips a sanitizer; decisions it
// accepts survive DecisionsToJson -> ParseDecisions -> DecisionsToJson byte for byte.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "gpupool/io/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gpupool::Decisions> decisions = gpupool::io::ParseDecisions(text);
  if (!decisions.ok()) return 0;
  const std::string json = gpupool::io::DecisionsToJson(*decisions);
  absl::StatusOr<gpupool::Decisions> reread = gpupool::io::ParseDecisions(json);
  FUZZ_CHECK(reread.ok(), reread.status().ToString());
  FUZZ_CHECK(gpupool::io::DecisionsToJson(*reread) == json, "decisions JSON round trip");
  return 0;
}
