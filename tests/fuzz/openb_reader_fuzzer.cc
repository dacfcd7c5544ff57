// Fuzzes the openb CSV readers, sim::ParseOpenbNodes() and sim::ParseOpenbPods(), with the same
// bytes (each refuses the other's header at once). Property: never crashes, hangs or trips a
// sanitizer; what they accept has non-negative totals.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_common.h"
#include "gpupool/sim/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gpupool::sim::Cluster> nodes = gpupool::sim::ParseOpenbNodes(text, "nodes.csv");
  if (nodes.ok()) FUZZ_CHECK(nodes->TotalGpuMilli() >= 0, "negative cluster GPU total");
  absl::StatusOr<gpupool::sim::Workload> pods = gpupool::sim::ParseOpenbPods(text, "pods.csv");
  if (pods.ok()) FUZZ_CHECK(pods->TotalGpuMilli() >= 0, "negative workload GPU total");
  return 0;
}
