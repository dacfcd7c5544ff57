// The victim search (see victim_search.h for what it estimates and when it is exact). The file
// reads top-down: ranking, then what the job needs and where it may go (BuildScopes), then the
// per-node estimate (Fit, MayFit), then the exact and the greedy search.
#include "victim_search.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "internal/check.h"
#include "internal/saturating.h"

namespace gpupool::internal {
namespace {

// Does the job's gang level have to hold (its first group with a gang level says it is
// required)?
bool GangLevelRequired(const JobInfo& info) {
  for (int32_t g : info.groups_by_name) {
    const TopologyConstraint& topology = info.job->groups[g].topology;
    if (topology.gang_level.has_value()) return topology.gang_strictness == Strictness::kRequired;
  }
  return false;
}

bool AllGroupsNeedGpus(const JobInfo& info) {
  return std::all_of(info.groups_by_name.begin(), info.groups_by_name.end(),
                     [&](int32_t g) { return info.job->groups[g].request.gpu_milli > 0; });
}

}  // namespace

VictimSearch::VictimSearch(const SnapshotIndex& index, const WorkingState& state,
                           const VictimRules& rules, const Policy& policy, Counters& counters)
    : index_(index), state_(state), rules_(rules), policy_(policy), counters_(counters) {}

std::vector<int32_t> VictimSearch::Find(int32_t j, std::vector<int32_t> candidates,
                                        TryVictims simulate) {
  if (holding_begin_.empty()) BuildHoldings();
  const bool exact = static_cast<int>(candidates.size()) <= kExactCandidates;
  // The greedy search's last resort starts from every candidate, also those that free nothing
  // the job may use (the cross-queue rules may need them).
  std::vector<int32_t> every_candidate;
  if (!exact) every_candidate = candidates;
  BuildScopes(j, candidates, exact);
  // Evicting every candidate is the most that can be freed: if no scope could then hold the
  // job, no plan can.
  if (candidates.empty() || !MayFit(candidates, /*mark_scopes=*/true)) return {};
  return exact ? ExactSearch(j, std::move(candidates), simulate)
               : HeuristicSearch(j, candidates, every_candidate, simulate);
}

// --- Ranking. ---

bool VictimSearch::KeyLess(const PlanKey& a, const PlanKey& b) const {
  if (a.touches_within_budget != b.touches_within_budget) {
    return a.touches_within_budget < b.touches_within_budget;
  }
  if (PriorityFirst()) {
    return std::tie(a.top_priority, a.cost, a.count) < std::tie(b.top_priority, b.cost, b.count);
  }
  return std::tie(a.cost, a.count, a.top_priority) < std::tie(b.cost, b.count, b.top_priority);
}

bool VictimSearch::CandidateLess(const Candidate& a, const Candidate& b) const {
  if (KeyLess(a.key, b.key)) return true;
  if (KeyLess(b.key, a.key)) return false;
  if (a.victims != b.victims) return a.victims < b.victims;
  return a.scope < b.scope;
}

bool VictimSearch::VictimBefore(int32_t a, int32_t b) const {
  if (!victim_rank_.empty()) return victim_rank_[a] < victim_rank_[b];
  const int32_t pa = index_.job(a).job->priority, pb = index_.job(b).job->priority;
  const int64_t ca = rules_.VictimCost(a), cb = rules_.VictimCost(b);
  const bool ia = rules_.WithinBudget(a), ib = rules_.WithinBudget(b);
  if (ia != ib) return ib;  // over-budget queues' jobs first
  if (PriorityFirst()) return std::tie(pa, ca, a) < std::tie(pb, cb, b);
  return std::tie(ca, pa, a) < std::tie(cb, pb, b);
}

void VictimSearch::AddToKey(PlanKey& key, int32_t v) const {
  if (rules_.WithinBudget(v)) key.touches_within_budget = 1;
  key.cost = SaturatingAdd(key.cost, rules_.VictimCost(v));
  ++key.count;
  key.top_priority = std::max(key.top_priority, index_.job(v).job->priority);
}

// --- What the job needs and where it may go. ---

void VictimSearch::BuildHoldings() {
  holding_begin_.assign(index_.job_count() + 1, 0);
  for (int32_t v = 0; v < index_.job_count(); ++v) {
    holding_begin_[v] = static_cast<int32_t>(holdings_.size());
    const JobInfo& info = index_.job(v);
    if (info.job->state != JobState::kRunning || info.queue == kNone) continue;
    for (const RunningPlacement& placement : info.placements) {
      const ResourceRequest& request = info.job->groups[placement.group].request;
      holdings_.push_back(Holding{placement.node, request.MilliPerGpu(), request.cpu_milli,
                                  request.memory_mib, placement.gpus});
    }
  }
  holding_begin_[index_.job_count()] = static_cast<int32_t>(holdings_.size());
  victim_model_.assign(index_.job_count(), kNone);
  std::vector<int32_t> order;
  std::vector<int32_t> per_node(index_.node_count() + 1, 0);
  for (int32_t v = 0; v < index_.job_count(); ++v) {
    if (Holdings(v).empty()) continue;
    order.push_back(v);
    for (const Holding& holding : Holdings(v)) {
      const int32_t m = index_.node_model(holding.node);
      victim_model_[v] = victim_model_[v] == kNone || victim_model_[v] == m ? m : kMixedModels;
      ++per_node[holding.node + 1];
    }
  }
  std::sort(order.begin(), order.end(),
            [this](int32_t a, int32_t b) { return VictimBefore(a, b); });
  victim_rank_.assign(index_.job_count(), 0);
  for (size_t r = 0; r < order.size(); ++r) victim_rank_[order[r]] = static_cast<int32_t>(r);
  // Running jobs per node (once per node), in victim order.
  for (int32_t n = 0; n < index_.node_count(); ++n) per_node[n + 1] += per_node[n];
  node_jobs_begin_ = per_node;
  node_jobs_.assign(per_node.back(), kNone);
  for (int32_t v : order) {
    for (const Holding& holding : Holdings(v)) node_jobs_[per_node[holding.node]++] = v;
  }
  is_candidate_.assign(index_.job_count(), 0);
  freed_gpu_.assign(index_.gpu_count(), 0);
  freed_cpu_.assign(index_.node_count(), 0);
  freed_memory_.assign(index_.node_count(), 0);
  node_first_.assign(index_.node_count(), -1);
  node_end_.assign(index_.node_count(), -1);
  scope_pos_.assign(index_.node_count(), -1);
  chosen_.assign(index_.job_count(), 0);
}

bool VictimSearch::Usable(int32_t j, int32_t n, int32_t model) const {
  const JobInfo& info = index_.job(j);
  if (!state_.node_open(n) || !index_.QueueMayUseNode(info.queue, n)) return false;
  if (need_.gpu_count == 0) return true;
  const int32_t m = index_.node_model(n);
  if (m == kNone) return false;
  if (model != kNone) return m == model;
  return std::find(info.models.begin(), info.models.end(), m) != info.models.end();
}

void VictimSearch::BuildScopes(int32_t j, std::vector<int32_t>& candidates, bool exact) {
  const JobInfo& info = index_.job(j);
  for (int32_t n : touched_nodes_) node_first_[n] = node_end_[n] = -1;
  touched_nodes_.clear();
  node_victims_.clear();
  scopes_.clear();
  ClearFreed();

  SetNeed(info);
  std::vector<int32_t> models(info.models.begin(), info.models.end());
  if (need_.gpu_count == 0) models = {kNone};
  FindLimits(info, models);
  if (!exact && AllGroupsNeedGpus(info)) DropUnhelpful(j, candidates);
  for (LimitNeed& limit : limits_) {
    for (int32_t v : candidates) {
      if (Relief(v, limit) > 0) limit.relievers.push_back(v);
    }
    std::sort(limit.relievers.begin(), limit.relievers.end(),
              [this](int32_t a, int32_t b) { return victim_rank_[a] < victim_rank_[b]; });
  }
  ListNodeVictims(j, candidates);

  // Scopes: per accepted model, a limits-only one if a limit stops the job there, the domains
  // of the gang level that hold candidates and, unless the level is required, the whole pool.
  const int32_t level = info.gang_level;
  const bool required = level != kNone && GangLevelRequired(info);
  for (int32_t m : models) {
    const bool limited = std::any_of(limits_.begin(), limits_.end(),
                                     [m](const LimitNeed& limit) { return limit.model == m; });
    if (limited) {
      Scope scope;
      scope.model = m;
      scope.quota_only = true;
      scopes_.push_back(std::move(scope));
    }
    std::vector<int32_t> of_model;
    for (int32_t n : touched_nodes_) {
      if (m == kNone || index_.node_model(n) == m) of_model.push_back(n);
    }
    if (of_model.empty()) continue;
    if (level != kNone) AddDomainScopes(j, m, level, of_model);
    if (!required) AddPoolScope(j, m, std::move(of_model));
  }
}

void VictimSearch::SetNeed(const JobInfo& info) {
  // The largest group, as the placer orders groups: most milli-GPUs, then most CPU.
  const TaskGroup* largest = nullptr;
  for (int32_t g : info.groups_by_name) {
    const TaskGroup& group = info.job->groups[g];
    if (largest == nullptr || group.request.gpu_milli > largest->request.gpu_milli ||
        (group.request.gpu_milli == largest->request.gpu_milli &&
         group.request.cpu_milli > largest->request.cpu_milli)) {
      largest = &group;
    }
  }
  need_ = Need{};
  if (largest == nullptr) return;
  const ResourceRequest& request = largest->request;
  need_.gpu_count = request.GpuCount();
  need_.milli_per_gpu = need_.gpu_count > 0 ? request.MilliPerGpu() : 0;
  need_.gpu_memory_mib = request.gpu_memory_mib;
  need_.cpu_milli = request.cpu_milli;
  need_.memory_mib = request.memory_mib;
  need_.replicas = largest->MinReplicas();
  need_.per_node =
      largest->topology.max_replicas_per_node.value_or(std::numeric_limits<int32_t>::max());
  need_.one_island = need_.milli_per_gpu >= kMilliPerGpu &&
                     largest->topology.replica_scope == ReplicaScope::kIsland &&
                     largest->topology.replica_strictness == Strictness::kRequired;
}

void VictimSearch::FindLimits(const JobInfo& info, const std::vector<int32_t>& models) {
  // The limits the gang exceeds, per model, as the placer checks them.
  limits_.clear();
  for (int32_t m : models) {
    if (info.gang_milli <= 0) break;
    for (int32_t q = info.queue; q != kNone; q = index_.queue_parent(q)) {
      for (int32_t slot : {m, index_.any_model_slot()}) {
        if (slot == kNone) continue;
        const int64_t limit = index_.queue_limit(q, slot);
        if (limit == kNoLimit) continue;
        const int64_t over = state_.queue_limit_usage(q, slot) + info.gang_milli - limit;
        if (over <= 0) continue;
        LimitNeed need{m, q, slot, over, std::vector<uint8_t>(index_.queue_count(), 0), {}};
        for (int32_t k = 0; k < index_.queue_count(); ++k) need.counts[k] = rules_.InSubtree(k, q);
        limits_.push_back(std::move(need));
      }
    }
  }
}

void VictimSearch::DropUnhelpful(int32_t j, std::vector<int32_t>& candidates) {
  // Above kExactCandidates, when every group needs GPUs: a candidate that holds nothing on a node
  // the job may use, and counts against no limit it would exceed, cannot help.
  std::vector<int8_t> usable(index_.node_count(), -1);
  std::erase_if(candidates, [&](int32_t v) {
    for (const Holding& holding : Holdings(v)) {
      int8_t& u = usable[holding.node];
      if (u < 0) u = Usable(j, holding.node, kNone) ? 1 : 0;
      if (u) return false;
    }
    return std::none_of(limits_.begin(), limits_.end(),
                        [&](const LimitNeed& limit) { return Relief(v, limit) > 0; });
  });
}

void VictimSearch::ListNodeVictims(int32_t j, const std::vector<int32_t>& candidates) {
  // Candidates of each usable node, in victim order (a job on a node twice counts once).
  for (int32_t v : candidates) is_candidate_[v] = 1;
  for (int32_t v : candidates) {
    for (const Holding& holding : Holdings(v)) touched_nodes_.push_back(holding.node);
  }
  std::sort(touched_nodes_.begin(), touched_nodes_.end());
  touched_nodes_.erase(std::unique(touched_nodes_.begin(), touched_nodes_.end()),
                       touched_nodes_.end());
  std::erase_if(touched_nodes_, [&](int32_t n) { return !Usable(j, n, kNone); });
  for (int32_t n : touched_nodes_) {
    node_first_[n] = static_cast<int32_t>(node_victims_.size());
    for (int32_t k = node_jobs_begin_[n]; k < node_jobs_begin_[n + 1]; ++k) {
      const int32_t v = node_jobs_[k];
      if (is_candidate_[v] && (node_victims_.empty() || node_victims_.back() != v ||
                               static_cast<int32_t>(node_victims_.size()) == node_first_[n])) {
        node_victims_.push_back(v);
      }
    }
    node_end_[n] = static_cast<int32_t>(node_victims_.size());
  }
  for (int32_t v : candidates) is_candidate_[v] = 0;
}

void VictimSearch::AddDomainScopes(int32_t j, int32_t model, int32_t level,
                                   const std::vector<int32_t>& of_model) {
  const int64_t replica_milli = need_.milli_per_gpu * need_.gpu_count;
  std::vector<std::pair<int32_t, int32_t>> by_domain;  // (domain, node)
  for (int32_t n : of_model) {
    const int32_t d = index_.node_domain(n, level);
    if (d != kNone) by_domain.emplace_back(d, n);
  }
  std::sort(by_domain.begin(), by_domain.end());
  for (size_t i = 0; i < by_domain.size();) {
    Scope scope;
    scope.model = model;
    scope.level = level;
    scope.domain = by_domain[i].first;
    for (; i < by_domain.size() && by_domain[i].first == scope.domain; ++i) {
      scope.nodes.push_back(by_domain[i].second);
    }
    for (int32_t n : index_.domain_nodes(level, scope.domain)) {
      if (node_first_[n] >= 0 || state_.node_free_gpu(n) < replica_milli) continue;
      if (Usable(j, n, model)) scope.untouched += Fit(n);
    }
    scope.untouched_known = scope.untouched;
    scopes_.push_back(std::move(scope));
  }
}

void VictimSearch::AddPoolScope(int32_t j, int32_t model, std::vector<int32_t> of_model) {
  const int64_t replica_milli = need_.milli_per_gpu * need_.gpu_count;
  Scope scope;
  scope.model = model;
  scope.nodes = std::move(of_model);
  // Nodes without candidates: at most what their free milli-GPUs hold; and what the first
  // kLookedAt of them with room for a replica's milli-GPUs hold.
  constexpr int kLookedAt = 64;
  if (replica_milli > 0 && model != kNone) {
    scope.untouched = state_.model_free_gpu(model) / replica_milli;
    int looked_at = 0;
    const absl::btree_set<NodeKey>& ordered = state_.ordered_nodes(model);
    const int sign = state_.key_sign();
    auto it =
        sign > 0
            ? ordered.lower_bound(NodeKey{replica_milli, std::numeric_limits<int64_t>::min(), 0})
            : ordered.begin();
    for (; it != ordered.end() && looked_at < kLookedAt; ++it) {
      if (sign * it->gpu < replica_milli) break;  // spread: descending free capacity
      if (node_first_[it->node] >= 0 || !Usable(j, it->node, model)) continue;
      ++looked_at;
      scope.untouched_known += Fit(it->node);
    }
  } else {
    scope.untouched = std::numeric_limits<int32_t>::max();
  }
  scopes_.push_back(std::move(scope));
}

// --- The estimate. ---

int64_t VictimSearch::Fit(int32_t n) const {
  int64_t fit = need_.per_node;
  if (need_.cpu_milli > 0) {
    fit = std::min(fit, (state_.node_free_cpu(n) + freed_cpu_[n]) / need_.cpu_milli);
  }
  if (need_.memory_mib > 0) {
    fit = std::min(fit, (state_.node_free_memory(n) + freed_memory_[n]) / need_.memory_mib);
  }
  if (need_.gpu_count == 0 || fit <= 0) return std::max<int64_t>(fit, 0);
  if (index_.node_model(n) == kNone || need_.gpu_memory_mib > index_.gpu_memory_mib(n)) return 0;
  int64_t on_gpus = 0;
  if (need_.one_island) island_free_.assign(index_.island_count(n), 0);
  for (int32_t g = index_.gpu_begin(n); g < index_.gpu_end(n); ++g) {
    if (!index_.gpu_healthy(g)) continue;
    const int64_t free = state_.gpu_free_milli(g) + freed_gpu_[g];
    if (need_.milli_per_gpu < kMilliPerGpu) {
      on_gpus += free / need_.milli_per_gpu;
    } else if (free >= kMilliPerGpu) {
      ++(need_.one_island ? island_free_[index_.gpu_island(g)] : on_gpus);
    }
  }
  if (need_.one_island) {
    for (int64_t whole : island_free_) on_gpus += whole / need_.gpu_count;
  } else if (need_.milli_per_gpu >= kMilliPerGpu) {
    on_gpus /= need_.gpu_count;
  }
  return std::min(fit, on_gpus);
}

void VictimSearch::Free(int32_t v, int sign) {
  for (const Holding& holding : Holdings(v)) {
    const int32_t n = holding.node;
    if (sign > 0) freed_nodes_touched_.push_back(n);
    freed_cpu_[n] += sign * holding.cpu_milli;
    freed_memory_[n] += sign * holding.memory_mib;
    for (int32_t g : holding.gpus) {
      if (sign > 0) freed_gpus_touched_.push_back(g);
      freed_gpu_[g] += sign * holding.milli_per_gpu;
    }
  }
}

void VictimSearch::ClearFreed() {
  for (int32_t n : freed_nodes_touched_) freed_cpu_[n] = freed_memory_[n] = 0;
  for (int32_t g : freed_gpus_touched_) freed_gpu_[g] = 0;
  freed_nodes_touched_.clear();
  freed_gpus_touched_.clear();
}

bool VictimSearch::MayFit(const std::vector<int32_t>& victims, bool mark_scopes) {
  ClearFreed();
  for (int32_t v : victims) Free(v, +1);
  bool fits = false;
  int32_t quota_model = kNone;
  bool quota_met = false;
  for (Scope& scope : scopes_) {
    if (scope.model != quota_model || quota_model == kNone) {
      quota_model = scope.model;
      quota_met = QuotaMet(scope.model, victims);
    }
    bool ok = quota_met;
    if (ok && !scope.quota_only) {
      int64_t total = scope.untouched;
      for (int32_t n : scope.nodes) {
        if (total >= need_.replicas) break;
        total += Fit(n);
      }
      ok = total >= need_.replicas;
    }
    fits = fits || ok;
    if (mark_scopes) {
      scope.may_fit = ok;
    } else if (fits) {
      break;
    }
  }
  ClearFreed();
  return fits;
}

int64_t VictimSearch::Relief(int32_t v, const LimitNeed& limit) const {
  if (!limit.counts[index_.job(v).queue]) return 0;
  if (limit.slot == index_.any_model_slot()) return rules_.Milli(v);
  if (victim_model_[v] != kMixedModels) {
    return victim_model_[v] == limit.slot ? rules_.Milli(v) : 0;
  }
  int64_t milli = 0;
  for (const Holding& holding : Holdings(v)) {
    if (index_.node_model(holding.node) == limit.slot) {
      milli += holding.milli_per_gpu * static_cast<int64_t>(holding.gpus.size());
    }
  }
  return milli;
}

bool VictimSearch::QuotaMet(int32_t model, const std::vector<int32_t>& victims) const {
  for (const LimitNeed& limit : limits_) {
    if (limit.model != model) continue;
    int64_t relieved = 0;
    for (int32_t v : victims) relieved += Relief(v, limit);
    if (relieved < limit.shortfall) return false;
  }
  return true;
}

// --- The exact search. ---

std::vector<int32_t> VictimSearch::ExactSearch(int32_t j, std::vector<int32_t> candidates,
                                               TryVictims simulate) {
  // Evicting every candidate is the most that can be freed: if that is not enough, stop. (A
  // set the rules forbid may still free enough; its allowed subsets are searched below.)
  if (!simulate(candidates)) return {};
  // Every subset, in the policy's victim order.
  struct Subset {
    PlanKey key;
    std::vector<int32_t> victims;  // ascending
  };
  std::vector<Subset> subsets;
  const uint32_t n = static_cast<uint32_t>(candidates.size());
  for (uint32_t mask = 1; mask < (1u << n); ++mask) {
    Subset s;
    for (uint32_t i = 0; i < n; ++i) {
      if (mask & (1u << i)) {
        AddToKey(s.key, candidates[i]);
        s.victims.push_back(candidates[i]);
      }
    }
    subsets.push_back(std::move(s));
  }
  std::sort(subsets.begin(), subsets.end(), [this](const Subset& a, const Subset& b) {
    if (KeyLess(a.key, b.key)) return true;
    if (KeyLess(b.key, a.key)) return false;
    return a.victims < b.victims;
  });
  for (const Subset& s : subsets) {
    if (!rules_.PlanAllowed(j, s.victims)) continue;
    if (s.victims == candidates) return candidates;  // known to free enough
    if (!MayFit(s.victims, false)) continue;         // cannot be enough
    if (!BudgetLeft()) {
      counters_.budget_exhausted = true;
      break;
    }
    if (simulate(s.victims)) return s.victims;
  }
  return {};
}

// --- The greedy search. ---

std::vector<int32_t> VictimSearch::HeuristicSearch(int32_t j,
                                                   const std::vector<int32_t>& candidates,
                                                   const std::vector<int32_t>& every_candidate,
                                                   TryVictims simulate) {
  const std::vector<Candidate> best = BestScopePlans(j, ScopesByLowerBound(candidates));
  if (best.empty()) {
    return TrimmedFromAll(j, every_candidate, simulate).value_or(std::vector<int32_t>{});
  }

  std::vector<int32_t> chosen;
  int32_t chosen_scope = kNone;
  std::vector<ReplicaPlacement> placed;
  auto attempt = [&](const std::vector<int32_t>& victims, int32_t scope) {
    if (!rules_.PlanAllowed(j, victims)) return false;
    if (!BudgetLeft()) {
      counters_.budget_exhausted = true;
      return false;
    }
    auto placements = simulate(victims);
    if (!placements) return false;
    chosen = victims;
    chosen_scope = scope;
    placed = std::move(*placements);
    return true;
  };
  bool found = false;
  for (const Candidate& c : best) {
    if ((found = attempt(c.victims, c.scope)) || counters_.budget_exhausted) break;
  }
  // None placed: the estimate was short of something (islands, isolation, other groups); give
  // the best plan room for one more replica at a time.
  const Candidate& first = best.front();
  std::vector<int32_t> tried = first.victims;
  for (int grow = 1; !found && !counters_.budget_exhausted && !scopes_[first.scope].quota_only &&
                     grow <= kGrowths;
       ++grow) {
    std::optional<Candidate> bigger = PlanScope(j, first.scope, first.target + grow, nullptr);
    if (!bigger) break;
    if (bigger->victims == tried) continue;
    tried = bigger->victims;
    found = attempt(bigger->victims, first.scope);
  }
  if (!found && !counters_.budget_exhausted) {
    std::optional<std::vector<int32_t>> trimmed = TrimmedFromAll(j, every_candidate, simulate);
    if (trimmed) return *std::move(trimmed);
  }
  if (!found) return {};

  // Victims that hold nothing on the nodes the job took are not needed where it went (unless
  // they count against a limit the job would exceed).
  const std::vector<int32_t> kept = HoldersOn(chosen, placed);
  const bool limited = std::any_of(limits_.begin(), limits_.end(), [&](const LimitNeed& l) {
    return l.model == scopes_[chosen_scope].model;
  });
  if (!limited && !kept.empty() && kept.size() < chosen.size()) {
    const std::vector<int32_t> all = chosen;
    if (!attempt(kept, chosen_scope)) chosen = all;
  }
  return chosen;
}

std::optional<std::vector<int32_t>> VictimSearch::TrimmedFromAll(
    int32_t j, const std::vector<int32_t>& candidates, TryVictims simulate) {
  auto places = [&](const std::vector<int32_t>& victims) {
    if (!BudgetLeft()) {
      counters_.budget_exhausted = true;
      return std::optional<std::vector<ReplicaPlacement>>();
    }
    return simulate(victims);
  };
  auto with = [](std::vector<int32_t> victims, int32_t v) {
    victims.insert(std::upper_bound(victims.begin(), victims.end(), v), v);
    return victims;
  };
  std::optional<std::vector<ReplicaPlacement>> placed = places(candidates);
  if (!placed) return std::nullopt;  // no plan places it
  std::vector<int32_t> plan = candidates;
  bool allowed = rules_.PlanAllowed(j, plan);
  // Without a limit to relieve, only victims on the nodes the job took free room it uses.
  if (limits_.empty()) {
    std::vector<int32_t> kept = HoldersOn(plan, *placed);
    const bool kept_allowed = rules_.PlanAllowed(j, kept);
    if (!kept.empty() && kept.size() < plan.size() && (kept_allowed || !allowed) && places(kept)) {
      plan = std::move(kept);
      allowed = kept_allowed;
    }
  }
  // Take back victims, the costliest in the policy's victim order first; once the rules allow
  // the plan, only take-backs they still allow.
  std::vector<int32_t> order = plan;
  std::sort(order.begin(), order.end(),
            [this](int32_t a, int32_t b) { return victim_rank_[a] > victim_rank_[b]; });
  int tries = 0;
  for (int32_t v : order) {
    if (plan.size() == 1 || tries == kTrimSimulations || counters_.budget_exhausted) break;
    std::vector<int32_t> fewer = plan;
    std::erase(fewer, v);
    const bool fewer_allowed = rules_.PlanAllowed(j, fewer);
    if (allowed && !fewer_allowed) continue;
    ++tries;
    if (!places(fewer)) continue;
    plan = std::move(fewer);
    allowed = fewer_allowed;
  }
  if (allowed) return plan;
  // The cross-queue rules refuse it: add back the first candidate, in victim order, with which
  // they allow it; failing one, candidates of the job's own queue, in victim order, until they
  // do (evicting its own queue's jobs lowers its side's usage).
  std::vector<int32_t> rest;
  for (int32_t v : candidates) {
    if (!std::binary_search(plan.begin(), plan.end(), v)) rest.push_back(v);
  }
  std::sort(rest.begin(), rest.end(),
            [this](int32_t a, int32_t b) { return victim_rank_[a] < victim_rank_[b]; });
  std::optional<std::vector<int32_t>> repaired;
  for (int32_t v : rest) {
    std::vector<int32_t> one_more = with(plan, v);
    if (rules_.PlanAllowed(j, one_more)) {
      repaired = std::move(one_more);
      break;
    }
  }
  if (!repaired) {
    std::vector<int32_t> more = plan;
    for (int32_t v : rest) {
      if (index_.job(v).queue != index_.job(j).queue) continue;
      more = with(std::move(more), v);
      if (rules_.PlanAllowed(j, more)) {
        repaired = std::move(more);
        break;
      }
    }
  }
  if (!repaired || !places(*repaired)) return std::nullopt;
  return repaired;
}

std::vector<std::pair<VictimSearch::PlanKey, int32_t>> VictimSearch::ScopesByLowerBound(
    const std::vector<int32_t>& candidates) const {
  // Every plan holds at least one victim, none cheaper or of lower priority than the cheapest
  // and lowest of the scope's candidates, and none within budget unless all are. Once the bound
  // is worse than the kPlansSimulated-th best plan, no later scope can do better.
  std::vector<std::pair<PlanKey, int32_t>> order;  // (lower bound, scope)
  PlanKey anyone;                                  // for quota-only scopes: any candidate
  anyone.count = 1;
  anyone.cost = std::numeric_limits<int64_t>::max();
  anyone.top_priority = std::numeric_limits<int32_t>::max();
  anyone.touches_within_budget = 1;
  for (int32_t v : candidates) {
    if (!rules_.WithinBudget(v)) anyone.touches_within_budget = 0;
    anyone.cost = std::min(anyone.cost, rules_.VictimCost(v));
    anyone.top_priority = std::min(anyone.top_priority, index_.job(v).job->priority);
  }
  for (int32_t s = 0; s < static_cast<int32_t>(scopes_.size()); ++s) {
    const Scope& scope = scopes_[s];
    if (!scope.may_fit) continue;
    PlanKey low = anyone;
    if (!scope.quota_only) {
      low.cost = std::numeric_limits<int64_t>::max();
      low.top_priority = std::numeric_limits<int32_t>::max();
      low.touches_within_budget = 1;
      for (int32_t n : scope.nodes) {
        for (int32_t i = node_first_[n]; i < node_end_[n]; ++i) {
          if (!rules_.WithinBudget(node_victims_[i])) low.touches_within_budget = 0;
          low.cost = std::min(low.cost, rules_.VictimCost(node_victims_[i]));
          low.top_priority = std::min(low.top_priority, index_.job(node_victims_[i]).job->priority);
        }
      }
    }
    order.emplace_back(low, s);
  }
  std::stable_sort(order.begin(), order.end(),
                   [this](const auto& a, const auto& b) { return KeyLess(a.first, b.first); });
  return order;
}

std::vector<VictimSearch::Candidate> VictimSearch::BestScopePlans(
    int32_t j, const std::vector<std::pair<PlanKey, int32_t>>& order) {
  std::vector<Candidate> best;
  for (const auto& [low, s] : order) {
    const Candidate* bound =
        static_cast<int>(best.size()) == kPlansSimulated ? &best.back() : nullptr;
    if (bound != nullptr && KeyLess(bound->key, low)) break;
    std::optional<Candidate> plan = PlanScope(j, s, need_.replicas, bound);
    if (!plan) continue;
    if (std::any_of(best.begin(), best.end(),
                    [&](const Candidate& c) { return c.victims == plan->victims; })) {
      continue;
    }
    auto at = std::upper_bound(
        best.begin(), best.end(), *plan,
        [this](const Candidate& a, const Candidate& b) { return CandidateLess(a, b); });
    best.insert(at, std::move(*plan));
    if (static_cast<int>(best.size()) > kPlansSimulated) best.pop_back();
  }
  return best;
}

std::optional<VictimSearch::Candidate> VictimSearch::PlanScope(int32_t j, int32_t s, int64_t target,
                                                               const Candidate* bound) {
  const Scope& scope = scopes_[s];
  ClearFreed();
  Candidate plan;
  plan.scope = s;
  VictimRules::RuleTally tally;
  bool complete = scope.quota_only || PlanRoom(j, scope, target, bound, plan, tally);
  complete = complete && PlanLimits(j, scope, bound, plan, tally) && !plan.victims.empty() &&
             (bound == nullptr || !KeyLess(bound->key, plan.key));
  for (int32_t v : plan.victims) chosen_[v] = 0;
  ClearFreed();
  if (!complete) return std::nullopt;
  std::sort(plan.victims.begin(), plan.victims.end());
  return plan;
}

void VictimSearch::Take(int32_t j, int32_t v, Candidate& plan, VictimRules::RuleTally& tally) {
  chosen_[v] = 1;
  const bool added = rules_.TallyAdd(j, v, tally);
  GPUPOOL_CHECK(added);
  Free(v, +1);
  AddToKey(plan.key, v);
  plan.victims.push_back(v);
}

bool VictimSearch::PlanRoom(int32_t j, const Scope& scope, int64_t target, const Candidate* bound,
                            Candidate& plan, VictimRules::RuleTally& tally) {
  const size_t size = scope.nodes.size();
  for (size_t i = 0; i < size; ++i) scope_pos_[scope.nodes[i]] = static_cast<int32_t>(i);
  std::vector<int64_t> fit(size);
  int64_t have = scope.untouched_known;
  for (size_t i = 0; i < size; ++i) {
    fit[i] = Fit(scope.nodes[i]);
    have += fit[i];
  }
  if (have >= target) target = have + 1;  // the estimate is short of something: add room
  plan.target = target;
  // The next step of each node, and its key.
  std::vector<std::vector<int32_t>> steps(size);
  std::vector<PlanKey> step_keys(size);
  std::vector<uint8_t> has_step(size, 0);
  auto compute = [&](size_t i) {
    has_step[i] = NodeStep(j, scope.nodes[i], tally, steps[i]) ? 1 : 0;
    step_keys[i] = PlanKey{};
    for (int32_t v : steps[i]) AddToKey(step_keys[i], v);
  };
  for (size_t i = 0; i < size; ++i) compute(i);
  std::vector<int32_t> affected;
  bool complete = false;
  while (!complete) {
    size_t best = size;
    for (size_t i = 0; i < size; ++i) {
      if (has_step[i] && (best == size || KeyLess(step_keys[i], step_keys[best]))) best = i;
    }
    if (best == size) break;
    // The rules tighten as victims of other queues join: recheck the step, and if it no
    // longer passes, recompute it and choose again.
    if (tally.cross > 0) {
      size_t added = 0;
      bool allowed = true;
      for (; added < steps[best].size() && allowed; ++added) {
        allowed = rules_.TallyAdd(j, steps[best][added], tally);
        if (!allowed) break;
      }
      allowed = allowed && rules_.TallyAllows(j, tally);
      for (size_t k = 0; k < added; ++k) rules_.TallyRemove(j, steps[best][k], tally);
      if (!allowed) {
        compute(best);
        continue;
      }
    }
    affected.clear();
    for (int32_t v : std::vector<int32_t>(steps[best])) {
      Take(j, v, plan, tally);
      for (const Holding& holding : Holdings(v)) {
        if (scope_pos_[holding.node] >= 0) affected.push_back(scope_pos_[holding.node]);
      }
    }
    if (bound != nullptr && KeyLess(bound->key, plan.key)) break;  // cannot beat it any more
    std::sort(affected.begin(), affected.end());
    affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
    for (int32_t i : affected) {
      const int64_t now = Fit(scope.nodes[i]);
      have += now - fit[i];
      fit[i] = now;
    }
    complete = have >= target;
    if (complete) break;
    // Steps of nodes that gained room, or that hold a chosen victim, are stale.
    for (size_t i = 0; i < size; ++i) {
      bool stale = std::binary_search(affected.begin(), affected.end(), static_cast<int32_t>(i));
      for (int32_t v : steps[i]) stale = stale || chosen_[v];
      if (stale) compute(i);
    }
  }
  for (int32_t n : scope.nodes) scope_pos_[n] = -1;
  return complete;
}

bool VictimSearch::PlanLimits(int32_t j, const Scope& scope, const Candidate* bound,
                              Candidate& plan, VictimRules::RuleTally& tally) {
  std::vector<std::pair<const LimitNeed*, int64_t>> short_by;  // (limit, still missing)
  for (const LimitNeed& limit : limits_) {
    if (limit.model != scope.model) continue;
    int64_t missing = limit.shortfall;
    for (int32_t v : plan.victims) missing -= Relief(v, limit);
    if (missing > 0) short_by.emplace_back(&limit, missing);
  }
  // One limit at a time, from the candidates that count against it.
  while (!short_by.empty() && (bound == nullptr || !KeyLess(bound->key, plan.key))) {
    const LimitNeed& limit = *short_by.front().first;
    for (size_t k = 0; k < limit.relievers.size() && short_by.front().second > 0; ++k) {
      const int32_t v = limit.relievers[k];
      if (chosen_[v] || !rules_.TallyAdd(j, v, tally)) continue;
      const bool allowed = rules_.TallyAllows(j, tally);
      rules_.TallyRemove(j, v, tally);
      if (!allowed) continue;
      Take(j, v, plan, tally);
      for (auto& e : short_by) e.second -= Relief(v, *e.first);
    }
    if (short_by.front().second > 0) break;  // cannot be met
    std::erase_if(short_by, [](const auto& e) { return e.second <= 0; });
  }
  return short_by.empty();
}

bool VictimSearch::NodeStep(int32_t j, int32_t n, VictimRules::RuleTally& tally,
                            std::vector<int32_t>& step) {
  step.clear();
  const int64_t current = Fit(n);
  bool found = false;
  for (int32_t i = node_first_[n]; i < node_end_[n] && !found; ++i) {
    const int32_t v = node_victims_[i];
    if (chosen_[v]) continue;
    if (!rules_.TallyAdd(j, v, tally)) continue;
    if (!rules_.TallyAllows(j, tally)) {
      rules_.TallyRemove(j, v, tally);
      continue;
    }
    Free(v, +1);
    step.push_back(v);
    found = Fit(n) > current;
  }
  for (int32_t v : step) {
    Free(v, -1);
    rules_.TallyRemove(j, v, tally);
  }
  if (!found) step.clear();
  return found;
}

std::vector<int32_t> VictimSearch::HoldersOn(const std::vector<int32_t>& chosen,
                                             const std::vector<ReplicaPlacement>& placed) const {
  std::vector<int32_t> used;
  for (const ReplicaPlacement& p : placed) used.push_back(index_.FindNode(p.node));
  std::sort(used.begin(), used.end());
  std::vector<int32_t> kept;
  for (int32_t v : chosen) {
    const bool holds = std::any_of(Holdings(v).begin(), Holdings(v).end(), [&](const Holding& h) {
      return std::binary_search(used.begin(), used.end(), h.node);
    });
    if (holds) kept.push_back(v);
  }
  return kept;
}

}  // namespace gpupool::internal
