#include "consolidate.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "fmt/format.h"
#include "internal/check.h"
#include "internal/placements.h"
#include "internal/saturating.h"
#include "internal/shortest_prefix.h"
#include "order.h"

namespace gpupool::internal {

Consolidator::Consolidator(const SnapshotIndex& index, WorkingState& state, Placer& placer,
                           const Entitlements& entitlements, const Policy& policy,
                           Counters& counters)
    : index_(index),
      state_(state),
      placer_(placer),
      policy_(policy),
      counters_(counters),
      rules_(index, state, entitlements, policy),
      jobs_on_node_(index.node_count()),
      placed_now_(index.job_count(), 0),
      placed_(index.job_count()),
      taken_(index.job_count(), 0) {
  for (int32_t j = 0; j < index.job_count(); ++j) {
    for (const RunningPlacement& p : index.job(j).placements) {
      std::vector<int32_t>& on = jobs_on_node_[p.node];
      if (on.empty() || on.back() != j) on.push_back(j);
    }
  }
}

void Consolidator::NoteStart(int32_t j, const std::vector<ReplicaPlacement>& placements) {
  placed_now_[j] = 1;
  placed_[j] = placements;
  for (const ReplicaPlacement& p : placements) {
    const int32_t n = index_.FindNode(p.node);
    if (n == kNone) continue;
    std::vector<int32_t>& on = jobs_on_node_[n];
    if (std::find(on.begin(), on.end(), j) == on.end()) on.push_back(j);
  }
}

bool Consolidator::BudgetLeft() {
  const int64_t budget = policy_.consolidation.max_plans;
  if (budget == 0 || counters_.consolidation_plans < budget) return true;
  counters_.budget_exhausted = true;
  return false;
}

int64_t Consolidator::ExpectedEnd(int32_t j) const {
  const Job& job = *index_.job(j).job;
  const std::optional<int64_t> work = RemainingWork(job);
  if (!work) return kNever;
  const int64_t remaining = *work;
  const int64_t now = index_.snapshot().now;
  return remaining > kNever - now ? kNever : now + remaining;
}

std::optional<int64_t> Consolidator::ExpectedWait(int32_t j) {
  const int64_t now = index_.snapshot().now;
  struct Rank {
    int64_t end;
    int64_t busy;
    int32_t node;
  };
  std::vector<Rank> ranks;
  for (int32_t n = 0; n < index_.node_count(); ++n) {
    if (state_.node_held(n) || !state_.node_open(n)) continue;
    int64_t end = now;
    for (int32_t v : jobs_on_node_[n]) {
      if (!placed_now_[v] && state_.released(v)) continue;  // evicted in this cycle
      end = std::max(end, ExpectedEnd(v));
    }
    const int64_t busy = int64_t{index_.healthy_gpus(n)} * kMilliPerGpu - state_.node_free_gpu(n);
    ranks.push_back(Rank{end, busy, n});
  }
  std::sort(ranks.begin(), ranks.end(), [](const Rank& a, const Rank& b) {
    if (a.end != b.end) return a.end < b.end;
    if (a.busy != b.busy) return a.busy < b.busy;
    return a.node < b.node;
  });
  // Empties the first k ranked nodes (the jobs there go whole, wherever they run, whether the
  // snapshot has them running or this cycle placed them, so that the next cycle, where they all
  // run, finds the same wait), tries the gang, and rolls back. One plan. Does the gang place?
  std::vector<uint8_t> emptied(index_.job_count(), 0);
  auto places_with = [&](size_t k) {
    ++counters_.consolidation_plans;
    const WorkingState::Mark mark = state_.Checkpoint();
    std::vector<int32_t> freed;
    for (size_t i = 0; i < k; ++i) {
      for (int32_t v : jobs_on_node_[ranks[i].node]) {
        if (!placed_now_[v]) {
          state_.ReleaseRunningJob(v);
        } else if (!emptied[v]) {
          emptied[v] = 1;
          freed.push_back(v);
          state_.DeallocatePlacements(v, placed_[v]);
        }
      }
    }
    for (int32_t v : freed) emptied[v] = 0;
    const bool placed = placer_.TryStart(j).has_value();
    state_.Rollback(mark);
    return placed;
  };
  if (!BudgetLeft()) return std::nullopt;
  if (!places_with(ranks.size())) return std::nullopt;
  const size_t hi =
      ShortestWorkingPrefix(ranks.size(), places_with, [this] { return BudgetLeft(); });
  // Not before the last node of the shortest prefix empties, as stage 7's expected start, even
  // where the placement uses other nodes: the room it takes there may be what a job of the
  // prefix, gone whole, frees (a gang spanning nodes), and without that node the gang does not
  // start. (Counting only the prefix's nodes the placement used took such a wait for 0: no move
  // ever paid.)
  int64_t expected = now;
  for (size_t i = 0; i < hi; ++i) expected = std::max(expected, ranks[i].end);
  if (expected == kNever) return std::nullopt;
  return expected - now;
}

bool Consolidator::Movable(int32_t v, const std::vector<uint8_t>& model_ok) const {
  const JobInfo& info = index_.job(v);
  const Job& job = *info.job;
  if (job.state != JobState::kRunning || taken_[v] || placed_now_[v] || state_.released(v)) {
    return false;
  }
  if (job.checkpointing.interval_s <= 0 || !(rules_.MayEvict(v) || rules_.MayEvictRestored(v))) {
    return false;
  }
  if (!job.start_time.has_value() || *job.start_time >= index_.snapshot().now) return false;
  for (const TaskGroup& group : job.groups) {
    if (group.MinReplicas() != group.replicas) return false;
  }
  if (rules_.Milli(v) <= 0) return false;
  for (const RunningPlacement& p : info.placements) {
    const int32_t m = index_.node_model(p.node);
    if (m != kNone && model_ok[m] && !p.gpus.empty()) return true;
  }
  return false;
}

bool Consolidator::SamePlace(int32_t v, const std::vector<ReplicaPlacement>& placements) const {
  const Job& job = *index_.job(v).job;
  for (const ReplicaPlacement& p : placements) {
    const auto old = std::find_if(
        job.placements.begin(), job.placements.end(),
        [&p](const ReplicaPlacement& o) { return o.group == p.group && o.replica == p.replica; });
    if (old == job.placements.end() || old->node != p.node) return false;
    std::vector<int32_t> a = old->gpus, b = p.gpus;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) return false;
  }
  return true;
}

