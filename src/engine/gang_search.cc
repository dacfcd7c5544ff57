// Stage 5's search for a gang the greedy pass could not place.
//
// The greedy pass places a gang's replicas largest first, each on the node the strategy prefers,
// and never revisits a choice. That fails gangs that do fit: a two-GPU worker takes the last two
// GPUs of the only node with room for the launcher's CPU, and the launcher, placed next, finds
// no node. Such a gang would then start a cycle later, once other starts had changed which node
// the strategy prefers, so the cycle would not be a fixed point (docs/engine.md).
//
// SearchGang() is a depth-first search over the gang's required replicas:
//   - only gangs of two or more groups are searched (replicas of one group are interchangeable,
//     so the greedy pass fails them only when the scope cannot hold them);
//   - replicas are taken most constrained first (fewest nodes in the scope where one fits now),
//     ties in the greedy pass's group order, so the launcher above is placed first;
//   - each replica tries the nodes where it fits in the strategy's order of preference (best-fit:
//     least free GPU then CPU; spread: most; first-fit: topology order; a host scorer: highest
//     score, and expected-waste as a host scorer), taking the GPUs FitsOnNode() chooses there;
//   - replicas of one group are interchangeable, so they take nodes in ascending node index
//     (each replica at or after the previous one's node), which cuts the permutations;
//   - at most kGangSearchStepsPerReplica nodes are tried per replica, so a search costs at most
//     that many FitsOnNode() calls per replica, counted in candidates_evaluated like every other.
// Within that bound the search is complete up to the GPUs chosen inside a node: if the gang's
// required replicas fit in the scope at all, it finds a placement.
#include <algorithm>
#include <numeric>
#include <tuple>

#include "internal/saturating.h"
#include "place.h"

