#include "place.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "internal/check.h"
#include "spot.h"
#include "workload_mix.h"

namespace gpupool::internal {
namespace {

// Expected-waste scores at most this many nodes where a replica fits, the first ones in best-fit
// order, so that a placement's cost does not grow with the pool. The figures of
// docs/policy-format.md ("Why these defaults") are with 32; other values were not measured.
constexpr int32_t kExpectedWasteCandidates = 32;

bool AllowsSpanningIslands(const TaskGroup& group) {
  return group.topology.replica_scope == ReplicaScope::kNode ||
         group.topology.replica_strictness == Strictness::kPreferred;
}

}  // namespace

Placer::Placer(const SnapshotIndex& index, WorkingState& state, const Policy& policy,
               Counters& counters)
    : index_(index),
      state_(state),
      policy_(policy),
      counters_(counters),
      lending_(index, state, policy) {
  if (policy.scorer != nullptr) {
    scorer_ = policy.scorer.get();
  } else if (policy.placement == PlacementStrategy::kExpectedWaste) {
    mix_scorer_ = MakeSnapshotMixScorer(index.snapshot());
    scorer_ = mix_scorer_.get();
  }
  if (index.any_spot()) {
    spot_ok_.resize(index.job_count());
    for (int32_t j = 0; j < index.job_count(); ++j) {
      spot_ok_[j] = MayUseSpot(*index.job(j).job, policy) ? 1 : 0;
    }
  }
}

std::vector<int32_t> Placer::GroupOrder(int32_t j) const {
  // Largest replicas first: they have the fewest places to go. Ties in group-name order.
  const auto& groups = index_.job(j).job->groups;
  const absl::Span<const int32_t> by_name = index_.job(j).groups_by_name;
  std::vector<int32_t> order(by_name.begin(), by_name.end());
  std::stable_sort(order.begin(), order.end(), [&groups](int32_t a, int32_t b) {
    const ResourceRequest& ra = groups[a].request;
    const ResourceRequest& rb = groups[b].request;
    if (ra.gpu_milli != rb.gpu_milli) return ra.gpu_milli > rb.gpu_milli;
    return ra.cpu_milli > rb.cpu_milli;
  });
  return order;
}

std::optional<LimitBlock> Placer::CheckLimits(int32_t j, int32_t model, int64_t milli) const {
  if (milli <= 0) return std::nullopt;
  const int32_t any = index_.any_model_slot();
  for (int32_t q = index_.job(j).queue; q != kNone; q = index_.queue_parent(q)) {
    for (int32_t slot : {model, any}) {
      if (slot == kNone) continue;
      const int64_t limit = index_.queue_limit(q, slot);
      if (limit == kNoLimit) continue;
      const int64_t after = state_.queue_limit_usage(q, slot) + milli;
      if (after > limit) return LimitBlock{q, slot, after - limit};
    }
  }
  return std::nullopt;
}

std::optional<std::vector<ReplicaPlacement>> Placer::TryStart(int32_t j) {
  const JobInfo& info = index_.job(j);
  last_limit_block_.reset();
  last_lending_block_.reset();
  last_all_limited_ = false;
  last_headroom_block_.reset();
  std::vector<int32_t> models(info.models.begin(), info.models.end());
  if (!info.needs_gpu) models = {kNone};
  int32_t limited = 0;
  for (int32_t m : models) {
    if (auto block = CheckLimits(j, m, info.gang_milli)) {
      if (!last_limit_block_) last_limit_block_ = block;
      ++limited;
      continue;
    }
    if (auto block = lending_.Check(j, m, info.gang_milli)) {
      if (!last_lending_block_) last_lending_block_ = block;
      ++limited;
      continue;
    }
    const WorkingState::Mark mark = state_.Checkpoint();
    building_.clear();
    const GangPlaced placed = PlaceGangLent(j, m);
    if (placed == GangPlaced::kHeld) {
      ++limited;
      continue;
    }
    if (placed == GangPlaced::kPlaced) {
      // A job below a headroom rule's priority may not leave less than the rule keeps free.
      std::optional<HeadroomBlock> block;
      if (headroom_ != nullptr) block = headroom_->Violated(j, m);
      if (!block) {
        std::vector<ReplicaPlacement> placements = std::move(building_);
        building_.clear();
        // Group-name order, then replica order.
        std::sort(placements.begin(), placements.end(),
                  [](const ReplicaPlacement& a, const ReplicaPlacement& b) {
                    if (a.group != b.group) return a.group < b.group;
                    return a.replica < b.replica;
                  });
        return placements;
      }
      state_.Rollback(mark);
      ++counters_.transactions_rolled_back;
      if (!last_headroom_block_) {
        block->free_now = headroom_->Free(block->rule);
        last_headroom_block_ = block;
      }
      // Once more on the model's nodes that hold no headroom (spot nodes), if it has any.
      if (headroom_->HasUncountedNodes(m)) {
        building_.clear();
        avoid_counted_model_ = m;
        const bool placed_again = PlaceGangLent(j, m) == GangPlaced::kPlaced;
        avoid_counted_model_ = kNone;
        if (placed_again && !headroom_->Violated(j, m)) {
          last_headroom_block_.reset();
          std::vector<ReplicaPlacement> placements = std::move(building_);
          building_.clear();
          std::sort(placements.begin(), placements.end(),
                    [](const ReplicaPlacement& a, const ReplicaPlacement& b) {
                      if (a.group != b.group) return a.group < b.group;
                      return a.replica < b.replica;
                    });
          return placements;
        }
        state_.Rollback(mark);
        ++counters_.transactions_rolled_back;
      }
      continue;
    }
    state_.Rollback(mark);
    ++counters_.transactions_rolled_back;
  }
  last_all_limited_ = !models.empty() && limited == static_cast<int32_t>(models.size());
  building_.clear();
  return std::nullopt;
}

std::optional<std::vector<ReplicaPlacement>> Placer::Start(int32_t j) {
  auto placements = TryStart(j);
  state_.Commit();
  return placements;
}

Placer::GangPlaced Placer::PlaceGangLent(int32_t j, int32_t model) {
  const int64_t milli = index_.job(j).gang_milli;
  std::vector<Lending::Bound> bounds;
  if (lending_.by_node()) bounds = lending_.Bounds(j, model);
  if (bounds.empty() || Lending::Slack(bounds, milli)) {
    return PlaceGang(j, model) ? GangPlaced::kPlaced : GangPlaced::kNoRoom;
  }
  const WorkingState::Mark mark = state_.Checkpoint();
  const size_t built = building_.size();
  if (!PlaceGang(j, model)) {
    state_.Rollback(mark);
    building_.resize(built);
    return GangPlaced::kNoRoom;
  }
  const std::optional<LendingBlock> block = lending_.CheckPlaced(bounds);
  if (!block) return GangPlaced::kPlaced;
  state_.Rollback(mark);
  building_.resize(built);
  ++counters_.transactions_rolled_back;
  // Once more away from the nodes of every line the gang could lower: whatever it takes from the
  // others, served stays (elastic growth is checked replica by replica).
  lending_.AvoidTight(bounds, milli);
  const bool placed = PlaceGang(j, model);
  lending_.StopAvoiding();
  if (placed) return GangPlaced::kPlaced;
  state_.Rollback(mark);
  building_.resize(built);
  if (!last_lending_block_) last_lending_block_ = block;
  return GangPlaced::kHeld;
}

bool Placer::PlaceGang(int32_t j, int32_t model) {
  const JobInfo& info = index_.job(j);
  if (info.gang_level == kNone) return PlaceInScope(j, model, Scope{});
  const TaskGroup* constrained = nullptr;
  for (int32_t g : info.groups_by_name) {
    if (info.job->groups[g].topology.gang_level.has_value()) {
      constrained = &info.job->groups[g];
      break;
    }
  }
  for (int32_t d : DomainsInOrder(info.gang_level, model, info.gang_milli)) {
    const WorkingState::Mark mark = state_.Checkpoint();
    const size_t built = building_.size();
    if (PlaceInScope(j, model, Scope{info.gang_level, d})) return true;
    state_.Rollback(mark);
    building_.resize(built);
  }
  if (constrained->topology.gang_strictness == Strictness::kPreferred) {
    return PlaceInScope(j, model, Scope{});
  }
  return false;
}

// Domains of `level` in the order the strategy prefers, skipping those without `need` free.
std::vector<int32_t> Placer::DomainsInOrder(int32_t level, int32_t model, int64_t need) const {
  std::vector<int32_t> domains;
  const int32_t count = index_.domain_count(level);
  for (int32_t d = 0; d < count; ++d) {
    if (state_.domain_free_gpu(level, d) < need) continue;
    if (model != kNone) {
      const auto& nodes = index_.domain_nodes(level, d);
      const bool has_model = std::any_of(nodes.begin(), nodes.end(), [&](int32_t n) {
        return index_.node_model(n) == model && state_.node_open(n);
      });
      if (!has_model) continue;
    }
    domains.push_back(d);
  }
  const bool ordered =
      policy_.scorer == nullptr && policy_.placement != PlacementStrategy::kFirstFit;
  if (ordered) {
    const int sign = state_.key_sign();
    std::stable_sort(domains.begin(), domains.end(), [&](int32_t a, int32_t b) {
      return sign * state_.domain_free_gpu(level, a) < sign * state_.domain_free_gpu(level, b);
    });
  }
  return domains;
}

bool Placer::PlaceInScope(int32_t j, int32_t model, Scope scope) {
  const auto& groups = index_.job(j).job->groups;
  const std::vector<int32_t> order = GroupOrder(j);
  const WorkingState::Mark mark = state_.Checkpoint();
  const size_t built = building_.size();
  // The greedy pass: groups in order, each group's replicas one by one.
  size_t failed_at = order.size();
  for (size_t i = 0; i < order.size() && failed_at == order.size(); ++i) {
    for (int32_t r = 0; r < groups[order[i]].MinReplicas(); ++r) {
      if (!PlaceReplica(j, order[i], r, model, scope)) {
        failed_at = i;
        break;
      }
    }
  }
  if (failed_at < order.size()) {
    state_.Rollback(mark);
    building_.resize(built);
    // A later group may have failed because an earlier group took its nodes: search the gang's
    // placements in the scope before giving up (gang_search.cc). When the first group fails, the
    // scope cannot hold its replicas whatever the others do, and no search can help.
    if (failed_at == 0 || !SearchGang(j, model, scope)) return false;
  }
  GrowElastic(j, model, scope);
  return true;
}

void Placer::GrowElastic(int32_t j, int32_t model, Scope scope) {
  const auto& groups = index_.job(j).job->groups;
  for (int32_t g : GroupOrder(j)) {
    const TaskGroup& group = groups[g];
    for (int32_t r = group.MinReplicas(); r < group.replicas; ++r) {
      if (CheckLimits(j, model, group.request.gpu_milli) ||
          lending_.Check(j, model, group.request.gpu_milli)) {
        return;
      }
      const WorkingState::Mark mark = state_.Checkpoint();
      const size_t built = building_.size();
      std::vector<Lending::Bound> bounds;
      if (lending_.by_node()) bounds = lending_.Bounds(j, model);
      if (Lending::Slack(bounds, group.request.gpu_milli)) bounds.clear();
      if (!PlaceReplica(j, g, r, model, scope)) {
        state_.Rollback(mark);
        building_.resize(built);
        break;
      }
      if (!bounds.empty() && lending_.CheckPlaced(bounds)) {
        state_.Rollback(mark);
        building_.resize(built);
        return;
      }
    }
  }
}

bool Placer::PlaceReplica(int32_t j, int32_t g, int32_t replica, int32_t model, Scope scope) {
  const TaskGroup& group = index_.job(j).job->groups[g];
  std::vector<int32_t> gpus;
  int32_t node = kNone;
  // A CPU-only group may go on any node; a GPU group only on nodes of the gang's model.
  const bool any_model = group.request.gpu_milli == 0 || model == kNone;
  const bool ordered =
      policy_.scorer == nullptr && policy_.placement != PlacementStrategy::kFirstFit;
  if (scope.level != kNone) {
    const auto& domain_nodes = index_.domain_nodes(scope.level, scope.domain);
    if (any_model) {
      node = ScanForNode(j, group, domain_nodes, gpus);
    } else {
      std::vector<int32_t> of_model;
      for (int32_t n : domain_nodes) {
        if (index_.node_model(n) == model) of_model.push_back(n);
      }
      node = ScanForNode(j, group, of_model, gpus);
    }
  } else if (ordered) {
    if (any_model) {
      NodeKey best_key;
      int64_t best_score = 0;
      std::vector<int32_t> slot_gpus;
      for (int32_t slot = 0; slot <= index_.model_count(); ++slot) {
        NodeKey key;
        int64_t score = 0;
        const int32_t n = SearchOrdered(j, group, slot, slot_gpus, key, score);
        if (n != kNone &&
            (node == kNone || score > best_score || (score == best_score && key < best_key))) {
          node = n;
          best_key = key;
          best_score = score;
          gpus = slot_gpus;
        }
      }
    } else {
      NodeKey key;
      int64_t score = 0;
      node = SearchOrdered(j, group, model, gpus, key, score);
    }
  } else if (any_model) {
    std::vector<int32_t> all(index_.node_count());
    std::iota(all.begin(), all.end(), 0);
    node = ScanForNode(j, group, all, gpus);
  } else {
    node = ScanForNode(j, group, index_.nodes_of_model(model), gpus);
  }
  if (node == kNone) return false;
  Occupy(j, g, replica, node, gpus);
  return true;
}

void Placer::Occupy(int32_t j, int32_t g, int32_t replica, int32_t node,
                    const std::vector<int32_t>& gpus) {
  const TaskGroup& group = index_.job(j).job->groups[g];
  const ResourceRequest& request = group.request;
  state_.Allocate(j, node, gpus, request.MilliPerGpu(), request.gpu_memory_mib, request.cpu_milli,
                  request.memory_mib);
  ReplicaPlacement placement;
  placement.group = group.name;
  placement.replica = replica;
  placement.node = index_.node(node).id;
  placement.gpu_milli = request.gpu_milli > 0 ? request.MilliPerGpu() : 0;
  for (int32_t flat : gpus) placement.gpus.push_back(index_.gpu_index(flat));
  building_.push_back(std::move(placement));
}

int32_t Placer::SearchOrdered(int32_t j, const TaskGroup& group, int32_t slot,
                              std::vector<int32_t>& gpus, NodeKey& found_key,
                              int64_t& found_score) {
  const absl::btree_set<NodeKey>& ordered = state_.ordered_nodes(slot);
  const int64_t need = group.request.gpu_milli;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  found_score = 0;
  if (mix_scorer_ != nullptr) {
    // Expected-waste: the first kExpectedWasteCandidates nodes where the replica fits, in
    // best-fit order; the highest score wins, the first (best-fit's choice) on ties.
    int32_t best = kNone;
    int32_t scored = 0;
    std::vector<int32_t> trial;
    for (auto it = ordered.lower_bound(NodeKey{need, kMin, 0});
         it != ordered.end() && scored < kExpectedWasteCandidates; ++it) {
      if (!FitsOnNode(j, group, it->node, trial)) continue;
      ++scored;
      const int64_t score = HostScore(it->node, group.request);
      if (best == kNone || score > found_score) {
        best = it->node;
        found_score = score;
        found_key = *it;
        gpus = trial;
      }
    }
    return best;
  }
  if (state_.key_sign() > 0) {
    // Best-fit: the first node, by ascending free capacity, with at least `need` free.
    for (auto it = ordered.lower_bound(NodeKey{need, kMin, 0}); it != ordered.end(); ++it) {
      if (FitsOnNode(j, group, it->node, gpus)) {
        found_key = *it;
        return it->node;
      }
    }
  } else {
    // Spread: by descending free capacity, while at least `need` is free.
    for (auto it = ordered.begin(); it != ordered.end() && -it->gpu >= need; ++it) {
      if (FitsOnNode(j, group, it->node, gpus)) {
        found_key = *it;
        return it->node;
      }
    }
  }
  return kNone;
}

int64_t Placer::HostScore(int32_t n, const ResourceRequest& request) {
  free_scratch_.clear();
  for (int32_t g = index_.gpu_begin(n); g < index_.gpu_end(n); ++g) {
    if (index_.gpu_healthy(g)) free_scratch_.push_back(state_.gpu_free_milli(g));
  }
  int64_t* memo = nullptr;
  if (mix_scorer_ != nullptr) {
    memo_key_.clear();
    memo_key_.push_back(index_.node_model(n));
    memo_key_.push_back(state_.node_free_cpu(n));
    memo_key_.push_back(state_.node_free_memory(n));
    memo_key_.push_back(request.cpu_milli);
    memo_key_.push_back(request.memory_mib);
    memo_key_.push_back(request.gpu_milli);
    const size_t gpus_at = memo_key_.size();
    memo_key_.insert(memo_key_.end(), free_scratch_.begin(), free_scratch_.end());
    std::sort(memo_key_.begin() + static_cast<std::ptrdiff_t>(gpus_at), memo_key_.end());
    auto [it, inserted] = mix_memo_.try_emplace(memo_key_, 0);
    if (!inserted) return it->second;
    memo = &it->second;
  }
  const Node& node = index_.node(n);
  NodeView view;
  view.gpu_model = node.gpu_model;
  view.gpu_count = index_.healthy_gpus(n);
  view.cpu_milli_capacity = node.cpu_milli;
  view.memory_mib_capacity = node.memory_mib;
  view.free_cpu_milli = state_.node_free_cpu(n);
  view.free_memory_mib = state_.node_free_memory(n);
  view.free_gpu_milli = free_scratch_;
  view.free_gpu_milli_total = state_.node_free_gpu(n);
  const int64_t score = scorer_->Score(view, request);
  if (memo != nullptr) *memo = score;
  return score;
}

int32_t Placer::ScanForNode(int32_t j, const TaskGroup& group,
                            const std::vector<int32_t>& candidates, std::vector<int32_t>& gpus) {
  int32_t best = kNone;
  int64_t best_score = 0;
  NodeKey best_key;
  std::vector<int32_t> trial;
  const bool first_fit = scorer_ == nullptr && policy_.placement == PlacementStrategy::kFirstFit;
  for (int32_t n : candidates) {  // topology order
    if (!FitsOnNode(j, group, n, trial)) continue;
    if (first_fit) {
      gpus = trial;
      return n;
    }
    if (scorer_ != nullptr) {
      const int64_t score = HostScore(n, group.request);
      if (best == kNone || score > best_score) {
        best = n;
        best_score = score;
        gpus = trial;
      }
    } else {
      const NodeKey key{state_.key_sign() * state_.node_free_gpu(n),
                        state_.key_sign() * state_.node_free_cpu(n), n};
      if (best == kNone || key < best_key) {
        best = n;
        best_key = key;
        gpus = trial;
      }
    }
  }
  return best;
}

int32_t Placer::ReplicasOn(const TaskGroup& group, int32_t n) const {
  const std::string& node = index_.node(n).id;
  return static_cast<int32_t>(std::count_if(
      building_.begin(), building_.end(),
      [&](const ReplicaPlacement& p) { return p.node == node && p.group == group.name; }));
}

bool Placer::FitsOnNode(int32_t j, const TaskGroup& group, int32_t n, std::vector<int32_t>& gpus) {
  ++counters_.candidates_evaluated;
  gpus.clear();
  const JobInfo& info = index_.job(j);
  if (!state_.node_open(n) || !index_.QueueMayUseNode(info.queue, n)) return false;
  if (windows_ != nullptr && windows_->Blocks(j, n)) return false;
  if (index_.node_spot(n) && !SpotOk(j)) return false;
  if (headroom_ != nullptr && index_.node_model(n) == avoid_counted_model_ &&
      headroom_->Counts(n)) {
    return false;
  }
  if (lending_.Avoids(n)) return false;
  const int64_t tenant = info.tenant;
  const int64_t exclusive = state_.node_exclusive_tenant(n);
  if (exclusive != kNoTenant && exclusive != tenant) return false;
  const ResourceRequest& request = group.request;
  if (info.isolation == Isolation::kExclusiveNode && state_.node_tenant(n) != tenant) {
    // The node must be empty or hold only this tenant's work.
    if (!state_.NodeEmpty(n)) return false;
  }
  if (state_.node_free_cpu(n) < request.cpu_milli ||
      state_.node_free_memory(n) < request.memory_mib) {
    return false;
  }
  if (group.topology.max_replicas_per_node.has_value() && !ignore_replica_spread_ &&
      ReplicasOn(group, n) >= *group.topology.max_replicas_per_node) {
    return false;
  }
  const int64_t count = request.GpuCount();
  if (count == 0) return true;
  if (index_.node_model(n) == kNone || request.gpu_memory_mib > index_.gpu_memory_mib(n) ||
      state_.node_free_gpu(n) < request.gpu_milli) {
    return false;
  }
  const int64_t milli = request.MilliPerGpu();
  if (milli < kMilliPerGpu) {
    // A share: the GPU with the least free milli that still holds it, keeping whole GPUs whole.
    int32_t best = kNone;
    for (int32_t g = index_.gpu_begin(n); g < index_.gpu_end(n); ++g) {
      const int64_t free = state_.gpu_free_milli(g);
      if (!index_.gpu_healthy(g) || free < milli ||
          state_.gpu_free_memory(g) < request.gpu_memory_mib) {
        continue;
      }
      if (free < kMilliPerGpu && state_.gpu_tenant(g) != tenant) continue;
      if (best == kNone || free < state_.gpu_free_milli(best)) best = g;
    }
    if (best == kNone) return false;
    gpus.push_back(best);
    return true;
  }
  return ChooseWholeGpus(n, count, AllowsSpanningIslands(group), gpus);
}

// Whole GPUs: the island with the fewest fully free GPUs that still holds them all (so larger
// islands stay whole for larger replicas), lowest GPU indices first. When spanning islands is
// allowed and no single island suffices, islands are used fullest first.
bool Placer::ChooseWholeGpus(int32_t n, int64_t count, bool allow_span,
                             std::vector<int32_t>& gpus) {
  const int32_t islands = index_.island_count(n);
  island_free_.assign(islands, 0);
  int64_t total = 0;
  for (int32_t g = index_.gpu_begin(n); g < index_.gpu_end(n); ++g) {
    if (index_.gpu_healthy(g) && state_.gpu_free_milli(g) == kMilliPerGpu) {
      ++island_free_[index_.gpu_island(g)];
      ++total;
    }
  }
  if (total < count) return false;
  int32_t best_island = kNone;
  for (int32_t i = 0; i < islands; ++i) {
    if (island_free_[i] >= count &&
        (best_island == kNone || island_free_[i] < island_free_[best_island])) {
      best_island = i;
    }
  }
  auto take_from = [&](int32_t island) {
    for (int32_t g = index_.gpu_begin(n);
         g < index_.gpu_end(n) && static_cast<int64_t>(gpus.size()) < count; ++g) {
      if (index_.gpu_island(g) == island && index_.gpu_healthy(g) &&
          state_.gpu_free_milli(g) == kMilliPerGpu) {
        gpus.push_back(g);
      }
    }
  };
  if (best_island != kNone) {
    take_from(best_island);
  } else {
    if (!allow_span) return false;
    island_order_.resize(islands);
    std::iota(island_order_.begin(), island_order_.end(), 0);
    std::stable_sort(island_order_.begin(), island_order_.end(),
                     [this](int32_t a, int32_t b) { return island_free_[a] < island_free_[b]; });
    for (int32_t island : island_order_) take_from(island);
    std::sort(gpus.begin(), gpus.end());
  }
  return static_cast<int64_t>(gpus.size()) == count;
}

}  // namespace gpupool::internal
