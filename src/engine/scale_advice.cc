// Stage 10: scale advice (docs/operations.md, "Scale advice"; Policy::scale).
//
// Rationale. Whether a node would let a job start depends on everything placement does: the job
// order, the strategy's choices, gangs and topology, isolation, queue limits. A model of capacity
// beside the engine would drift from it, and the advice would then promise starts the next cycle
// does not make. So the advice is computed by running the real cycle (RunCycle()) on copies of
// the snapshot: with candidate template nodes added for `add`, with idle nodes removed for
// `release`. Every claim the advice makes is a cycle that was run.
//
// add. The jobs it covers: pending jobs whose reason is not queue-limit or budget-exhausted (a
// node cannot lift a limit or a budget) and that start when every template is added at its
// ceiling, min(max_count, the replicas of those jobs together): more nodes than replicas cannot
// help. Sufficient mixes are found in three steps, all on simulated cycles:
//   1. the ceiling itself, which is sufficient by the definition of the covered jobs;
//   2. greedy descent: templates from the most expensive, each one binary-searched down to the
//      fewest nodes that stay sufficient, then single nodes removed while the mix stays
//      sufficient, until no template can lose one (so the mix is minimal per template);
//   3. exact search: every mix under the ceiling cheaper than that one (by price per hour, then
//      node count, then counts in template-name order), in that order, until one is sufficient.
//      When the search ends, the result is the cheapest sufficient mix (`cheapest`), and it is
//      minimal per template because one node fewer is a cheaper mix that was found insufficient.
//      It runs only when the mixes under the ceiling number at most kMaxEnumerated.
// Placement is not monotone in capacity (a greedy order can do worse with more room), so no step
// assumes that a mix above a sufficient one is sufficient: each answer is a simulation.
//
// Node ids. Adding nodes changes the topology order, and placement breaks ties in that order. A
// template's simulated nodes are named <largest node id of the snapshot> NUL <template name> NUL
// <10-digit number>: after every existing id, and grouped by template in name order. The docs
// promise sufficiency for any host ids with those two properties; nodes of one template are
// identical, so their order among themselves does not matter.
//
// release. Ready nodes with no running work, not held by a reservation of this cycle (nor by
// headroom, see KeptForHeadroom()), in reverse topology order (first-fit and every tie-break fill
// the front, so the idle ones are at the back). A set is taken when the cycle with it removed (and
// the advised nodes added) starts, preempts, resizes and reserves for exactly the same jobs.
// Candidates are tried in halves (delta debugging): the whole list first, then each half, down to
// single nodes, each time on top of the nodes already taken.
//
// Work. Each simulation is one cycle; policy.scale->max_simulations bounds their number. When it
// is spent, `add` is the best sufficient mix found so far (the ceiling at worst) and `release`
// what was taken so far; budget_exhausted says so.
#include "scale_advice.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cycle.h"
#include "fmt/format.h"
#include "internal/saturating.h"
#include "snapshot_index.h"

