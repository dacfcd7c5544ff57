// Snapshot validation: the first stage of every Schedule() call.
//
// Rationale. Everything after this stage works on flat arrays and trusts its input: a GPU index
// is on its node, a quantity cannot overflow a sum, a running allocation does not over-commit a
// GPU. So this stage refuses every snapshot that breaks one of those facts, with a message that
// names the field and the id, and it must itself never crash, hang or overflow on any input.
//
// Determinism. A snapshot's lists may come in any order, and the same (bad) snapshot must give the
// same error whatever that order. The error returned is the first one met when every list is
// taken in id order (GPUs by index, quotas by model, placements by group and replica) and the
// sections in a fixed order: now, topology, GPU models, queues, nodes, jobs, then
// over-commitment node by node. Within a list, keys (empty or repeated ids) are checked before
// items. Small lists are sorted; the two large ones, nodes and jobs, are checked in input order
// and the error of the smallest id is kept, which gives the same answer without sorting them.
// Lists whose order carries meaning (topology levels, a group's GPU model preferences) are
// checked in their given order.
//
// Errors. InvalidArgument for a malformed value (empty or duplicate id, out-of-range quantity,
// bad enum value); FailedPrecondition for an inconsistency between parts (an unknown reference, a
// cycle, a running allocation that does not match its job or over-commits its node).
//
// Cost. O(n log n) in the size of the snapshot, and close to linear in practice: node and queue
// ids are hashed, job ids radix-sorted by hash, only small lists (a job's groups and placements, a
// node's GPUs) are sorted, and scratch buffers are reused. A valid E3 S2 snapshot (10,000 nodes,
// 120,000 jobs) validates in about 15 ms, a small fraction of a Schedule() call on it.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "fmt/core.h"
#include "fmt/format.h"
#include "gpupool/schedule.h"
#include "gpupool/snapshot.h"
#include "internal/check.h"

namespace gpupool {
namespace {

// Largest total replica count of one job. Replicas are placed one by one, so a job asking for
// billions of (possibly empty) replicas would make a cycle run out of memory instead of failing.
constexpr int64_t kMaxReplicasPerJob = int64_t{1} << 20;

// GPU indices lie in [0, kMaxGpuIndex).
constexpr int32_t kMaxGpuIndex = 1024;

template <typename... Args>
absl::Status Invalid(fmt::format_string<Args...> format, Args&&... args) {
  return absl::InvalidArgumentError(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
absl::Status Inconsistent(fmt::format_string<Args...> format, Args&&... args) {
  return absl::FailedPreconditionError(fmt::format(format, std::forward<Args>(args)...));
}

// Adds without overflow: the result saturates at the int64 maximum. Inputs are non-negative.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  if (a > std::numeric_limits<int64_t>::max() - b) return std::numeric_limits<int64_t>::max();
  return a + b;
}

// Multiplies without overflow: the result saturates at the int64 maximum. Inputs are
// non-negative.
int64_t SaturatingMul(int64_t a, int64_t b) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) {
    return std::numeric_limits<int64_t>::max();
  }
  return a * b;
}

// Checks that a quantity lies in [0, kMaxQuantity]. `field` is the full field path.
absl::Status CheckQuantity(int64_t value, std::string_view field) {
  if (value < 0) return Invalid("{}: must be >= 0", field);
  if (value > kMaxQuantity) {
    return Invalid("{}: {} is above the maximum {}", field, value, kMaxQuantity);
  }
  return absl::OkStatus();
}

// Same, but builds the field path only when the value is bad (the common case is cheap).
template <typename... Args>
absl::Status CheckQuantityF(int64_t value, fmt::format_string<Args...> field, Args&&... args) {
  if (value >= 0 && value <= kMaxQuantity) return absl::OkStatus();
  return CheckQuantity(value, fmt::format(field, std::forward<Args>(args)...));
}

// Fills `sorted` with pointers to the elements of `items`, sorted by `key` (stable, so that equal
// keys keep their relative order; equal keys are refused anyway). Reuses the buffer's memory.
template <typename T, typename Key>
void SortInto(const std::vector<T>& items, Key key, std::vector<const T*>& sorted) {
  sorted.clear();
  for (const T& item : items) sorted.push_back(&item);
  if (sorted.size() > 1) {
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&key](const T* a, const T* b) { return key(*a) < key(*b); });
  }
}

template <typename T, typename Key>
std::vector<const T*> SortedBy(const std::vector<T>& items, Key key) {
  std::vector<const T*> sorted;
  sorted.reserve(items.size());
  SortInto(items, key, sorted);
  return sorted;
}

// Ids of one section, hashed: id -> position.
using IdMap = absl::flat_hash_map<std::string_view, int32_t>;

// Fills `map` with the ids of `items` (by their `id` member) and returns the error a check in id
// order would meet first among them: an empty id, else the smallest repeated id.
template <typename T>
absl::Status IndexIds(const std::vector<T>& items, std::string_view section, IdMap& map) {
  map.clear();
  map.reserve(items.size());
  const std::string* smallest_duplicate = nullptr;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& id = items[i].id;
    if (id.empty()) return Invalid("{}[].id: must not be empty", section);
    if (!map.emplace(id, static_cast<int32_t>(i)).second &&
        (smallest_duplicate == nullptr || id < *smallest_duplicate)) {
      smallest_duplicate = &id;
    }
  }
  if (smallest_duplicate != nullptr) {
    return Invalid("{}[{}].id: duplicate id", section, *smallest_duplicate);
  }
  return absl::OkStatus();
}

