// The incremental placement engine.
//
// Why not a Snapshot per pod: the inflation protocol places ~11,000 pods one at a time on 1,213
// nodes; rebuilding and validating a snapshot each time is quadratic. This engine keeps the node
// state itself and mirrors the core's placement rules exactly:
//   - a node is a candidate when the pod's model is allowed and CPU, memory and GPUs fit;
//   - the scorer's highest score wins; ties go to the first node in id order (the core's
//     topology order when, as here, nodes declare no topology), or to a seeded uniform draw;
//   - inside the node a share goes on the GPU with the least free milli that fits (lowest index
//     on ties) and whole GPUs on the lowest-index fully free GPUs.
//
// Equivalence classes: nodes in identical states (same type, free CPU and memory, multiset of
// free GPU milli, and history when the scorer uses it) score identically under a scorer that does
// not look at GPU order (all built-ins), so each class is scored once, and the first node of the
// class (lowest rank) stands for it. A class is an immutable state, so its score for a pod shape
// is memoised for the whole run. A placement moves one node between two classes.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gpupool/scorers/fragmentation.h"
#include "gpupool/scorers/scorers.h"
#include "gpupool/sim/placer.h"
#include "gpupool/sim/rng.h"
#include "sim/inflation/internal.h"

namespace gpupool::sim {

namespace {

constexpr int64_t kInfeasible = INT64_MIN;

class IncrementalPlacer final : public PodPlacer {
 public:
  IncrementalPlacer(const Cluster& cluster, const Workload& workload, const SimPolicy& policy,
                    uint64_t seed)
      : cluster_(cluster),
        policy_(policy),
        rng_(seed ^ 0x746965627265616bULL),
        shapes_(internal::PodShapes(cluster, workload)),
        measure_(internal::MeasureTable(workload)) {
    history_scorer_ = dynamic_cast<const HistoryAwareScorer*>(policy_.scorer.get());
    gpu_selector_ = policy_.scorer_selects_gpu
                        ? dynamic_cast<const GpuSelectingScorer*>(policy_.scorer.get())
                        : nullptr;
    // Node types and ranks (id order).
    std::map<std::tuple<std::string, int32_t, int64_t, int64_t>, int32_t> types;
    const int32_t n = static_cast<int32_t>(cluster.nodes.size());
    std::vector<int32_t> order(n);
    for (int32_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](int32_t a, int32_t b) { return cluster.nodes[a].id < cluster.nodes[b].id; });
    if (policy_.tie_break == TieBreak::kShuffledNodeOrder) {
      Rng shuffle(seed ^ 0x6e6f64656f726465ULL);
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[shuffle.Uniform(i)]);
    }
    rank_to_node_ = order;
    nodes_.resize(n);
    for (int32_t r = 0; r < n; ++r) nodes_[order[r]].rank = r;
    const std::vector<std::string> models = internal::ClusterModels(cluster);
    for (int32_t i = 0; i < n; ++i) {
      const SimNode& sn = cluster.nodes[i];
      auto key = std::make_tuple(sn.gpu_model, sn.gpu_count, sn.cpu_milli, sn.memory_mib);
      auto [it, inserted] = types.emplace(key, static_cast<int32_t>(types_.size()));
      if (inserted) {
        NodeType t;
        t.model = sn.gpu_model;
        t.model_bit = internal::ModelBit(models, sn.gpu_model);
        t.gpu_count = sn.gpu_count;
        t.cpu = sn.cpu_milli;
        t.mem = sn.memory_mib;
        types_.push_back(t);
      }
      NodeState& ns = nodes_[i];
      ns.type = it->second;
      ns.cpu_free = sn.cpu_milli;
      ns.mem_free = sn.memory_mib;
      ns.gpu_free.assign(sn.gpu_count, kMilliPerGpu);
      idle_ += int64_t{sn.gpu_count} * kMilliPerGpu;
    }
    for (int32_t i = 0; i < n; ++i) {
      nodes_[i].cls = ClassOf(nodes_[i]);
      AddMember(nodes_[i].cls, nodes_[i].rank);
      frag_ += classes_[nodes_[i].cls].frag;
    }
  }