namespace gpupool::internal {
namespace {

// Mixes under the ceiling the exact search may list.
constexpr int64_t kMaxEnumerated = int64_t{1} << 16;

// What a cycle did, to compare two cycles: the jobs of each kind of decision, in id order.
struct Outcome {
  std::vector<std::string> started, preempted, resized, reserved;
  friend bool operator==(const Outcome&, const Outcome&) = default;
};

Outcome OutcomeOf(const Decisions& d) {
  Outcome o;
  for (const StartDecision& s : d.starts) o.started.push_back(s.job);
  for (const PreemptDecision& p : d.preemptions) o.preempted.push_back(p.job);
  for (const ResizeDecision& r : d.resizes) o.resized.push_back(r.job);
  for (const ReserveDecision& r : d.reservations) o.reserved.push_back(r.job);
  for (auto* list : {&o.started, &o.preempted, &o.resized, &o.reserved}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  return o;
}

// A node that a headroom rule counts (Policy::headroom: a ready, non-spot node, not being
// reclaimed, of a rule's GPU model) is kept for urgent work: it is never released, even when no
// pending job needs it now. Conservative: all such nodes are kept, not only as many as the rules'
// counts need.
bool KeptForHeadroom(const Policy& policy, const Node& node) {
  if (node.state != NodeState::kReady || node.spot || node.reclaiming) return false;
  return std::any_of(
      policy.headroom.begin(), policy.headroom.end(),
      [&node](const HeadroomRule& rule) { return rule.gpu_model == node.gpu_model; });
}

// Runs cycles on copies of the snapshot, counting them against the budget.
class Simulator {
 public:
  Simulator(const Snapshot& snapshot, const Policy& policy,
            std::vector<const NodeTemplate*> templates)
      : snapshot_(snapshot), policy_(policy), templates_(std::move(templates)) {
    // The simulated cycles need no scale advice and no counterfactual explanations (which
    // explain pending jobs and change no decision).
    policy_.scale.reset();
    policy_.budgets.max_counterfactual_plans = 0;
    for (const Node& node : snapshot.nodes) largest_id_ = std::max(largest_id_, node.id);
    budget_ = policy.scale->max_simulations;
  }

  int64_t used() const { return used_; }
  bool exhausted() const { return exhausted_; }

  // The cycle with counts[t] nodes of template t added and the nodes `removed` taken out;
  // nullopt once the budget is spent.
  std::optional<Decisions> Run(const std::vector<int32_t>& counts,
                               const std::set<std::string>& removed) {
    if (budget_ != 0 && used_ >= budget_) {
      exhausted_ = true;
      return std::nullopt;
    }
    ++used_;
    Snapshot copy = snapshot_;
    if (!removed.empty()) {
      std::erase_if(copy.nodes, [&](const Node& n) { return removed.count(n.id) != 0; });
    }
    for (size_t t = 0; t < templates_.size(); ++t) {
      for (int32_t k = 1; k <= counts[t]; ++k) {
        Node node = templates_[t]->node;
        node.id = largest_id_;
        node.id += '\0';
        node.id += templates_[t]->name;
        node.id += '\0';
        node.id += fmt::format("{:010d}", k);
        copy.nodes.push_back(std::move(node));
      }
    }
    return RunCycle(copy, policy_);
  }

 private:
  const Snapshot& snapshot_;
  Policy policy_;
  std::vector<const NodeTemplate*> templates_;
  std::string largest_id_;
  int64_t budget_ = 0;
  int64_t used_ = 0;
  bool exhausted_ = false;
};

// The search for `add`: mixes are count vectors over the templates in name order.
class AddSearch {
 public:
  AddSearch(Simulator& sim, std::vector<const NodeTemplate*> templates)
      : sim_(sim), templates_(std::move(templates)) {}

  // Price per hour of a mix, in micro-units (saturating).
  int64_t Cost(const std::vector<int32_t>& v) const {
    int64_t cost = 0;
    for (size_t t = 0; t < v.size(); ++t) {
      cost = SaturatingAdd(cost, SaturatingMultiply(v[t], templates_[t]->cost_per_hour_micro));
    }
    return cost;
  }

  // The order of the exact search: price, then node count, then counts in template-name order.
  bool Cheaper(const std::vector<int32_t>& a, const std::vector<int32_t>& b) const {
    const int64_t ca = Cost(a), cb = Cost(b);
    if (ca != cb) return ca < cb;
    int64_t na = 0, nb = 0;
    for (int32_t x : a) na += x;
    for (int32_t x : b) nb += x;
    if (na != nb) return na < nb;
    return a < b;
  }

  // Does the mix start every job of `covered`? nullopt once the budget is spent. Results are
  // remembered, so a mix is simulated once.
  std::optional<bool> Sufficient(const std::vector<int32_t>& v,
                                 const std::vector<std::string>& covered) {
    if (auto it = known_.find(v); it != known_.end()) return it->second.sufficient;
    std::optional<Decisions> d = sim_.Run(v, {});
    if (!d) return std::nullopt;
    Outcome outcome = OutcomeOf(*d);
    const bool ok = std::includes(outcome.started.begin(), outcome.started.end(), covered.begin(),
                                  covered.end());
    known_.emplace(v, Known{ok, std::move(outcome)});
    return ok;
  }

  // The outcome of a mix already simulated.
  const Outcome& OutcomeOfMix(const std::vector<int32_t>& v) const { return known_.at(v).outcome; }

 private:
  struct Known {
    bool sufficient = false;
    Outcome outcome;
  };
  Simulator& sim_;
  std::vector<const NodeTemplate*> templates_;
  std::map<std::vector<int32_t>, Known> known_;
};

// Step 2 of `add`: from the sufficient mix `best`, down to one that is minimal per template
// (unless the budget runs out first; `best` stays sufficient throughout).
void Descend(AddSearch& search, const std::vector<const NodeTemplate*>& templates,
             const std::vector<std::string>& covered, std::vector<int32_t>& best) {
  std::vector<size_t> order(templates.size());
  for (size_t t = 0; t < order.size(); ++t) order[t] = t;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (templates[a]->cost_per_hour_micro != templates[b]->cost_per_hour_micro) {
      return templates[a]->cost_per_hour_micro > templates[b]->cost_per_hour_micro;
    }
    return templates[a]->name < templates[b]->name;
  });
  for (size_t t : order) {
    int32_t lo = 0, hi = best[t];  // best with hi nodes of t is sufficient
    while (lo < hi) {
      std::vector<int32_t> v = best;
      v[t] = lo + (hi - lo) / 2;
      std::optional<bool> ok = search.Sufficient(v, covered);
      if (!ok) return;
      if (*ok) {
        hi = v[t];
      } else {
        lo = v[t] + 1;
      }
    }
    best[t] = hi;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t t : order) {
      if (best[t] == 0) continue;
      std::vector<int32_t> v = best;
      --v[t];
      std::optional<bool> ok = search.Sufficient(v, covered);
      if (!ok) return;
      if (*ok) {
        best = std::move(v);
        changed = true;
      }
    }
  }
}

