// Seeded generators of snapshots, shared by tests and benchmarks.
//
// Everything here is a pure function of its arguments: the same seed gives the same snapshot,
// byte for byte, on every machine and standard library. The randomness comes from an in-tree
// generator (xoshiro256** seeded through splitmix64) and integer arithmetic only; no
// std::*_distribution (whose output differs between standard libraries), no clock, no
// std::random_device.
//
// Two families:
//   - GenerateRandomSnapshot(seed): small, varied, valid snapshots for property tests (a few
//     nodes and jobs exercising every field of the model).
//   - The E3 scenarios of EVALUATION.md (GenerateScenarioS1/S2, or GenerateScenario with
//     hand-set ScenarioOptions): large, realistic pools for benchmarks.
// Every snapshot produced passes ValidateSnapshot.
#ifndef GPUPOOL_TESTING_GENERATOR_H_
#define GPUPOOL_TESTING_GENERATOR_H_

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpupool/policy.h"
#include "gpupool/snapshot.h"

namespace gpupool::testing {

// splitmix64: a 64-bit mixing step. Used to seed Rng and to derive independent sub-seeds.
uint64_t SplitMix64(uint64_t& state);

// xoshiro256**, seeded from one 64-bit seed through splitmix64. Deterministic everywhere.
// Not thread-safe; cheap to copy.
class Rng {
 public:
  explicit Rng(uint64_t seed);

  // The next 64 random bits.
  uint64_t Next();
  // Uniform integer in [lo, hi] (inclusive). Requires lo <= hi.
  int64_t UniformInt(int64_t lo, int64_t hi);
  // True with probability percent / 100 (percent in [0, 100]).
  bool Percent(int64_t percent);
  // Index i with probability weights[i] / sum(weights). Weights are non-negative with a positive
  // sum. Linear in the number of weights; see WeightedPicker for repeated picks.
  size_t PickWeighted(std::span<const int64_t> weights);
  // Fisher-Yates shuffle.
  template <typename T>
  void Shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i > 1; --i) {
      size_t j = static_cast<size_t>(UniformInt(0, static_cast<int64_t>(i) - 1));
      std::swap(items[i - 1], items[j]);
    }
  }

 private:
  uint64_t s_[4];
};

// Repeated weighted picks from a fixed list of weights in O(log n) each.
class WeightedPicker {
 public:
  // Weights non-negative with a positive sum.
  explicit WeightedPicker(std::span<const int64_t> weights);
  size_t Pick(Rng& rng) const;

 private:
  std::vector<int64_t> prefix_;  // prefix_[i] = sum of weights[0..i]
};

// A small valid snapshot for property tests: 1-12 nodes of 1-3 GPU models (1-8 GPUs each, in
// NVLink islands), topology levels {"block", "rack"} (some nodes lacking one; a few snapshots
// declare no level), some nodes cordoned/draining/down or reserved to queues, some unhealthy
// GPUs; a queue forest of 1-6 queues in 2 levels with per-model and "*" quotas and some
// isolation; 0-25 jobs with 1-3 groups, whole-GPU and fractional requests, GPU memory, CPU and
// memory, elastic groups, model preference lists (sometimes naming a declared model that no
// node has, or "MI300X", which no snapshot declares), island scope and gang levels, required or
// preferred. About 40% of the jobs are running, placed by first-fit without over-committing
// anything and honouring node state, owner restrictions, isolation, models and island scope (a
// running job's gang_level is always kPreferred, since first-fit does not keep gangs in one
// domain).
Snapshot GenerateRandomSnapshot(uint64_t seed);

// Adds the operations facts of docs/operations.md to a valid snapshot, from its own seeded
// stream (so GenerateRandomSnapshot's snapshots stay as they are): on some nodes XID and ECC
// error counts on one GPU, a last diagnostic (passed or failed, at or before now), one or two
// maintenance windows (some in progress, some ahead, some over), and on some non-ready nodes an
// engine state cause. The snapshot stays valid.
void AddOperationsFacts(Snapshot& snapshot, uint64_t seed);
// Pool operations on top of a random snapshot (docs/operations.md), from a sub-seed of `seed`
// so that GenerateRandomSnapshot(seed) itself is unchanged: about 20% of the GPU nodes become
// spot nodes, a third of those being reclaimed (half of them with a deadline 0-300 s away);
// about 15% of the jobs are spot_tolerant; the policy gets spot.max_checkpoint_interval_s 0,
// 1800 or 3600 and, on about 60% of the seeds, one or two headroom rules on models the pool
// has (1-4 units of gpus, nodes or islands, min_priority 1-10, restore on half of them). The
// snapshot stays valid.
void AddRandomOperations(uint64_t seed, Snapshot& snapshot, Policy& policy);

