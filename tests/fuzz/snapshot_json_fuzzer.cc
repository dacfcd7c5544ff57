// Fuzzes io::ParseSnapshot() (and ValidateSnapshot() on what it accepts). Properties: never
// crashes, hangs or trips a sanitizer; a snapshot it accepts survives SnapshotToJson ->
// ParseSnapshot -> SnapshotToJson byte for byte (json.h: "writing then reading gives back an
// equal value").
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "gpupool/io/json.h"
#include "gpupool/schedule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gpupool::Snapshot> snapshot = gpupool::io::ParseSnapshot(text);
  if (!snapshot.ok()) return 0;
  const std::string json = gpupool::io::SnapshotToJson(*snapshot);
  absl::StatusOr<gpupool::Snapshot> reread = gpupool::io::ParseSnapshot(json);
  FUZZ_CHECK(reread.ok(), reread.status().ToString());
  FUZZ_CHECK(gpupool::io::SnapshotToJson(*reread) == json, "snapshot JSON round trip");
  (void)gpupool::ValidateSnapshot(*snapshot);
  return 0;
}