std::optional<Consolidator::Outcome> Consolidator::Apply(int32_t j,
                                                         const std::vector<int32_t>& movers) {
  ++counters_.consolidation_plans;
  const WorkingState::Mark mark = state_.Checkpoint();
  for (int32_t v : movers) state_.ReleaseRunningJob(v);
  Outcome outcome;
  auto gang = placer_.TryStart(j);
  if (gang) {
    outcome.gang = std::move(*gang);
    for (int32_t v : movers) {
      auto moved = placer_.TryStart(v);
      if (!moved || SamePlace(v, *moved)) break;
      outcome.moved.push_back(std::move(*moved));
    }
    if (outcome.moved.size() == movers.size()) return outcome;
  }
  state_.Rollback(mark);
  ++counters_.transactions_rolled_back;
  return std::nullopt;
}

std::optional<Consolidator::Plan> Consolidator::TryConsolidate(int32_t j) {
  refusal_.clear();
  const JobInfo& info = index_.job(j);
  if (!info.needs_gpu) return std::nullopt;
  const int64_t max_plans = policy_.consolidation.max_plans;
  if (!BudgetLeft()) {
    refusal_ = fmt::format("; consolidation was not tried: consolidation.max_plans ({}) is spent",
                           max_plans);
    return std::nullopt;
  }
  std::vector<uint8_t> model_ok(index_.model_count(), info.models.empty() ? 1 : 0);
  for (int32_t m : info.models) model_ok[m] = 1;

  // Candidates first (cheap), so that a gang nothing could move for costs no probe.
  std::vector<int32_t> candidates;
  for (int32_t v = 0; v < index_.job_count(); ++v) {
    if (v != j && Movable(v, model_ok)) candidates.push_back(v);
  }
  if (candidates.empty()) {
    refusal_ =
        "; consolidation found no running job that may move (preemptible, checkpointing, past its "
        "minimum runtime and the victim limits, holding GPUs of a model this job accepts, not "
        "elastic, on no node held for a reservation)";
    return std::nullopt;
  }
  std::sort(candidates.begin(), candidates.end(), [this](int32_t a, int32_t b) {
    const int64_t pa = rules_.VictimCost(a), pb = rules_.VictimCost(b);
    if (pa != pb) return pa < pb;
    return a < b;
  });

  const int64_t plans_before = counters_.consolidation_plans;
  const std::optional<int64_t> wait = ExpectedWait(j);
  if (!wait || *wait <= 0) {
    refusal_ = wait ? "; consolidation moves nothing for it: its expected wait is 0 s, so no move "
                      "gains anything"
                    : "; consolidation moves nothing for it: its expected wait is unknown (work in "
                      "the way has no runtime_estimate_s, or emptying every node would not start "
                      "it)";
    return std::nullopt;
  }
  const int64_t gain = SaturatingMultiply(info.gang_milli, *wait);
  const int64_t factor = policy_.consolidation.gain_factor;
  const std::string gain_text = fmt::format(
      "the gain {} ({} milli-GPUs x an expected wait of {} s)", gain, info.gang_milli, *wait);

  std::vector<int32_t> best;
  int64_t best_price = std::numeric_limits<int64_t>::max();
  auto worth = [&](int64_t price) {
    return price < best_price && SaturatingMultiply(factor, price) < gain;
  };
  bool out_of_budget = false;
  std::vector<int32_t> chosen;
  // Sets of exactly `size` candidates extending `chosen` with indices from `from` on, in
  // lexicographic order; prices ascend along the list, so once a set is not worth trying no
  // later one at this depth is either.
  auto search = [&](auto& self, size_t from, size_t size, int64_t price) -> void {
    for (size_t i = from; i < candidates.size() && !out_of_budget; ++i) {
      const int64_t with = SaturatingAdd(price, rules_.VictimCost(candidates[i]));
      if (!worth(with)) break;
      chosen.push_back(candidates[i]);
      if (chosen.size() < size) {
        self(self, i + 1, size, with);
      } else if (!BudgetLeft()) {
        out_of_budget = true;
      } else {
        std::vector<int32_t> movers = chosen;
        std::sort(movers.begin(), movers.end());
        const WorkingState::Mark mark = state_.Checkpoint();
        if (Apply(j, movers)) {
          state_.Rollback(mark);
          best = std::move(movers);
          best_price = with;
        }
      }
      chosen.pop_back();
    }
  };
  const size_t most = static_cast<size_t>(
      std::min<int64_t>(policy_.consolidation.max_moves, static_cast<int64_t>(candidates.size())));
  for (size_t size = 1; size <= most && !out_of_budget; ++size) search(search, 0, size, 0);
  if (best.empty()) {
    const int32_t cheapest = candidates.front();
    const int64_t price = rules_.VictimCost(cheapest);
    const int64_t sets = counters_.consolidation_plans - plans_before;
    if (out_of_budget) {
      refusal_ = fmt::format(
          "; consolidation.max_plans ({}) ran out before consolidation found a move set that "
          "starts it",
          max_plans);
    } else if (SaturatingMultiply(factor, price) >= gain) {
      refusal_ = fmt::format(
          "; consolidation moves nothing for it: {} is not above gain_factor {} x the price of "
          "the cheapest move ({}, {} milli-GPU-seconds)",
          gain_text, factor, index_.job(cheapest).job->id, price);
    } else {
      refusal_ = fmt::format(
          "; consolidation moves nothing for it: no set of at most {} of its {} movable jobs "
          "whose price times gain_factor {} is below {} lets it start ({} plans tried, with the "
          "probes of its wait)",
          most, candidates.size(), factor, gain_text, sets);
    }
    return std::nullopt;
  }

  std::optional<Outcome> outcome = Apply(j, best);
  GPUPOOL_CHECK(outcome.has_value());
  Plan plan;
  plan.placements = std::move(outcome->gang);
  for (size_t i = 0; i < best.size(); ++i) {
    const int32_t v = best[i];
    const Job& job = *index_.job(v).job;
    MigrateDecision migrate;
    migrate.job = job.id;
    migrate.from = PlacementsWithShares(job);
    std::sort(migrate.from.begin(), migrate.from.end(),
              [](const ReplicaPlacement& a, const ReplicaPlacement& b) {
                if (a.group != b.group) return a.group < b.group;
                return a.replica < b.replica;
              });
    migrate.to = std::move(outcome->moved[i]);
    migrate.for_job = info.job->id;
    migrate.lost_milli_gpu_seconds = rules_.VictimCost(v);
    for (const RunningPlacement& p : index_.job(v).placements) std::erase(jobs_on_node_[p.node], v);
    NoteStart(v, migrate.to);
    taken_[v] = 1;
    ++counters_.migrations;
    plan.migrations.push_back(std::move(migrate));
  }
  return plan;
}

}  // namespace gpupool::internal
