// What the two halves of snapshot validation share (validate.cc checks the catalogue: topology,
// GPU models, queues, nodes; validate_jobs.cc checks the jobs against it, then over-commitment).
//
// The Catalog is what the first half learned and the second half looks things up in: declared
// levels, models and queues sorted, nodes in input order with their running usage, which the jobs
// half fills in. The helpers build the messages ("{field}: must be >= 0") and keep the first
// error in id order whatever the order of the lists (validate.cc's opening comment says why).
#ifndef GPUPOOL_VALIDATE_CATALOG_H_
#define GPUPOOL_VALIDATE_CATALOG_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "fmt/core.h"
#include "fmt/format.h"
#include "gpupool/snapshot.h"

namespace gpupool::internal::validation {

// GPU indices lie in [0, kMaxGpuIndex).
inline constexpr int32_t kMaxGpuIndex = 1024;

template <typename... Args>
inline absl::Status Invalid(fmt::format_string<Args...> format, Args&&... args) {
  return absl::InvalidArgumentError(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
inline absl::Status Inconsistent(fmt::format_string<Args...> format, Args&&... args) {
  return absl::FailedPreconditionError(fmt::format(format, std::forward<Args>(args)...));
}

// Checks that a quantity lies in [0, kMaxQuantity]. `field` is the full field path.
inline absl::Status CheckQuantity(int64_t value, std::string_view field) {
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

// Position of `id` in `map`, or -1.
inline int32_t Find(const IdMap& map, std::string_view id) {
  auto it = map.find(id);
  return it == map.end() ? -1 : it->second;
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
inline int64_t FindName(const std::vector<std::string_view>& sorted, std::string_view name) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), name);
  if (it == sorted.end() || *it != name) return -1;
  return it - sorted.begin();
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

// The catalogue the first sections build, in which the jobs section looks its references up.
struct Catalog {
  // Declared topology levels, sorted.
  std::vector<std::string_view> levels;
  // GPU models by name; queues by id, with their positions by id; nodes in input order, with
  // their positions by id.
  std::vector<const GpuModel*> models;
  std::vector<const Queue*> queues;
  IdMap queue_index;
  std::vector<NodeInfo> nodes;
  IdMap node_index;

  const GpuModel* FindModel(std::string_view name) const {
    auto it =
        std::lower_bound(models.begin(), models.end(), name,
                         [](const GpuModel* m, std::string_view key) { return m->name < key; });
    if (it == models.end() || (*it)->name != name) return nullptr;
    return *it;
  }
  bool KnownModel(std::string_view name) const { return FindModel(name) != nullptr; }
  bool KnownQueue(std::string_view id) const { return queue_index.contains(id); }
  bool KnownLevel(std::string_view level) const { return FindName(levels, level) >= 0; }
  NodeInfo* FindNode(std::string_view id) {
    const int32_t n = Find(node_index, id);
    return n < 0 ? nullptr : &nodes[static_cast<size_t>(n)];
  }
};

}  // namespace gpupool::internal::validation

#endif  // GPUPOOL_VALIDATE_CATALOG_H_
