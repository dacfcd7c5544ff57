// Reads a snapshot file, schedules it, prints how many jobs start.
#include <cstdio>

#include "gpupool/gpupool.h"
#include "gpupool/io/json.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
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