// Position of `id` in `map`, or -1.
int32_t Find(const IdMap& map, std::string_view id) {
  auto it = map.find(id);
  return it == map.end() ? -1 : it->second;
}

// Sorts 64-bit keys: least significant digit first, 16 bits at a time (linear, and faster than a
// comparison sort on the 100,000s of job ids of a large snapshot).
void RadixSort(std::vector<uint64_t>& keys) {
  if (keys.size() < 256) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  std::vector<uint64_t> buffer(keys.size());
  std::vector<size_t> counts(size_t{1} << 16);
  for (int shift = 0; shift < 64; shift += 16) {
    std::fill(counts.begin(), counts.end(), 0);
    for (uint64_t key : keys) ++counts[(key >> shift) & 0xffff];
    size_t total = 0;
    for (size_t& count : counts) {
      const size_t c = count;
      count = total;
      total += c;
    }
    for (uint64_t key : keys) buffer[counts[(key >> shift) & 0xffff]++] = key;
    keys.swap(buffer);
  }
}

// Keeps, of the errors offered for items checked in any order, the one of the smallest id: what a
// check of the items in id order would have returned first.
class SmallestIdError {
 public:
  void Offer(std::string_view id, absl::Status status) {
    if (status.ok() || (!status_.ok() && id_ <= id)) return;
    id_ = id;
    status_ = std::move(status);
  }
  const absl::Status& status() const { return status_; }

 private:
  std::string_view id_;
  absl::Status status_;
};

// Index of `name` in a sorted vector of names; -1 when absent.
int64_t FindName(const std::vector<std::string_view>& sorted, std::string_view name) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), name);
  if (it == sorted.end() || *it != name) return -1;
  return it - sorted.begin();
}

// Checks a section's ids: none empty, none repeated. `sorted` is sorted by id.
template <typename T>
absl::Status CheckIds(const std::vector<const T*>& sorted, std::string_view section) {
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i]->id.empty()) return Invalid("{}[].id: must not be empty", section);
    if (i > 0 && sorted[i]->id == sorted[i - 1]->id) {
      return Invalid("{}[{}].id: duplicate id", section, sorted[i]->id);
    }
  }
  return absl::OkStatus();
}

bool KnownStrictness(Strictness s) {
  return s == Strictness::kRequired || s == Strictness::kPreferred;
}

// What the later checks need to know about one validated node.
struct NodeInfo {
  const Node* node = nullptr;
  // The node's GPUs sorted by index.
  std::vector<const Gpu*> gpus;
  // Memory of one of its GPUs (0 for a CPU-only node).
  int64_t gpu_memory_mib = 0;
  // Milli-GPUs and GPU memory allocated by running jobs, per GPU (aligned with `gpus`), and CPU
  // and memory.
  std::vector<int64_t> used_milli;
  std::vector<int64_t> used_gpu_memory_mib;
  int64_t used_cpu_milli = 0;
  int64_t used_memory_mib = 0;

  // Position of GPU `index` in `gpus`; -1 when the node has no such GPU.
  int64_t FindGpu(int32_t index) const {
    auto it = std::lower_bound(gpus.begin(), gpus.end(), index,
                               [](const Gpu* gpu, int32_t key) { return gpu->index < key; });
    if (it == gpus.end() || (*it)->index != index) return -1;
    return it - gpus.begin();
  }
};

class Validator {
 public:
  explicit Validator(const Snapshot& snapshot) : snapshot_(snapshot) {}

  absl::Status Run() {
    GPUPOOL_RETURN_IF_ERROR(CheckQuantity(snapshot_.now, "now"));
    GPUPOOL_RETURN_IF_ERROR(CheckTopology());
    GPUPOOL_RETURN_IF_ERROR(CheckGpuModels());
    GPUPOOL_RETURN_IF_ERROR(CheckQueues());
    GPUPOOL_RETURN_IF_ERROR(CheckNodes());
    GPUPOOL_RETURN_IF_ERROR(CheckJobs());
    return CheckOverCommitment();
  }

 private:
  // --- topology --------------------------------------------------------------------------------

  absl::Status CheckTopology() {
    const std::vector<std::string>& levels = snapshot_.topology.levels;
    for (size_t i = 0; i < levels.size(); ++i) {
      const std::string& level = levels[i];
      if (level.empty()) return Invalid("topology.levels[{}]: must not be empty", i);
      if (level == "node" || level == "island" || level == "gpu") {
        return Invalid("topology.levels[{}]: \"{}\" is reserved", i, level);
      }
      levels_.push_back(level);
    }
    std::sort(levels_.begin(), levels_.end());
    for (size_t i = 1; i < levels_.size(); ++i) {
      if (levels_[i] == levels_[i - 1]) {
        // Report the position of the second occurrence in declaration order.
        size_t first = 0;
        while (levels[first] != levels_[i]) ++first;
        size_t second = first + 1;
        while (levels[second] != levels_[i]) ++second;
        return Invalid("topology.levels[{}]: duplicate level \"{}\"", second, levels_[i]);
      }
    }
    return absl::OkStatus();
  }

