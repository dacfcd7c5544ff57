// Small builders that make tests read like worked examples:
//
//   Snapshot snapshot = SnapshotBuilder()
//                           .Model("A100")
//                           .Node(MakeNode("n1", "A100", /*gpus=*/8, /*islands=*/{4, 4}))
//                           .Queue("q")
//                           .Job(MakePendingJob("j1", "q", GpuRequest(2000), /*replicas=*/1))
//                           .Build();
//
// Every helper returns a plain value that the test may adjust before handing it on.
#ifndef GPUPOOL_TESTS_TESTING_BUILDERS_H_
#define GPUPOOL_TESTS_TESTING_BUILDERS_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "gpupool/decisions.h"
#include "gpupool/snapshot.h"

namespace gpupool::testing {

inline constexpr int64_t kDefaultGpuMemoryMib = 81920;    // 80 GiB
inline constexpr int64_t kDefaultNodeCpuMilli = 64000;    // 64 cores
inline constexpr int64_t kDefaultNodeMemoryMib = 524288;  // 512 GiB

// A GPU model with `memory_mib` per GPU.
GpuModel MakeModel(std::string name, int64_t memory_mib = kDefaultGpuMemoryMib);

// A ready node with `gpus` healthy GPUs, indices 0..gpus-1. `islands` gives the island sizes in
// index order ({4, 4}: GPUs 0-3 are island 0, GPUs 4-7 island 1) and must add up to `gpus`;
// empty means one island holding every GPU.
Node MakeNode(std::string id, std::string gpu_model, int32_t gpus,
              std::vector<int32_t> islands = {}, int64_t cpu_milli = kDefaultNodeCpuMilli,
              int64_t memory_mib = kDefaultNodeMemoryMib);

// A ready node without GPUs.
Node MakeCpuNode(std::string id, int64_t cpu_milli = kDefaultNodeCpuMilli,
                 int64_t memory_mib = kDefaultNodeMemoryMib);

// A queue with no quotas (no guarantee, no limit).
Queue MakeQueue(std::string id, std::string parent = "");

// A quota with only a limit (guarantee 0, weight 1). `gpu_model` may be "*".
Quota MakeLimit(std::string gpu_model, int64_t limit_milli);

// A replica request: milli-GPUs, then CPU milli-cores, memory MiB and GPU memory MiB per GPU.
ResourceRequest GpuRequest(int64_t gpu_milli, int64_t cpu_milli = 0, int64_t memory_mib = 0,
                           int64_t gpu_memory_mib = 0);

// A task group of `replicas` identical replicas (not elastic).
TaskGroup MakeGroup(std::string name, ResourceRequest request, int32_t replicas = 1);

// A pending job with a single group "main".
Job MakePendingJob(std::string id, std::string queue, ResourceRequest request,
                   int32_t replicas = 1);

// Where one replica sits. gpu_milli 0 means "the group's MilliPerGpu()".
ReplicaPlacement Placement(std::string node, std::vector<int32_t> gpus, int32_t replica = 0,
                           std::string group = "main", int64_t gpu_milli = 0);

// A running job with a single group "main" of placements.size() replicas, started at
// `start_time`.
Job MakeRunningJob(std::string id, std::string queue, ResourceRequest request,
                   std::vector<ReplicaPlacement> placements, int64_t start_time = 0);

// Fluent snapshot assembly. Items are appended in call order.
class SnapshotBuilder {
 public:
  SnapshotBuilder& Now(int64_t now);
  SnapshotBuilder& Levels(std::vector<std::string> levels);
  SnapshotBuilder& Model(GpuModel model);
  SnapshotBuilder& Model(std::string name, int64_t memory_mib = kDefaultGpuMemoryMib);
  SnapshotBuilder& Node(gpupool::Node node);
  SnapshotBuilder& Queue(gpupool::Queue queue);
  SnapshotBuilder& Queue(std::string id, std::string parent = "");
  SnapshotBuilder& Job(gpupool::Job job);
  Snapshot Build() const { return snapshot_; }

 private:
  Snapshot snapshot_;
};

// The decision about `job`, or nullptr when there is none of that kind.
const StartDecision* FindStart(const Decisions& decisions, std::string_view job);
const PendingDecision* FindPending(const Decisions& decisions, std::string_view job);

// Ids of the started jobs, and of the pending jobs, in decision order.
std::vector<std::string> StartedJobs(const Decisions& decisions);
std::vector<std::string> PendingJobs(const Decisions& decisions);

// Every field of the decisions as text, one decision a line, so that two results can be compared
// byte for byte and a difference reads plainly in a test failure.
std::string DecisionsToText(const Decisions& decisions);

// Shuffles, with a seeded in-tree generator, every list of the snapshot whose order carries no
// meaning: models (and their speeds), nodes (their GPUs, path, labels, owner queues), queues
// (their quotas), jobs (their groups and placements). Topology levels and a group's GPU-model
// preference list keep their order. The same seed gives the same shuffle on every platform.
void ShuffleSnapshot(Snapshot& snapshot, uint64_t seed);

// Applies `mutations` seeded random edits to the snapshot, each of the kind a careless host
// makes: out-of-range or extreme quantities, empty, duplicate or unknown ids and references,
// parent cycles, bad enum values, placements on missing GPUs, flipped job states. The result may
// or may not be valid; it is for checking that validation never crashes and that its verdict does
// not depend on list order. Deterministic for a seed.
void MutateSnapshot(Snapshot& snapshot, uint64_t seed, int mutations);

}  // namespace gpupool::testing

namespace gpupool {

// GoogleTest printers (found by argument-dependent lookup), so failures show values.
void PrintTo(const ReplicaPlacement& placement, std::ostream* os);
void PrintTo(const PendingDecision& pending, std::ostream* os);

}  // namespace gpupool

#endif  // GPUPOOL_TESTS_TESTING_BUILDERS_H_