  absl::StatusOr<PodPlacement> Place(int32_t pod) override {
    const internal::PodShape& shape = shapes_[pod];
    // Best score and the classes that reach it.
    int64_t best = kInfeasible;
    int32_t best_class = -1;
    tied_.clear();
    for (int32_t c : live_) {
      int64_t s = ScoreClass(c, shape);
      if (s == kInfeasible) continue;
      if (policy_.uniform_random) s = 0;
      if (s > best) {
        best = s;
        best_class = c;
        tied_.clear();
        tied_.push_back(c);
      } else if (s == best) {
        tied_.push_back(c);
        if (*classes_[c].members.begin() < *classes_[best_class].members.begin()) best_class = c;
      }
    }
    PodPlacement placement;
    if (best_class < 0) return placement;
    if (policy_.tie_break == TieBreak::kUniformRandom || policy_.uniform_random) {
      // Uniform over the tied nodes: a class with probability proportional to its size; within
      // a class the nodes are interchangeable, so its first node stands for any of them.
      int64_t total = 0;
      for (int32_t c : tied_) total += static_cast<int64_t>(classes_[c].members.size());
      int64_t r = static_cast<int64_t>(rng_.Uniform(static_cast<uint64_t>(total)));
      for (int32_t c : tied_) {
        r -= static_cast<int64_t>(classes_[c].members.size());
        if (r < 0) {
          best_class = c;
          break;
        }
      }
    }
    const int32_t node = rank_to_node_[*classes_[best_class].members.begin()];
    placement.node = node;
    ChooseGpus(node, shape, &placement.gpus);
    Apply(node, shape, placement.gpus, +1);
    return placement;
  }

  void Release(int32_t pod, const PodPlacement& placement) override {
    if (placement.node < 0) return;
    Apply(placement.node, shapes_[pod], placement.gpus, -1);
  }

  int64_t IdleGpuMilli() const override { return idle_; }
  int64_t WeightedFragmentation() const override { return frag_; }

 private:
  struct NodeType {
    std::string model;
    uint64_t model_bit = 0;
    int32_t gpu_count = 0;
    int64_t cpu = 0;
    int64_t mem = 0;
  };
  struct NodeState {
    int32_t type = 0;
    int32_t rank = 0;
    int32_t cls = -1;
    int64_t cpu_free = 0;
    int64_t mem_free = 0;
    uint32_t history = 0;
    std::vector<int64_t> gpu_free;
  };
  struct Class {
    int32_t type = 0;
    int64_t cpu_free = 0;
    int64_t mem_free = 0;
    uint32_t history = 0;
    std::vector<int64_t> gpu_sorted;  // descending
    int64_t gpu_free_total = 0;
    std::set<int32_t> members;  // ranks
    int32_t live_pos = -1;
    int64_t frag = 0;                            // the fragmentation measure, weighted
    absl::flat_hash_map<int32_t, int64_t> memo;  // pod shape class -> score
  };

  int32_t ClassOf(const NodeState& ns) {
    std::vector<int64_t> sorted = ns.gpu_free;
    std::sort(sorted.begin(), sorted.end(), std::greater<int64_t>());
    const uint32_t history = history_scorer_ != nullptr ? ns.history : 0;
    std::string key;
    key.resize(4 + 8 + 8 + 4 + 2 * sorted.size());
    char* p = key.data();
    std::memcpy(p, &ns.type, 4);
    std::memcpy(p + 4, &ns.cpu_free, 8);
    std::memcpy(p + 12, &ns.mem_free, 8);
    std::memcpy(p + 20, &history, 4);
    for (size_t i = 0; i < sorted.size(); ++i) {
      const int16_t v = static_cast<int16_t>(sorted[i]);
      std::memcpy(p + 24 + 2 * i, &v, 2);
    }
    auto [it, inserted] = class_index_.emplace(std::move(key), 0);
    if (!inserted) return it->second;
    const int32_t id = static_cast<int32_t>(classes_.size());
    it->second = id;
    Class c;
    c.type = ns.type;
    c.cpu_free = ns.cpu_free;
    c.mem_free = ns.mem_free;
    c.history = history;
    c.gpu_sorted = std::move(sorted);
    for (int64_t f : c.gpu_sorted) c.gpu_free_total += f;
    c.frag = gpupool::WeightedFragmentation(measure_, types_[ns.type].model, c.cpu_free,
                                            c.gpu_sorted, CpuClassRule::kFitsIsNotFragmented);
    classes_.push_back(std::move(c));
    return id;
  }

  void AddMember(int32_t c, int32_t rank) {
    Class& cls = classes_[c];
    cls.members.insert(rank);
    if (cls.live_pos < 0) {
      cls.live_pos = static_cast<int32_t>(live_.size());
      live_.push_back(c);
    }
  }

  void RemoveMember(int32_t c, int32_t rank) {
    Class& cls = classes_[c];
    cls.members.erase(rank);
    if (cls.members.empty()) {
      const int32_t pos = cls.live_pos;
      const int32_t last = live_.back();
      live_[pos] = last;
      classes_[last].live_pos = pos;
      live_.pop_back();
      cls.live_pos = -1;
    }
  }

  NodeView ViewOf(const Class& c) const {
    const NodeType& t = types_[c.type];
    NodeView v;
    v.gpu_model = t.model;
    v.gpu_count = t.gpu_count;
    v.cpu_milli_capacity = t.cpu;
    v.memory_mib_capacity = t.mem;
    v.free_cpu_milli = c.cpu_free;
    v.free_memory_mib = c.mem_free;
    v.free_gpu_milli = c.gpu_sorted;
    v.free_gpu_milli_total = c.gpu_free_total;
    return v;
  }