  // --- GPU models ------------------------------------------------------------------------------

  absl::Status CheckGpuModels() {
    models_ = SortedBy(snapshot_.gpu_models,
                       [](const GpuModel& m) -> const std::string& { return m.name; });
    for (size_t i = 0; i < models_.size(); ++i) {
      const GpuModel& model = *models_[i];
      if (model.name.empty()) return Invalid("gpu_models[].name: must not be empty");
      if (model.name == kAnyGpuModel) {
        return Invalid("gpu_models[*].name: \"*\" is reserved for all models");
      }
      if (i > 0 && model.name == models_[i - 1]->name) {
        return Invalid("gpu_models[{}].name: duplicate name", model.name);
      }
    }
    for (const GpuModel* model : models_) {
      if (model->memory_mib <= 0) {
        return Invalid("gpu_models[{}].memory_mib: must be > 0", model->name);
      }
      GPUPOOL_RETURN_IF_ERROR(
          CheckQuantityF(model->memory_mib, "gpu_models[{}].memory_mib", model->name));
      auto speeds = SortedBy(model->speeds, [](const WorkloadSpeed& s) -> const std::string& {
        return s.workload_class;
      });
      for (size_t i = 0; i < speeds.size(); ++i) {
        const WorkloadSpeed& speed = *speeds[i];
        if (speed.workload_class.empty()) {
          return Invalid("gpu_models[{}].speeds[].workload_class: must not be empty", model->name);
        }
        if (i > 0 && speed.workload_class == speeds[i - 1]->workload_class) {
          return Invalid("gpu_models[{}].speeds[{}]: duplicate workload class", model->name,
                         speed.workload_class);
        }
      }
      for (const WorkloadSpeed* speed : speeds) {
        GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(speed->speed_milli,
                                               "gpu_models[{}].speeds[{}].speed_milli", model->name,
                                               speed->workload_class));
      }
    }
    return absl::OkStatus();
  }

  const GpuModel* FindModel(std::string_view name) const {
    auto it =
        std::lower_bound(models_.begin(), models_.end(), name,
                         [](const GpuModel* m, std::string_view key) { return m->name < key; });
    if (it == models_.end() || (*it)->name != name) return nullptr;
    return *it;
  }

  bool KnownModel(std::string_view name) const { return FindModel(name) != nullptr; }

  // --- queues ----------------------------------------------------------------------------------

  absl::Status CheckQueues() {
    queues_ = SortedBy(snapshot_.queues, [](const Queue& q) -> const std::string& { return q.id; });
    GPUPOOL_RETURN_IF_ERROR(CheckIds(queues_, "queues"));
    queue_index_.reserve(queues_.size());
    for (size_t i = 0; i < queues_.size(); ++i) {
      queue_index_.emplace(queues_[i]->id, static_cast<int32_t>(i));
    }
    for (const Queue* queue : queues_) {
      GPUPOOL_RETURN_IF_ERROR(CheckQueue(*queue));
    }
    return CheckQueueCycles();
  }

  absl::Status CheckQueue(const Queue& queue) {
    const std::string& id = queue.id;
    if (!queue.parent.empty() && !KnownQueue(queue.parent)) {
      return Inconsistent("queues[{}].parent: unknown queue \"{}\"", id, queue.parent);
    }
    if (queue.isolation != Isolation::kNone && queue.isolation != Isolation::kExclusiveGpu &&
        queue.isolation != Isolation::kExclusiveNode) {
      return Invalid("queues[{}].isolation: unknown value {}", id,
                     static_cast<int>(queue.isolation));
    }
    auto quotas =
        SortedBy(queue.quotas, [](const Quota& q) -> const std::string& { return q.gpu_model; });
    for (size_t i = 0; i < quotas.size(); ++i) {
      const Quota& quota = *quotas[i];
      if (quota.gpu_model.empty()) {
        return Invalid("queues[{}].quotas[].gpu_model: must not be empty", id);
      }
      if (i > 0 && quota.gpu_model == quotas[i - 1]->gpu_model) {
        return Invalid("queues[{}].quotas[{}]: duplicate GPU model", id, quota.gpu_model);
      }
    }
    for (const Quota* quota : quotas) {
      const std::string& model = quota->gpu_model;
      if (model != kAnyGpuModel && !KnownModel(model)) {
        return Inconsistent("queues[{}].quotas[{}].gpu_model: unknown GPU model \"{}\"", id, model,
                            model);
      }
      GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(quota->guaranteed_milli,
                                             "queues[{}].quotas[{}].guaranteed_milli", id, model));
      if (quota->limit_milli.has_value()) {
        GPUPOOL_RETURN_IF_ERROR(
            CheckQuantityF(*quota->limit_milli, "queues[{}].quotas[{}].limit_milli", id, model));
        if (quota->guaranteed_milli > *quota->limit_milli) {
          return Invalid("queues[{}].quotas[{}].guaranteed_milli: {} is above limit_milli {}", id,
                         model, quota->guaranteed_milli, *quota->limit_milli);
        }
      }
      GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(quota->over_quota_weight,
                                             "queues[{}].quotas[{}].over_quota_weight", id, model));
    }
    if (queue.budget_milli_gpu_seconds.has_value()) {
      GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(*queue.budget_milli_gpu_seconds,
                                             "queues[{}].budget_milli_gpu_seconds", id));
    }
    return CheckQuantityF(queue.decayed_usage_milli_gpu_seconds,
                          "queues[{}].decayed_usage_milli_gpu_seconds", id);
  }

  // Walks the parent links from each queue in id order; the first cycle met is reported starting
  // from its smallest id, so the message does not depend on where the walk entered it.
  absl::Status CheckQueueCycles() {
    enum Color : uint8_t { kWhite, kGrey, kBlack };
    std::vector<Color> color(queues_.size(), kWhite);
    auto index_of = [this](std::string_view id) -> int64_t { return Find(queue_index_, id); };
    std::vector<int64_t> path;
    for (size_t start = 0; start < queues_.size(); ++start) {
      if (color[start] != kWhite) continue;
      path.clear();
      int64_t at = static_cast<int64_t>(start);
      while (true) {
        if (color[at] == kBlack) break;
        if (color[at] == kGrey) {
          // `at` is on the current path: the cycle is path[pos..].
          size_t pos = 0;
          while (path[pos] != at) ++pos;
          std::vector<int64_t> cycle(path.begin() + static_cast<std::ptrdiff_t>(pos), path.end());
          auto smallest = std::min_element(cycle.begin(), cycle.end());
          std::rotate(cycle.begin(), smallest, cycle.end());
          std::string text;
          for (int64_t q : cycle) text += fmt::format("{} -> ", queues_[q]->id);
          text += queues_[cycle.front()]->id;
          return Inconsistent("queues[{}].parent: cycle {}", queues_[cycle.front()]->id, text);
        }
        color[at] = kGrey;
        path.push_back(at);
        const std::string& parent = queues_[at]->parent;
        if (parent.empty()) break;
        at = index_of(parent);
      }
      for (int64_t q : path) color[q] = kBlack;
    }
    return absl::OkStatus();
  }

  bool KnownQueue(std::string_view id) const { return queue_index_.contains(id); }

  // --- nodes -----------------------------------------------------------------------------------

  // Nodes are checked in input order (see the file comment); nodes_ follows that order.
  absl::Status CheckNodes() {
    GPUPOOL_RETURN_IF_ERROR(IndexIds(snapshot_.nodes, "nodes", node_index_));
    nodes_.resize(snapshot_.nodes.size());
    SmallestIdError first;
    for (size_t i = 0; i < snapshot_.nodes.size(); ++i) {
      const Node& node = snapshot_.nodes[i];
      nodes_[i].node = &node;
      first.Offer(node.id, CheckNode(node, nodes_[i]));
    }
    return first.status();
  }

  absl::Status CheckNode(const Node& node, NodeInfo& info) {
    const std::string& id = node.id;
    if (node.state != NodeState::kReady && node.state != NodeState::kCordoned &&
        node.state != NodeState::kDraining && node.state != NodeState::kDown) {
      return Invalid("nodes[{}].state: unknown value {}", id, static_cast<int>(node.state));
    }
    if (!node.gpu_model.empty() && !KnownModel(node.gpu_model)) {
      return Inconsistent("nodes[{}].gpu_model: unknown GPU model \"{}\"", id, node.gpu_model);
    }
    if (!node.gpus.empty() && node.gpu_model.empty()) {
      return Invalid("nodes[{}].gpu_model: must name a GPU model when the node has GPUs", id);
    }
    SortInto(
        node.gpus, [](const Gpu& g) { return g.index; }, info.gpus);
    for (size_t i = 0; i < info.gpus.size(); ++i) {
      const Gpu& gpu = *info.gpus[i];
      if (gpu.index < 0 || gpu.index >= kMaxGpuIndex) {
        return Invalid("nodes[{}].gpus[{}].index: must be in [0, {})", id, gpu.index, kMaxGpuIndex);
      }
      if (i > 0 && gpu.index == info.gpus[i - 1]->index) {
        return Invalid("nodes[{}].gpus[{}].index: duplicate index", id, gpu.index);
      }
    }
    // Only once the indices are known unique is each GPU checked, so that of two GPUs with one
    // index, the one listed first cannot decide the error.
    for (const Gpu* gpu : info.gpus) {
      if (gpu->island < 0) {
        return Invalid("nodes[{}].gpus[{}].island: must be >= 0", id, gpu->index);
      }
    }
    info.used_milli.assign(info.gpus.size(), 0);
    info.used_gpu_memory_mib.assign(info.gpus.size(), 0);
    if (const GpuModel* model = FindModel(node.gpu_model)) info.gpu_memory_mib = model->memory_mib;
    GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(node.cpu_milli, "nodes[{}].cpu_milli", id));
    GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(node.memory_mib, "nodes[{}].memory_mib", id));

    std::vector<const TopologyLabel*>& path = path_scratch_;
    SortInto(
        node.path, [](const TopologyLabel& l) -> const std::string& { return l.level; }, path);
    for (size_t i = 0; i < path.size(); ++i) {
      const TopologyLabel& label = *path[i];
      if (label.level.empty()) return Invalid("nodes[{}].path[].level: must not be empty", id);
      if (i > 0 && label.level == path[i - 1]->level) {
        return Invalid("nodes[{}].path[{}]: duplicate level", id, label.level);
      }
    }
    for (const TopologyLabel* label : path) {
      if (FindName(levels_, label->level) < 0) {
        return Inconsistent("nodes[{}].path[{}].level: unknown topology level \"{}\"", id,
                            label->level, label->level);
      }
      if (label->value.empty()) {
        return Invalid("nodes[{}].path[{}].value: must not be empty", id, label->level);
      }
    }

    std::vector<const TopologyLabel*>& labels = labels_scratch_;
    SortInto(
        node.labels, [](const TopologyLabel& l) -> const std::string& { return l.level; }, labels);
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i]->level.empty()) return Invalid("nodes[{}].labels[]: key must not be empty", id);
      if (i > 0 && labels[i]->level == labels[i - 1]->level) {
        return Invalid("nodes[{}].labels[{}]: duplicate key", id, labels[i]->level);
      }
    }

    std::vector<std::string_view>& owners = names_scratch_;
    owners.assign(node.owner_queues.begin(), node.owner_queues.end());
    std::sort(owners.begin(), owners.end());
    for (std::string_view owner : owners) {
      if (owner.empty()) return Invalid("nodes[{}].owner_queues: must not hold an empty id", id);
      if (!KnownQueue(owner)) {
        return Inconsistent("nodes[{}].owner_queues: unknown queue \"{}\"", id, owner);
      }
    }
    return absl::OkStatus();
  }

  NodeInfo* FindNode(std::string_view id) {
    const int32_t n = Find(node_index_, id);
    return n < 0 ? nullptr : &nodes_[static_cast<size_t>(n)];
  }

  // --- jobs ------------------------------------------------------------------------------------

  // Jobs are checked in input order (see the file comment). A job that fails may have recorded
  // part of its allocation; that is harmless, as over-commitment is checked only when every job
  // passed.
  //
  // Jobs are the largest list, so their ids are neither sorted as strings nor put in a hash table
  // (a cache miss per job): the pass that checks each job records a 64-bit hash of its id, and a
  // radix sort of those hashes shows whether any two meet; only then are ids compared. Errors of
  // ids still come before errors of items, as in id order.
  absl::Status CheckJobs() {
    const std::vector<Job>& jobs = snapshot_.jobs;
    std::vector<uint64_t>& hashes = hashes_scratch_;
    hashes.clear();
    hashes.reserve(jobs.size());
    SmallestIdError first;
    for (const Job& job : jobs) {
      if (job.id.empty()) return Invalid("jobs[].id: must not be empty");
      hashes.push_back(std::hash<std::string_view>()(job.id));
      first.Offer(job.id, CheckJob(job));
    }
    RadixSort(hashes);
    if (std::adjacent_find(hashes.begin(), hashes.end()) != hashes.end()) {
      // Rare: some hashes meet. Sort the ids whose hash is shared; repeats are neighbours.
      std::vector<std::string_view>& ids = names_scratch_;
      ids.clear();
      for (const Job& job : jobs) {
        const uint64_t hash = std::hash<std::string_view>()(job.id);
        auto [lo, hi] = std::equal_range(hashes.begin(), hashes.end(), hash);
        if (hi - lo > 1) ids.push_back(job.id);
      }
      std::sort(ids.begin(), ids.end());
      for (size_t k = 1; k < ids.size(); ++k) {
        if (ids[k] == ids[k - 1]) return Invalid("jobs[{}].id: duplicate id", ids[k]);
      }
    }
    return first.status();
  }

  absl::Status CheckJob(const Job& job) {
    const std::string& id = job.id;
    if (job.queue.empty()) return Invalid("jobs[{}].queue: must not be empty", id);
    if (!KnownQueue(job.queue)) {
      return Inconsistent("jobs[{}].queue: unknown queue \"{}\"", id, job.queue);
    }
    GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(job.submit_time, "jobs[{}].submit_time", id));
    if (job.groups.empty()) return Invalid("jobs[{}].groups: must not be empty", id);

    std::vector<const TaskGroup*>& groups = groups_scratch_;
    SortInto(
        job.groups, [](const TaskGroup& g) -> const std::string& { return g.name; }, groups);
    for (size_t i = 0; i < groups.size(); ++i) {
      if (groups[i]->name.empty()) return Invalid("jobs[{}].groups[].name: must not be empty", id);
      if (i > 0 && groups[i]->name == groups[i - 1]->name) {
        return Invalid("jobs[{}].groups[{}].name: duplicate name", id, groups[i]->name);
      }
    }
    int64_t total_replicas = 0;
    int64_t total_gpu_milli = 0;
    int64_t total_cpu_milli = 0;
    int64_t total_memory_mib = 0;
    for (const TaskGroup* group : groups) {
      GPUPOOL_RETURN_IF_ERROR(CheckGroup(job, *group));
      // Totals of the whole job stay within kMaxQuantity, so that the engine's sums over a
      // snapshot cannot overflow; the replica count is bounded so that placing them is too.
      const std::string& name = group->name;
      const ResourceRequest& request = group->request;
      total_replicas = SaturatingAdd(total_replicas, group->replicas);
      if (total_replicas > kMaxReplicasPerJob) {
        return Invalid(
            "jobs[{}].groups[{}].replicas: the job's replicas total {}, above the "
            "maximum {}",
            id, name, total_replicas, kMaxReplicasPerJob);
      }
      total_gpu_milli =
          SaturatingAdd(total_gpu_milli, SaturatingMul(group->replicas, request.gpu_milli));
      total_cpu_milli =
          SaturatingAdd(total_cpu_milli, SaturatingMul(group->replicas, request.cpu_milli));
      total_memory_mib =
          SaturatingAdd(total_memory_mib, SaturatingMul(group->replicas, request.memory_mib));
      for (auto [field, total] : {std::pair<const char*, int64_t>{"gpu_milli", total_gpu_milli},
                                  {"cpu_milli", total_cpu_milli},
                                  {"memory_mib", total_memory_mib}}) {
        if (total > kMaxQuantity) {
          return Invalid("jobs[{}].groups[{}].request.{}: the job's total is above the maximum {}",
                         id, name, field, kMaxQuantity);
        }
      }
    }

    const Checkpointing& ckpt = job.checkpointing;
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(ckpt.interval_s, "jobs[{}].checkpointing.interval_s", id));
    if (ckpt.last_checkpoint_time.has_value()) {
      GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(*ckpt.last_checkpoint_time,
                                             "jobs[{}].checkpointing.last_checkpoint_time", id));
    }
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(ckpt.checkpoint_cost_s, "jobs[{}].checkpointing.checkpoint_cost_s", id));
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(ckpt.restore_time_s, "jobs[{}].checkpointing.restore_time_s", id));
    GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(job.min_runtime_s, "jobs[{}].min_runtime_s", id));
    if (job.runtime_estimate_s.has_value()) {
      GPUPOOL_RETURN_IF_ERROR(
          CheckQuantityF(*job.runtime_estimate_s, "jobs[{}].runtime_estimate_s", id));
    }
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(job.attained_service_s, "jobs[{}].attained_service_s", id));
    if (job.pending_since.has_value()) {
      GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(*job.pending_since, "jobs[{}].pending_since", id));
      if (*job.pending_since < job.submit_time) {
        return Invalid("jobs[{}].pending_since: {} is before its submit_time {}", id,
                       *job.pending_since, job.submit_time);
      }
    }

    switch (job.state) {
      case JobState::kPending:
        if (!job.placements.empty()) {
          return Inconsistent("jobs[{}].placements: a pending job must have none", id);
        }
        if (job.start_time.has_value()) {
          return Inconsistent("jobs[{}].start_time: a pending job must have none", id);
        }
        return absl::OkStatus();
      case JobState::kRunning:
        return CheckRunning(job, groups);
    }
    return Invalid("jobs[{}].state: unknown value {}", id, static_cast<int>(job.state));
  }

  absl::Status CheckGroup(const Job& job, const TaskGroup& group) {
    const std::string& id = job.id;
    const std::string& name = group.name;
    if (group.replicas < 1) {
      return Invalid("jobs[{}].groups[{}].replicas: must be >= 1", id, name);
    }
    if (group.min_replicas.has_value()) {
      if (*group.min_replicas < 1) {
        return Invalid("jobs[{}].groups[{}].min_replicas: must be >= 1", id, name);
      }
      if (*group.min_replicas > group.replicas) {
        return Invalid("jobs[{}].groups[{}].min_replicas: {} is above replicas {}", id, name,
                       *group.min_replicas, group.replicas);
      }
    }
    const ResourceRequest& request = group.request;
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(request.gpu_milli, "jobs[{}].groups[{}].request.gpu_milli", id, name));
    if (request.gpu_milli > kMilliPerGpu && request.gpu_milli % kMilliPerGpu != 0) {
      return Invalid(
          "jobs[{}].groups[{}].request.gpu_milli: {} is above 1000 and not a multiple of 1000", id,
          name, request.gpu_milli);
    }
    if (request.GpuCount() > kMaxGpuIndex) {
      return Invalid("jobs[{}].groups[{}].request.gpu_milli: {} asks for more than {} GPUs", id,
                     name, request.gpu_milli, kMaxGpuIndex);
    }
    GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(request.gpu_memory_mib,
                                           "jobs[{}].groups[{}].request.gpu_memory_mib", id, name));
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(request.cpu_milli, "jobs[{}].groups[{}].request.cpu_milli", id, name));
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(request.memory_mib, "jobs[{}].groups[{}].request.memory_mib", id, name));

    // The list is a preference order, so it is checked as given. A model the pool does not have
    // is allowed: the job stays pending (no-allowed-gpu-model) until such nodes join.
    std::vector<std::string_view>& seen = names_scratch_;
    seen.clear();
    for (const std::string& model : group.gpu_models) {
      if (model.empty()) {
        return Invalid("jobs[{}].groups[{}].gpu_models: must not hold an empty name", id, name);
      }
      if (model == kAnyGpuModel) {
        return Invalid(
            "jobs[{}].groups[{}].gpu_models: \"*\" is not a model (leave the list "
            "empty to accept any)",
            id, name);
      }
      seen.push_back(model);
    }
    std::sort(seen.begin(), seen.end());
    for (size_t i = 1; i < seen.size(); ++i) {
      if (seen[i] == seen[i - 1]) {
        return Invalid("jobs[{}].groups[{}].gpu_models: duplicate model \"{}\"", id, name, seen[i]);
      }
    }

    const TopologyConstraint& topology = group.topology;
    if (topology.replica_scope != ReplicaScope::kNode &&
        topology.replica_scope != ReplicaScope::kIsland) {
      return Invalid("jobs[{}].groups[{}].topology.replica_scope: unknown value {}", id, name,
                     static_cast<int>(topology.replica_scope));
    }
    if (!KnownStrictness(topology.replica_strictness)) {
      return Invalid("jobs[{}].groups[{}].topology.replica_strictness: unknown value {}", id, name,
                     static_cast<int>(topology.replica_strictness));
    }
    if (!KnownStrictness(topology.gang_strictness)) {
      return Invalid("jobs[{}].groups[{}].topology.gang_strictness: unknown value {}", id, name,
                     static_cast<int>(topology.gang_strictness));
    }
    if (topology.gang_level.has_value()) {
      const std::string& level = *topology.gang_level;
      if (level.empty()) {
        return Invalid("jobs[{}].groups[{}].topology.gang_level: must not be empty", id, name);
      }
      if (level != "node" && FindName(levels_, level) < 0) {
        return Inconsistent(
            "jobs[{}].groups[{}].topology.gang_level: unknown topology level \"{}\"", id, name,
            level);
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckRunning(const Job& job, const std::vector<const TaskGroup*>& groups) {
    const std::string& id = job.id;
    if (!job.start_time.has_value()) {
      return Inconsistent("jobs[{}].start_time: a running job must have one", id);
    }
    GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(*job.start_time, "jobs[{}].start_time", id));

    std::vector<const ReplicaPlacement*>& placements = placements_scratch_;
    SortInto(
        job.placements,
        [](const ReplicaPlacement& p) {
          return std::pair<std::string_view, int32_t>(p.group, p.replica);
        },
        placements);
    // Position of group `name` in `groups`; -1 when the job has no such group.
    auto find_group = [&groups](std::string_view name) -> int64_t {
      auto it =
          std::lower_bound(groups.begin(), groups.end(), name,
                           [](const TaskGroup* g, std::string_view key) { return g->name < key; });
      if (it == groups.end() || (*it)->name != name) return -1;
      return it - groups.begin();
    };
    // Replicas counted per group, aligned with `groups`.
    std::vector<int64_t> counts(groups.size(), 0);
    std::vector<int32_t>& gpus = gpus_scratch_;
    // First the keys (group, replica) of every placement, so that of two placements of one
    // replica, the one listed first cannot decide the error; then each placement.
    for (size_t i = 0; i < placements.size(); ++i) {
      const ReplicaPlacement& p = *placements[i];
      const int64_t group_index = find_group(p.group);
      if (group_index < 0) {
        return Inconsistent("jobs[{}].placements[{}/{}].group: unknown group \"{}\"", id, p.group,
                            p.replica, p.group);
      }
      const TaskGroup* group = groups[static_cast<size_t>(group_index)];
      if (p.replica < 0 || p.replica >= group->replicas) {
        return Invalid("jobs[{}].placements[{}/{}].replica: must be in [0, {})", id, p.group,
                       p.replica, group->replicas);
      }
      if (i > 0 && p.group == placements[i - 1]->group && p.replica == placements[i - 1]->replica) {
        return Invalid("jobs[{}].placements[{}/{}]: duplicate replica", id, p.group, p.replica);
      }
      ++counts[static_cast<size_t>(group_index)];
    }
    for (const ReplicaPlacement* placement : placements) {
      const ReplicaPlacement& p = *placement;
      const TaskGroup* group = groups[static_cast<size_t>(find_group(p.group))];

      NodeInfo* node = FindNode(p.node);
      if (node == nullptr) {
        return Inconsistent("jobs[{}].placements[{}/{}].node: unknown node \"{}\"", id, p.group,
                            p.replica, p.node);
      }
      const ResourceRequest& request = group->request;
      const int64_t milli = request.MilliPerGpu();
      if (p.gpu_milli < 0) {
        return Invalid("jobs[{}].placements[{}/{}].gpu_milli: must be >= 0", id, p.group,
                       p.replica);
      }
      if (p.gpu_milli != 0 && p.gpu_milli != milli) {
        return Inconsistent(
            "jobs[{}].placements[{}/{}].gpu_milli: {} differs from the group's {} "
            "per GPU",
            id, p.group, p.replica, p.gpu_milli, milli);
      }
      if (static_cast<int64_t>(p.gpus.size()) != request.GpuCount()) {
        return Inconsistent("jobs[{}].placements[{}/{}].gpus: {} GPUs given, the group asks for {}",
                            id, p.group, p.replica, p.gpus.size(), request.GpuCount());
      }
      gpus.assign(p.gpus.begin(), p.gpus.end());
      std::sort(gpus.begin(), gpus.end());
      for (size_t g = 0; g < gpus.size(); ++g) {
        if (g > 0 && gpus[g] == gpus[g - 1]) {
          return Invalid("jobs[{}].placements[{}/{}].gpus: duplicate GPU {}", id, p.group,
                         p.replica, gpus[g]);
        }
        if (node->FindGpu(gpus[g]) < 0) {
          return Inconsistent("jobs[{}].placements[{}/{}].gpus: node {} has no GPU {}", id, p.group,
                              p.replica, p.node, gpus[g]);
        }
      }
      if (!gpus.empty() && !group->gpu_models.empty() &&
          std::find(group->gpu_models.begin(), group->gpu_models.end(), node->node->gpu_model) ==
              group->gpu_models.end()) {
        return Inconsistent(
            "jobs[{}].placements[{}/{}].node: node {} has GPU model \"{}\", which "
            "the group does not accept",
            id, p.group, p.replica, p.node, node->node->gpu_model);
      }
      if (!gpus.empty() && request.gpu_memory_mib > node->gpu_memory_mib) {
        return Inconsistent(
            "jobs[{}].placements[{}/{}].node: the group needs {} MiB per GPU, "
            "node {} has {} MiB GPUs",
            id, p.group, p.replica, request.gpu_memory_mib, p.node, node->gpu_memory_mib);
      }
      // Record the allocation; over-commitment is checked once every job is in. A share of a
      // GPU takes the GPU memory it asks for, a whole GPU all of it.
      const int64_t gpu_memory =
          milli < kMilliPerGpu ? request.gpu_memory_mib : node->gpu_memory_mib;
      for (int32_t index : gpus) {
        const size_t g = static_cast<size_t>(node->FindGpu(index));
        node->used_milli[g] = SaturatingAdd(node->used_milli[g], milli);
        node->used_gpu_memory_mib[g] = SaturatingAdd(node->used_gpu_memory_mib[g], gpu_memory);
      }
      node->used_cpu_milli = SaturatingAdd(node->used_cpu_milli, request.cpu_milli);
      node->used_memory_mib = SaturatingAdd(node->used_memory_mib, request.memory_mib);
    }
    for (size_t g = 0; g < groups.size(); ++g) {
      const TaskGroup& group = *groups[g];
      if (counts[g] < group.MinReplicas() || counts[g] > group.replicas) {
        return Inconsistent(
            "jobs[{}].groups[{}]: running with {} replicas, needs between {} and "
            "{}",
            id, group.name, counts[g], group.MinReplicas(), group.replicas);
      }
    }
    return absl::OkStatus();
  }

  // --- over-commitment -------------------------------------------------------------------------

  absl::Status CheckOverCommitment() {
    SmallestIdError first;
    for (const NodeInfo& info : nodes_) first.Offer(info.node->id, CheckNodeUsage(info));
    return first.status();
  }

  absl::Status CheckNodeUsage(const NodeInfo& info) {
    const Node& node = *info.node;
    for (size_t g = 0; g < info.gpus.size(); ++g) {
      if (info.used_milli[g] > kMilliPerGpu) {
        return Inconsistent(
            "nodes[{}].gpus[{}]: over-committed: running jobs use {} milli-GPUs "
            "of {}",
            node.id, info.gpus[g]->index, info.used_milli[g], kMilliPerGpu);
      }
      if (info.used_gpu_memory_mib[g] > info.gpu_memory_mib) {
        return Inconsistent(
            "nodes[{}].gpus[{}]: GPU memory over-committed: running jobs use {} "
            "MiB of {}",
            node.id, info.gpus[g]->index, info.used_gpu_memory_mib[g], info.gpu_memory_mib);
      }
    }
    if (info.used_cpu_milli > node.cpu_milli) {
      return Inconsistent("nodes[{}].cpu_milli: over-committed: running jobs use {} of {}", node.id,
                          info.used_cpu_milli, node.cpu_milli);
    }
    if (info.used_memory_mib > node.memory_mib) {
      return Inconsistent("nodes[{}].memory_mib: over-committed: running jobs use {} of {}",
                          node.id, info.used_memory_mib, node.memory_mib);
    }
    return absl::OkStatus();
  }

  const Snapshot& snapshot_;
  // Declared topology levels, sorted.
  std::vector<std::string_view> levels_;
  // GPU models by name; queues by id, with their positions by id; nodes in input order, with
  // their positions by id.
  std::vector<const GpuModel*> models_;
  std::vector<const Queue*> queues_;
  IdMap queue_index_;
  std::vector<NodeInfo> nodes_;
  IdMap node_index_;
  // Scratch buffers, reused from item to item to spare allocations.
  std::vector<const TopologyLabel*> path_scratch_, labels_scratch_;
  std::vector<const TaskGroup*> groups_scratch_;
  std::vector<const ReplicaPlacement*> placements_scratch_;
  std::vector<std::string_view> names_scratch_;
  std::vector<int32_t> gpus_scratch_;
  std::vector<uint64_t> hashes_scratch_;
};

}  // namespace

absl::Status ValidateSnapshot(const Snapshot& snapshot) { return Validator(snapshot).Run(); }

}  // namespace gpupool
