#include "preempt.h"

#include <algorithm>
#include <limits>

#include "fmt/format.h"

namespace gpupool::internal {
namespace {

// Both factors are non-negative.
int64_t SaturatingProduct(int64_t a, int64_t b) {
  int64_t p = 0;
  if (__builtin_mul_overflow(a, b, &p)) return std::numeric_limits<int64_t>::max();
  return p;
}

int64_t SaturatingSum(int64_t a, int64_t b) {
  return b > std::numeric_limits<int64_t>::max() - a ? std::numeric_limits<int64_t>::max() : a + b;
}

}  // namespace

PreemptionPlanner::PreemptionPlanner(const SnapshotIndex& index, WorkingState& state,
                                     Placer& placer, const Policy& policy, Counters& counters)
    : index_(index),
      state_(state),
      placer_(placer),
      policy_(policy),
      counters_(counters),
      evicted_(index.job_count(), 0),
      running_by_queue_(index.queue_count()) {
  for (int32_t j = 0; j < index.job_count(); ++j) {
    const JobInfo& info = index.job(j);
    if (info.job->state == JobState::kRunning && info.queue != kNone) {
      running_by_queue_[info.queue].push_back(j);
    }
  }
}

int64_t PreemptionPlanner::VictimCost(int32_t v) const {
  const Job& job = *index_.job(v).job;
  const int64_t now = index_.snapshot().now;
  const int64_t start = job.start_time.value_or(now);
  const int64_t since = std::max(start, job.checkpointing.last_checkpoint_time.value_or(start));
  int64_t lost_s = std::max<int64_t>(0, now - since);
  const int64_t grace = policy_.preemption.checkpoint_grace_s;
  if (grace > 0 && job.checkpointing.interval_s > 0 &&
      job.checkpointing.checkpoint_cost_s <= grace) {
    lost_s = std::min(lost_s, job.checkpointing.checkpoint_cost_s);
  }
  const int64_t seconds = SaturatingSum(lost_s, job.checkpointing.restore_time_s);
  return SaturatingProduct(state_.running_milli(v), seconds);
}

bool PreemptionPlanner::BudgetLeft() const {
  const int64_t budget = policy_.budgets.max_preemption_plans;
  return budget <= 0 || counters_.preemption_plans < budget;
}

std::vector<int32_t> PreemptionPlanner::Candidates(int32_t j) const {
  const JobInfo& info = index_.job(j);
  std::vector<int32_t> out;
  if (info.queue == kNone) return out;
  const int64_t now = index_.snapshot().now;
  for (int32_t v : running_by_queue_[info.queue]) {
    const Job& victim = *index_.job(v).job;
    if (evicted_[v] || !victim.preemptible || victim.priority >= info.job->priority) continue;
    if (now - victim.start_time.value_or(now) < victim.min_runtime_s) continue;
    if (state_.running_milli(v) == 0 && info.needs_gpu) continue;
    out.push_back(v);
  }
  return out;
}

std::optional<std::vector<ReplicaPlacement>> PreemptionPlanner::Simulate(
    int32_t j, const std::vector<int32_t>& victims) {
  ++counters_.preemption_plans;
  const WorkingState::Mark mark = state_.Checkpoint();
  for (int32_t v : victims) state_.ReleaseRunningJob(v);
  auto placements = placer_.TryStart(j);
  state_.Rollback(mark);
  return placements;
}

std::optional<PreemptionPlanner::Plan> PreemptionPlanner::TryPreempt(int32_t j) {
  std::vector<int32_t> candidates = Candidates(j);
  if (candidates.empty() || !BudgetLeft()) return std::nullopt;
  std::vector<int64_t> cost(index_.job_count(), 0);
  for (int32_t v : candidates) cost[v] = VictimCost(v);
  // Cheapest first; ties by id (dense index order).
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&cost](int32_t a, int32_t b) { return cost[a] < cost[b]; });

  // Evicting every candidate is the most that can be freed: if that is not enough, stop.
  if (!Simulate(j, candidates)) return std::nullopt;

  std::vector<int32_t> chosen;
  if (static_cast<int>(candidates.size()) <= kExactCandidates) {
    // Every subset, in order of (total cost, number of victims, victims in id order).
    struct Subset {
      int64_t cost;
      int32_t count;
      std::vector<int32_t> victims;  // sorted by index
    };
    std::vector<Subset> subsets;
    const uint32_t n = static_cast<uint32_t>(candidates.size());
    for (uint32_t mask = 1; mask < (1u << n); ++mask) {
      Subset s{0, 0, {}};
      for (uint32_t i = 0; i < n; ++i) {
        if (mask & (1u << i)) {
          s.cost = SaturatingSum(s.cost, cost[candidates[i]]);
          ++s.count;
          s.victims.push_back(candidates[i]);
        }
      }
      std::sort(s.victims.begin(), s.victims.end());
      subsets.push_back(std::move(s));
    }
    std::sort(subsets.begin(), subsets.end(), [](const Subset& a, const Subset& b) {
      if (a.cost != b.cost) return a.cost < b.cost;
      if (a.count != b.count) return a.count < b.count;
      return a.victims < b.victims;
    });
    std::vector<int32_t> all = candidates;
    std::sort(all.begin(), all.end());
    for (const Subset& s : subsets) {
      if (s.victims == all) break;  // known feasible: the fallback below
      if (!BudgetLeft()) {
        counters_.budget_exhausted = true;
        break;
      }
      if (Simulate(j, s.victims)) {
        chosen = s.victims;
        break;
      }
    }
    if (chosen.empty()) chosen = all;
  } else {
    // Greedy: cheapest first until the job fits, then drop what is not needed.
    for (int32_t v : candidates) {
      chosen.push_back(v);
      if (!BudgetLeft()) {
        counters_.budget_exhausted = true;
        chosen = candidates;
        break;
      }
      if (Simulate(j, chosen)) break;
    }
    for (size_t i = chosen.size(); i-- > 0;) {
      if (chosen.size() == 1 || !BudgetLeft()) break;
      std::vector<int32_t> without = chosen;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
      if (Simulate(j, without)) chosen = std::move(without);
    }
    std::sort(chosen.begin(), chosen.end());
  }

  // Evict for real, then place (the same steps the simulation took, so it places).
  const WorkingState::Mark mark = state_.Checkpoint();
  for (int32_t v : chosen) state_.ReleaseRunningJob(v);
  auto placements = placer_.TryStart(j);
  if (!placements) {
    state_.Rollback(mark);
    return std::nullopt;
  }
  Plan plan;
  const Job& job = *index_.job(j).job;
  for (int32_t v : chosen) {
    evicted_[v] = true;
    const Job& victim = *index_.job(v).job;
    PreemptDecision decision;
    decision.job = victim.id;
    decision.for_job = job.id;
    decision.reason =
        fmt::format("job {} (priority {}) of the same queue {} outranks it (priority {})", job.id,
                    job.priority, job.queue, victim.priority);
    decision.lost_milli_gpu_seconds = cost[v];
    plan.preemptions.push_back(std::move(decision));
  }
  counters_.preemptions += static_cast<int64_t>(chosen.size());
  plan.placements = std::move(*placements);
  return plan;
}

}  // namespace gpupool::internal