  int64_t ScoreClass(int32_t c, const internal::PodShape& shape) {
    Class& cls = classes_[c];
    auto it = cls.memo.find(shape.shape_class);
    if (it != cls.memo.end()) return it->second;
    int64_t score = kInfeasible;
    const NodeType& t = types_[cls.type];
    const bool fits =
        cls.cpu_free >= shape.request.cpu_milli && cls.mem_free >= shape.request.memory_mib &&
        (shape.count == 0 ||
         ((shape.model_mask == ~uint64_t{0} || (shape.model_mask & t.model_bit) != 0) &&
          shape.count <= t.gpu_count && cls.gpu_sorted[shape.count - 1] >= shape.per));
    if (fits) {
      const NodeView view = ViewOf(cls);
      if (history_scorer_ != nullptr) {
        score = history_scorer_->ScoreWithHistory(view, NodeHistory{cls.history}, shape.request);
      } else {
        score = policy_.scorer->Score(view, shape.request);
      }
      if (score == kInfeasible) score = kInfeasible + 1;
    }
    cls.memo.emplace(shape.shape_class, score);
    return score;
  }

  void ChooseGpus(int32_t node, const internal::PodShape& shape, std::vector<int32_t>* gpus) {
    const NodeState& ns = nodes_[node];
    gpus->clear();
    if (shape.count == 0) return;
    if (shape.per < kMilliPerGpu) {
      int32_t chosen = -1;
      if (gpu_selector_ != nullptr) {
        const NodeType& t = types_[ns.type];
        NodeView v;
        v.gpu_model = t.model;
        v.gpu_count = t.gpu_count;
        v.cpu_milli_capacity = t.cpu;
        v.memory_mib_capacity = t.mem;
        v.free_cpu_milli = ns.cpu_free;
        v.free_memory_mib = ns.mem_free;
        v.free_gpu_milli = ns.gpu_free;
        for (int64_t f : ns.gpu_free) v.free_gpu_milli_total += f;
        chosen = gpu_selector_->SelectSharedGpu(v, shape.request);
      }
      if (chosen < 0) {
        for (size_t i = 0; i < ns.gpu_free.size(); ++i) {
          if (ns.gpu_free[i] >= shape.per && (chosen < 0 || ns.gpu_free[i] < ns.gpu_free[chosen])) {
            chosen = static_cast<int32_t>(i);
          }
        }
      }
      gpus->push_back(chosen);
      return;
    }
    for (size_t i = 0; i < ns.gpu_free.size() && gpus->size() < static_cast<size_t>(shape.count);
         ++i) {
      if (ns.gpu_free[i] == kMilliPerGpu) gpus->push_back(static_cast<int32_t>(i));
    }
  }

  // Adds (sign +1) or removes (-1) a pod's resources on a node and moves it between classes.
  void Apply(int32_t node, const internal::PodShape& shape, const std::vector<int32_t>& gpus,
             int sign) {
    NodeState& ns = nodes_[node];
    RemoveMember(ns.cls, ns.rank);
    frag_ -= classes_[ns.cls].frag;
    ns.cpu_free -= sign * shape.request.cpu_milli;
    ns.mem_free -= sign * shape.request.memory_mib;
    for (int32_t g : gpus) {
      ns.gpu_free[g] -= sign * shape.per;
      idle_ -= sign * shape.per;
    }
    if (sign > 0) ns.history |= GpuRequestKindBit(shape.request);
    ns.cls = ClassOf(ns);
    AddMember(ns.cls, ns.rank);
    frag_ += classes_[ns.cls].frag;
  }

  const Cluster& cluster_;
  SimPolicy policy_;
  Rng rng_;
  std::vector<internal::PodShape> shapes_;
  TaskClassTable measure_;
  const HistoryAwareScorer* history_scorer_ = nullptr;
  const GpuSelectingScorer* gpu_selector_ = nullptr;
  std::vector<NodeType> types_;
  std::vector<NodeState> nodes_;
  std::vector<int32_t> rank_to_node_;
  std::vector<Class> classes_;
  absl::flat_hash_map<std::string, int32_t> class_index_;
  std::vector<int32_t> live_;
  std::vector<int32_t> tied_;
  int64_t idle_ = 0;
  int64_t frag_ = 0;
};

}  // namespace

std::unique_ptr<PodPlacer> MakeIncrementalPlacer(const Cluster& cluster, const Workload& workload,
                                                 const SimPolicy& policy, uint64_t seed) {
  return std::make_unique<IncrementalPlacer>(cluster, workload, policy, seed);
}

}  // namespace gpupool::sim
