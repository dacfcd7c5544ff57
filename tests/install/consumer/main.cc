// Reads a snapshot file, schedules it, prints how many jobs start. Also checks that the C API's
// header compiles as C++ and that its library links beside the C++ one.
#include <cstdio>
#include <cstring>

#include "gpupool/c_api.h"
#include "gpupool/gpupool.h"
#include "gpupool/io/json.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  if (std::strcmp(gpupool_version(), gpupool::kVersion) != 0) {
    std::fprintf(stderr, "gpupool_version() %s != kVersion %s\n", gpupool_version(),
                 gpupool::kVersion);
    return 1;
  }
  absl::StatusOr<gpupool::Snapshot> snapshot = gpupool::io::ReadSnapshotFile(argv[1]);
  if (!snapshot.ok()) {
    std::fprintf(stderr, "%s\n", snapshot.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<gpupool::Decisions> decisions = gpupool::Schedule(*snapshot, gpupool::Policy{});
  if (!decisions.ok()) return 1;
  std::printf("gpupool %s decisions: %zu starts, %zu pending\n", gpupool::kVersion,
              decisions->starts.size(), decisions->pending.size());
  return 0;
}
