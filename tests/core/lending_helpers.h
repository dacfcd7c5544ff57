// Helpers of the tests of queues that do not lend (lending_test.cc, lending_nodes_test.cc): their
// builders, and the rule written again from docs/fair-share.md (section 5) for the seeded oracle
// tests: a random queue tree, each queue's hold, and the queues whose holds bind a job.
#ifndef GPUPOOL_TESTS_CORE_LENDING_HELPERS_H_
#define GPUPOOL_TESTS_CORE_LENDING_HELPERS_H_

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/core/schedule_helpers.h"

namespace gpupool::schedule_testing {

// A queue guaranteed `guaranteed_milli` of `model` that does not lend it.
inline Queue Lender(std::string id, int64_t guaranteed_milli, std::string model = "A100",
                    std::string parent = "") {
  Queue queue = MakeQueue(std::move(id), std::move(parent));
  Quota quota;
  quota.gpu_model = std::move(model);
  quota.guaranteed_milli = guaranteed_milli;
  queue.quotas.push_back(quota);
  queue.can_lend = false;
  return queue;
}

// A running job of one replica on `gpus` of `node`.
inline Job Running(std::string id, std::string queue, std::string node, std::vector<int32_t> gpus) {
  const int64_t milli = static_cast<int64_t>(gpus.size()) * kMilliPerGpu;
  return MakeRunningJob(std::move(id), std::move(queue), GpuRequest(milli),
                        {Placement(std::move(node), std::move(gpus))});
}

// Queues q0..q{n-1}, each a root or a child of an earlier one, with an A100 guarantee of 0-4
// GPUs and can_lend false half the time.
struct RandomLenders {
  std::vector<int> parent;
  std::vector<int64_t> guarantee;
  std::vector<bool> lends;

  // Draws the tree (parent, guarantee, lending, in that order per queue) and adds its queues.
  RandomLenders(int queues, std::mt19937& rng, SnapshotBuilder& builder)
      : parent(queues, -1), guarantee(queues, 0), lends(queues, true) {
    auto draw = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int q = 0; q < queues; ++q) {
      parent[q] = q == 0 ? -1 : draw(-1, q - 1);
      guarantee[q] = draw(0, 4) * int64_t{1000};
      lends[q] = draw(0, 1) == 1;
      Queue queue = MakeQueue(Name(q), parent[q] < 0 ? "" : Name(parent[q]));
      if (guarantee[q] > 0) {
        Quota quota;
        quota.gpu_model = "A100";
        quota.guaranteed_milli = guarantee[q];
        queue.quotas.push_back(quota);
      }
      queue.can_lend = lends[q];
      builder.Queue(queue);
    }
  }

  static std::string Name(int q) { return "q" + std::to_string(q); }
  int size() const { return static_cast<int>(parent.size()); }

  // Is q in ancestor's subtree?
  bool Inside(int q, int ancestor) const {
    for (int up = q; up >= 0; up = parent[up]) {
      if (up == ancestor) return true;
    }
    return false;
  }
  int NearestLenderAbove(int q) const {
    for (int up = parent[q]; up >= 0; up = parent[up]) {
      if (!lends[up]) return up;
    }
    return -1;
  }

  // hold(Q) = max(guarantee - subtree usage, the holds of the nearest queues below Q that do not
  // lend, summed), for the queues that do not lend (0 for the others); `usage_own` is what each
  // queue's own jobs use.
  std::vector<int64_t> Holds(const std::vector<int64_t>& usage_own) const {
    const int n = size();
    std::vector<int64_t> subtree_usage(n, 0), hold(n, 0);
    for (int q = 0; q < n; ++q) {
      for (int r = 0; r < n; ++r) {
        if (Inside(r, q)) subtree_usage[q] += usage_own[r];
      }
    }
    // Children have higher indices than parents: from the last queue back.
    for (int q = n - 1; q >= 0; --q) {
      if (lends[q]) continue;
      int64_t below = 0;
      for (int r = q + 1; r < n; ++r) {
        if (!lends[r] && NearestLenderAbove(r) == q) below += hold[r];
      }
      hold[q] = std::max<int64_t>(std::max<int64_t>(0, guarantee[q] - subtree_usage[q]), below);
    }
    return hold;
  }

  // The queues whose holds bind a job of `job_queue`, each counted once: they do not lend, hold
  // something, do not contain the job's queue, and their nearest ancestor that does not lend (if
  // any) contains it.
  std::vector<int> Holders(int job_queue, const std::vector<int64_t>& hold) const {
    std::vector<int> holders;
    for (int q = 0; q < size(); ++q) {
      if (lends[q] || hold[q] == 0 || Inside(job_queue, q)) continue;
      const int up = NearestLenderAbove(q);
      if (up >= 0 && !Inside(job_queue, up)) continue;
      holders.push_back(q);
    }
    return holders;
  }
};

}  // namespace gpupool::schedule_testing

#endif  // GPUPOOL_TESTS_CORE_LENDING_HELPERS_H_
