// Fuzzes io::ParsePolicy(). Properties: never crashes, hangs or trips a sanitizer; a policy it
// accepts survives PolicyToJson -> ParsePolicy -> PolicyToJson byte for byte.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "gpupool/io/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gpupool::Policy> policy = gpupool::io::ParsePolicy(text);
  if (!policy.ok()) return 0;
  const std::string json = gpupool::io::PolicyToJson(*policy);
  absl::StatusOr<gpupool::Policy> reread = gpupool::io::ParsePolicy(json);
  FUZZ_CHECK(reread.ok(), reread.status().ToString());
  FUZZ_CHECK(gpupool::io::PolicyToJson(*reread) == json, "policy JSON round trip");
  return 0;
}