// Step 3 of `add`: every mix under `ceiling` cheaper than `best`, cheapest first. True when the
// search ended (`best` is then the cheapest sufficient mix).
bool SearchCheaper(AddSearch& search, const std::vector<int32_t>& ceiling,
                   const std::vector<std::string>& covered, std::vector<int32_t>& best) {
  int64_t space = 1;
  for (int32_t c : ceiling) {
    space = SaturatingMultiply(space, int64_t{c} + 1);
    if (space > kMaxEnumerated) return false;
  }
  std::vector<std::vector<int32_t>> cheaper;
  std::vector<int32_t> v(ceiling.size(), 0);
  for (int64_t i = 0; i < space; ++i) {
    if (search.Cheaper(v, best)) cheaper.push_back(v);
    for (size_t t = 0; t < v.size(); ++t) {  // the next vector, like an odometer
      if (v[t] < ceiling[t]) {
        ++v[t];
        break;
      }
      v[t] = 0;
    }
  }
  std::sort(cheaper.begin(), cheaper.end(),
            [&](const auto& a, const auto& b) { return search.Cheaper(a, b); });
  for (const std::vector<int32_t>& mix : cheaper) {
    std::optional<bool> ok = search.Sufficient(mix, covered);
    if (!ok) return false;
    if (*ok) {
      best = mix;
      return true;
    }
  }
  return true;
}

// `release`: takes from `candidates` (in order) every set whose removal keeps `expected`.
void TakeReleasable(Simulator& sim, const std::vector<int32_t>& counts,
                    const std::vector<std::string>& candidates, const Outcome& expected,
                    std::set<std::string>& taken) {
  if (candidates.empty()) return;
  std::set<std::string> trial = taken;
  trial.insert(candidates.begin(), candidates.end());
  std::optional<Decisions> d = sim.Run(counts, trial);
  if (!d) return;
  if (OutcomeOf(*d) == expected) {
    taken = std::move(trial);
    return;
  }
  if (candidates.size() == 1) return;
  const auto middle = candidates.begin() + static_cast<std::ptrdiff_t>(candidates.size() / 2);
  TakeReleasable(sim, counts, std::vector<std::string>(candidates.begin(), middle), expected,
                 taken);
  if (sim.exhausted()) return;
  TakeReleasable(sim, counts, std::vector<std::string>(middle, candidates.end()), expected, taken);
}

}  // namespace

