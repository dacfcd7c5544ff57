// The counterfactual of a pending job (see counterfactual.h for what it considers and why).
#include "counterfactual.h"

#include <algorithm>
#include <string>

#include "fmt/format.h"
#include "internal/shortest_prefix.h"

namespace gpupool::internal {

Counterfactual::Counterfactual(const SnapshotIndex& index, const WorkingState& state,
                               const VictimRules& rules, const Policy& policy,
                               const Counters& counters)
    : index_(index), state_(state), rules_(rules), policy_(policy), counters_(counters) {}

const std::vector<int32_t>& Counterfactual::Pool() {
  if (pool_built_) return pool_;
  pool_built_ = true;
  const int64_t now = index_.snapshot().now;
  for (int32_t v = 0; v < index_.job_count(); ++v) {
    const JobInfo& info = index_.job(v);
    const Job& victim = *info.job;
    if (victim.state != JobState::kRunning || info.queue == kNone || !victim.preemptible) continue;
    if (now - victim.start_time.value_or(now) < victim.min_runtime_s) continue;
    pool_.push_back(v);
  }
  std::sort(pool_.begin(), pool_.end(), [this](int32_t a, int32_t b) {
    const int64_t ca = rules_.RunningCost(a), cb = rules_.RunningCost(b);
    return ca != cb ? ca < cb : a < b;
  });
  return pool_;
}

void Counterfactual::Explain(int32_t j, PendingDecision& pending, TryVictims simulate) {
  const int64_t budget = policy_.budgets.max_counterfactual_plans;
  if (budget <= 0 || counters_.counterfactual_plans >= budget) return;
  const JobInfo& info = index_.job(j);
  // The cheapest usable ones, at most kMostVictims, so the search stays small.
  std::vector<int32_t> sorted;
  for (int32_t v : Pool()) {
    if (sorted.size() == kMostVictims) break;
    if (rules_.taken(v) || (state_.running_milli(v) == 0 && info.needs_gpu)) continue;
    sorted.push_back(v);
  }
  if (sorted.empty()) return;
  // The shortest prefix that lets the job start, by binary search (fitting is monotone in
  // practice: evicting more never takes room away).
  auto fits = [&](size_t k) {
    return simulate(std::vector<int32_t>(sorted.begin(), sorted.begin() + k)).has_value();
  };
  if (!fits(sorted.size())) return;
  const size_t hi = ShortestWorkingPrefix(sorted.size(), fits,
                                          [&] { return counters_.counterfactual_plans < budget; });
  std::vector<int32_t> victims(sorted.begin(), sorted.begin() + hi);
  std::sort(victims.begin(), victims.end());

  int64_t lost = 0;
  std::string why;
  // Every victim the job takes back once it has waited long enough is named too, whichever
  // victim the first reason is about: the wait ends by itself.
  std::string take_back_later;
  for (int32_t v : victims) {
    pending.would_preempt.push_back(index_.job(v).job->id);
    lost += rules_.RunningCost(v);
    if (!policy_.preemption.enabled) continue;
    const std::string kept = rules_.WhyKept(j, v);
    if (!kept.empty() && why.empty()) why = kept;
    if (const std::string later = rules_.TakeBackLater(j, v); !later.empty()) {
      take_back_later += "; " + later;
    }
  }
  why += take_back_later;
  if (!policy_.preemption.enabled) {
    why = "preemption is off in this policy";
  } else if (why.empty()) {
    why = counters_.budget_exhausted ? "the preemption budget ran out"
                                     : "no plan the rules allow was found";
  }
  std::string names;
  for (const std::string& name : pending.would_preempt) {
    names += names.empty() ? name : ", " + name;
  }
  pending.counterfactual = fmt::format(
      "would start now if {} were preempted (losing {} milli-GPU-seconds of work), but {}", names,
      lost, why);
}

}  // namespace gpupool::internal