namespace gpupool::internal {
namespace {

constexpr int64_t kGangSearchStepsPerReplica = 64;

}  // namespace

std::vector<int32_t> Placer::ScopeNodes(int32_t j, int32_t g, int32_t model, Scope scope) const {
  const TaskGroup& group = index_.job(j).job->groups[g];
  const bool any_model = group.request.gpu_milli == 0 || model == kNone;
  std::vector<int32_t> nodes;
  if (scope.level != kNone) {
    for (int32_t n : index_.domain_nodes(scope.level, scope.domain)) {
      if (any_model || index_.node_model(n) == model) nodes.push_back(n);
    }
  } else if (any_model) {
    nodes.resize(index_.node_count());
    std::iota(nodes.begin(), nodes.end(), 0);
  } else {
    nodes = index_.nodes_of_model(model);
  }
  return nodes;
}

bool Placer::SearchGang(int32_t j, int32_t model, Scope scope) {
  const auto& groups = index_.job(j).job->groups;
  std::vector<SearchSlot> slots;
  for (int32_t g : GroupOrder(j)) {
    for (int32_t r = 0; r < groups[g].MinReplicas(); ++r) slots.push_back({g, r});
  }
  // Replicas of one group are interchangeable, and how many of them a node holds does not depend
  // on which node took the others: the greedy pass fails such a gang only when the scope cannot
  // hold it. Only gangs of two or more groups can be misplaced.
  if (slots.empty() || slots.front().group == slots.back().group) return false;

  // The scope's nodes must hold the whole gang's GPUs and CPU between them; then each group's
  // nodes where one replica fits now. A group that fits nowhere ends the search at once.
  std::vector<std::vector<int32_t>> candidates(groups.size());
  std::vector<int32_t> nodes;
  for (const SearchSlot& slot : slots) {
    if (slot.replica != 0) continue;
    candidates[slot.group] = ScopeNodes(j, slot.group, model, scope);
    nodes.insert(nodes.end(), candidates[slot.group].begin(), candidates[slot.group].end());
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  int64_t free_gpu = 0, free_cpu = 0, need_gpu = 0, need_cpu = 0;
  for (int32_t n : nodes) {
    free_gpu = SaturatingAdd(free_gpu, state_.node_free_gpu(n));
    free_cpu = SaturatingAdd(free_cpu, state_.node_free_cpu(n));
  }
  for (const SearchSlot& slot : slots) {
    need_gpu = SaturatingAdd(need_gpu, groups[slot.group].request.gpu_milli);
    need_cpu = SaturatingAdd(need_cpu, groups[slot.group].request.cpu_milli);
  }
  if (free_gpu < need_gpu || free_cpu < need_cpu) return false;
  std::vector<int32_t> gpus;
  for (const SearchSlot& slot : slots) {
    if (slot.replica != 0) continue;
    std::vector<int32_t>& list = candidates[slot.group];
    list.erase(
        std::remove_if(list.begin(), list.end(),
                       [&](int32_t n) { return !FitsOnNode(j, groups[slot.group], n, gpus); }),
        list.end());
    if (list.empty()) return false;
    // Each group's replicas must fit on its nodes by free GPU, CPU and memory alone.
    const ResourceRequest& request = groups[slot.group].request;
    int64_t room = 0;
    for (int32_t n : list) {
      int64_t on_node = groups[slot.group].MinReplicas();
      if (const std::optional<int32_t>& most = groups[slot.group].topology.max_replicas_per_node;
          most.has_value() && !ignore_replica_spread_) {
        on_node = std::min<int64_t>(on_node, *most);
      }
      if (request.gpu_milli > 0)
        on_node = std::min(on_node, state_.node_free_gpu(n) / request.gpu_milli);
      if (request.cpu_milli > 0)
        on_node = std::min(on_node, state_.node_free_cpu(n) / request.cpu_milli);
      if (request.memory_mib > 0) {
        on_node = std::min(on_node, state_.node_free_memory(n) / request.memory_mib);
      }
      room += on_node;
    }
    if (room < groups[slot.group].MinReplicas()) return false;
  }
  // Most constrained group first; a group's replicas stay together, in replica order.
  std::stable_sort(slots.begin(), slots.end(), [&](const SearchSlot& a, const SearchSlot& b) {
    return candidates[a.group].size() < candidates[b.group].size();
  });

  const WorkingState::Mark mark = state_.Checkpoint();
  const size_t built = building_.size();
  std::vector<int32_t> chosen(slots.size(), kNone);
  int64_t steps_left = kGangSearchStepsPerReplica * static_cast<int64_t>(slots.size());
  if (SearchFrom(j, slots, 0, candidates, chosen, steps_left)) return true;
  state_.Rollback(mark);
  building_.resize(built);
  return false;
}

bool Placer::SearchFrom(int32_t j, const std::vector<SearchSlot>& slots, size_t i,
                        const std::vector<std::vector<int32_t>>& candidates,
                        std::vector<int32_t>& chosen, int64_t& steps_left) {
  if (i == slots.size()) return true;
  const SearchSlot slot = slots[i];
  const TaskGroup& group = index_.job(j).job->groups[slot.group];
  // Replicas of one group are interchangeable: each takes a node at or after the previous one's.
  const int32_t first_node =
      (i > 0 && slots[i - 1].group == slot.group) ? chosen[i - 1] : static_cast<int32_t>(0);

  struct Option {
    std::tuple<int64_t, int64_t, int32_t> key;  // smaller is preferred
    int32_t node;
    std::vector<int32_t> gpus;
  };
  std::vector<Option> options;
  const bool first_fit = scorer_ == nullptr && policy_.placement == PlacementStrategy::kFirstFit;
  int32_t position = 0;
  for (int32_t n : candidates[slot.group]) {
    ++position;
    if (n < first_node) continue;
    if (steps_left <= 0) break;
    --steps_left;
    Option option;
    if (!FitsOnNode(j, group, n, option.gpus)) continue;
    option.node = n;
    if (first_fit) {
      option.key = {0, 0, position};
    } else if (scorer_ != nullptr) {
      option.key = {-HostScore(n, group.request), 0, n};
    } else {
      option.key = {state_.key_sign() * state_.node_free_gpu(n),
                    state_.key_sign() * state_.node_free_cpu(n), n};
    }
    options.push_back(std::move(option));
  }
  std::sort(options.begin(), options.end(),
            [](const Option& a, const Option& b) { return a.key < b.key; });

  for (const Option& option : options) {
    const WorkingState::Mark mark = state_.Checkpoint();
    const size_t built = building_.size();
    Occupy(j, slot.group, slot.replica, option.node, option.gpus);
    chosen[i] = option.node;
    if (SearchFrom(j, slots, i + 1, candidates, chosen, steps_left)) return true;
    state_.Rollback(mark);
    building_.resize(built);
    if (steps_left <= 0) return false;
  }
  return false;
}

}  // namespace gpupool::internal