// A small multi-queue preemption scenario, for replaying many cycles (preemption_cycles_test):
// 2-6 ready nodes of 2-4 healthy GPUs (one island each) of one or two GPU models, with ample CPU
// and memory; a queue tree of 2-5 queues (flat, or one level of children under 1-2 parents; at
// least two leaves) where the guarantees of the roots add up to at most the pool's capacity and a
// parent's children to at most the parent's (per GPU model, or as one "*" guarantee), over-quota
// weights 0-4, some "*" limits and a few queues that may not borrow; 6-16 jobs, mostly in leaf
// queues, as made by GenerateMultiQueueJob, of which about half run (placed by first-fit, started
// up to 3,000 s before `now`, with checkpoint times when they checkpoint). No isolation, owner
// restrictions, topology levels, elastic groups or faults: only what preemption looks at varies.
Snapshot GenerateMultiQueueScenario(uint64_t seed);

// A pending job for a snapshot of GenerateMultiQueueScenario, submitted at snapshot.now: in a leaf
// queue (sometimes an inner one), priority 0-4, a gang of one group of 1-3 replicas of 500, 1000
// or 2000 milli-GPUs (sometimes 4000, sometimes a second group), sometimes restricted to one GPU
// model; 75% preemptible, 30% with a minimum runtime of 300-1200 s, half of them checkpointing
// (interval, checkpoint cost and restore time).
Job GenerateMultiQueueJob(Rng& rng, const Snapshot& snapshot, std::string id);

// The knobs of the large E3 scenarios. Defaults are those of S1 at scale 1.
struct ScenarioOptions {
  uint64_t seed = 1;
  // Nodes of 8 GPUs, in racks of `nodes_per_rack`, racks in blocks of `racks_per_block`.
  int64_t nodes = 5000;
  int32_t nodes_per_rack = 32;
  int32_t racks_per_block = 8;
  // Percentage of racks that are NVL72-style: GB200 nodes whose first nodes are grouped into
  // `nvlink_domain` domains of 9 nodes (72 GPUs). 0: no nvlink_domain level is declared.
  int32_t nvlink_rack_percent = 0;
  // false: every GPU is an H100-80GB. true: racks that are not NVL72 are H100-80GB or A100-80GB.
  bool mixed_models = false;
  // Queues: 2 levels (one root, the rest leaves) or 3 (orgs > teams > projects). Guarantees per
  // GPU model: 80% of the pool's healthy capacity is split among the roots by weight, each parent
  // passes 90% of its own down to its children (to half of them at the third level); 40% of the
  // queues have a "*" limit above their guarantees.
  int64_t queues = 5;
  int32_t queue_levels = 2;
  // Percentage of healthy GPUs busy with running jobs (0: an empty pool).
  int32_t busy_percent = 0;
  // Pending jobs, and the percentage of them that are multi-node gangs (2-16 nodes of 8 GPUs,
  // gang_level rack or nvlink_domain required, or block preferred; some elastic, some with a
  // CPU-only launcher group). The rest are single replicas of 1/2/4/8 GPUs or 250/500 milli.
  int64_t pending_jobs = 50000;
  int32_t gang_percent = 0;
  // Faults and restrictions: some unhealthy GPUs; cordoned, draining and down nodes; nodes
  // reserved to an org; isolated queues.
  bool faults = false;
};

// EVALUATION.md E3 S1 (burst): 5,000 nodes x 8 H100-80GB (one island of 8, or a quarter of the
// nodes two islands of 4), racks of 32, 50,000 pending jobs (1/2/4/8 GPUs, 250 and 500 milli)
// in 4 leaf queues, empty pool. `scale` multiplies nodes and jobs (0.1: 500 nodes, 5,000 jobs).
ScenarioOptions ScenarioS1Options(uint64_t seed, double scale = 1.0);
Snapshot GenerateScenarioS1(uint64_t seed, double scale = 1.0);

// EVALUATION.md E3 S2 (headline): 10,000 nodes x 8 GPUs of three models, racks of 32, NVL72-style
// nvlink_domain on 20% of racks, 1,000 queues in 3 levels with guarantees and limits, 60% of
// GPUs busy with running jobs, 100,000 pending jobs of which 5% are multi-node gangs, with
// faults. `scale` multiplies nodes, queues and jobs.
ScenarioOptions ScenarioS2Options(uint64_t seed, double scale = 1.0);
Snapshot GenerateScenarioS2(uint64_t seed, double scale = 1.0);

// The general scenario generator behind S1 and S2.
Snapshot GenerateScenario(const ScenarioOptions& options);

}  // namespace gpupool::testing

#endif  // GPUPOOL_TESTING_GENERATOR_H_