ScaleAdvice AdviseScale(const Snapshot& snapshot, const Policy& policy,
                        const Decisions& decisions) {
  ScaleAdvice advice;
  std::vector<const NodeTemplate*> templates;
  for (const NodeTemplate& t : policy.scale->templates) templates.push_back(&t);
  std::sort(templates.begin(), templates.end(),
            [](const NodeTemplate* a, const NodeTemplate* b) { return a->name < b->name; });
  Simulator sim(snapshot, policy, templates);
  AddSearch search(sim, templates);

  // The candidates for `add`, and the ceiling of each template.
  std::map<std::string, const Job*> jobs;
  for (const Job& job : snapshot.jobs) jobs.emplace(job.id, &job);
  std::vector<std::string> candidates;
  int64_t replicas = 0;
  for (const PendingDecision& p : decisions.pending) {
    if (p.reason == PendingReason::kQueueLimit || p.reason == PendingReason::kBudgetExhausted) {
      continue;
    }
    candidates.push_back(p.job);
    for (const TaskGroup& g : jobs.at(p.job)->groups)
      replicas = SaturatingAdd(replicas, g.replicas);
  }
  std::vector<int32_t> ceiling(templates.size(), 0);
  bool any = false;
  for (size_t t = 0; t < templates.size(); ++t) {
    ceiling[t] = static_cast<int32_t>(std::min<int64_t>(templates[t]->max_count, replicas));
    any = any || ceiling[t] > 0;
  }

  std::vector<int32_t> best(templates.size(), 0);
  Outcome expected = OutcomeOf(decisions);
  if (!candidates.empty() && any && search.Sufficient(ceiling, {}).has_value()) {
    const Outcome& at_ceiling = search.OutcomeOfMix(ceiling);
    std::set_intersection(candidates.begin(), candidates.end(), at_ceiling.started.begin(),
                          at_ceiling.started.end(), std::back_inserter(advice.covers));
    if (!advice.covers.empty()) {
      best = ceiling;
      Descend(search, templates, advice.covers, best);
      advice.cheapest = !sim.exhausted() && SearchCheaper(search, ceiling, advice.covers, best);
      expected = search.OutcomeOfMix(best);
    }
  }
  for (size_t t = 0; t < templates.size(); ++t) {
    if (best[t] > 0) advice.add.push_back(ScaleAdd{templates[t]->name, best[t]});
  }
  advice.cost_per_hour_micro = search.Cost(best);

  // `release`: idle ready nodes, not held, from the back of the topology order.
  std::set<std::string> busy;
  for (const Job& job : snapshot.jobs) {
    if (job.state != JobState::kRunning) continue;
    for (const ReplicaPlacement& p : job.placements) busy.insert(p.node);
  }
  for (const ReserveDecision& r : decisions.reservations)
    busy.insert(r.nodes.begin(), r.nodes.end());
  const SnapshotIndex index(snapshot);
  std::vector<std::string> idle;
  for (int32_t n = index.node_count() - 1; n >= 0; --n) {
    const Node& node = index.node(n);
    if (node.state != NodeState::kReady || busy.count(node.id) != 0) continue;
    if (KeptForHeadroom(policy, node)) continue;
    idle.push_back(node.id);
  }
  std::set<std::string> taken;
  if (!sim.exhausted()) TakeReleasable(sim, best, idle, expected, taken);
  advice.release.assign(taken.begin(), taken.end());

  advice.simulations = sim.used();
  advice.budget_exhausted = sim.exhausted();
  return advice;
}

}  // namespace gpupool::internal
