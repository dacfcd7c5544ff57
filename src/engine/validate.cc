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
//
// Layout. This file holds the driver, Validator::Run(), which fixes the order of the sections, and
// the sections of the catalogue (topology, GPU models, queues, nodes); validate_jobs.cc holds the
// jobs and over-commitment; validate_catalog.h what the two share.
#include "gpupool/validate.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "fmt/core.h"
#include "fmt/format.h"
#include "gpupool/snapshot.h"
#include "internal/check.h"
#include "validate_catalog.h"
#include "validate_jobs.h"

namespace gpupool {
namespace {

using internal::validation::Catalog;
using internal::validation::CheckQuantity;
using internal::validation::CheckQuantityF;
using internal::validation::Find;
using internal::validation::IdMap;
using internal::validation::Inconsistent;
using internal::validation::Invalid;
using internal::validation::kMaxGpuIndex;
using internal::validation::NodeInfo;
using internal::validation::SmallestIdError;
using internal::validation::SortedBy;
using internal::validation::SortInto;

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

class Validator {
 public:
  explicit Validator(const Snapshot& snapshot) : snapshot_(snapshot) {}

  // The sections in their fixed order (see "Determinism" above): this order decides which error
  // a snapshot with several gets, so it lives here, in one place, and nowhere else.
  absl::Status Run() {
    GPUPOOL_RETURN_IF_ERROR(CheckQuantity(snapshot_.now, "now"));
    GPUPOOL_RETURN_IF_ERROR(CheckTopology());
    GPUPOOL_RETURN_IF_ERROR(CheckGpuModels());
    GPUPOOL_RETURN_IF_ERROR(CheckQueues());
    GPUPOOL_RETURN_IF_ERROR(CheckNodes());
    GPUPOOL_RETURN_IF_ERROR(internal::validation::CheckJobs(snapshot_.jobs, catalog_));
    return internal::validation::CheckOverCommitment(catalog_, snapshot_.jobs);
  }

 private:
  // --- topology --------------------------------------------------------------------------------

  absl::Status CheckTopology() {
    const std::vector<std::string>& levels = snapshot_.topology.levels;
    std::vector<std::string_view>& sorted = catalog_.levels;
    for (size_t i = 0; i < levels.size(); ++i) {
      const std::string& level = levels[i];
      if (level.empty()) return Invalid("topology.levels[{}]: must not be empty", i);
      if (level == "node" || level == "island" || level == "gpu") {
        return Invalid("topology.levels[{}]: \"{}\" is reserved", i, level);
      }
      sorted.push_back(level);
    }
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); ++i) {
      if (sorted[i] == sorted[i - 1]) {
        // Report the position of the second occurrence in declaration order.
        size_t first = 0;
        while (levels[first] != sorted[i]) ++first;
        size_t second = first + 1;
        while (levels[second] != sorted[i]) ++second;
        return Invalid("topology.levels[{}]: duplicate level \"{}\"", second, sorted[i]);
      }
    }
    return absl::OkStatus();
  }

  // --- GPU models ------------------------------------------------------------------------------

  absl::Status CheckGpuModels() {
    std::vector<const GpuModel*>& models = catalog_.models;
    models = SortedBy(snapshot_.gpu_models,
                      [](const GpuModel& m) -> const std::string& { return m.name; });
    for (size_t i = 0; i < models.size(); ++i) {
      const GpuModel& model = *models[i];
      if (model.name.empty()) return Invalid("gpu_models[].name: must not be empty");
      if (model.name == kAnyGpuModel) {
        return Invalid("gpu_models[*].name: \"*\" is reserved for all models");
      }
      if (i > 0 && model.name == models[i - 1]->name) {
        return Invalid("gpu_models[{}].name: duplicate name", model.name);
      }
    }
    for (const GpuModel* model : models) {
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

  // --- queues ----------------------------------------------------------------------------------

  absl::Status CheckQueues() {
    std::vector<const Queue*>& queues = catalog_.queues;
    queues = SortedBy(snapshot_.queues, [](const Queue& q) -> const std::string& { return q.id; });
    GPUPOOL_RETURN_IF_ERROR(CheckIds(queues, "queues"));
    catalog_.queue_index.reserve(queues.size());
    for (size_t i = 0; i < queues.size(); ++i) {
      catalog_.queue_index.emplace(queues[i]->id, static_cast<int32_t>(i));
    }
    for (const Queue* queue : queues) {
      GPUPOOL_RETURN_IF_ERROR(CheckQueue(*queue));
    }
    return CheckQueueCycles();
  }

  absl::Status CheckQueue(const Queue& queue) {
    const std::string& id = queue.id;
    if (!queue.parent.empty() && !catalog_.KnownQueue(queue.parent)) {
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
      if (model != kAnyGpuModel && !catalog_.KnownModel(model)) {
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
    GPUPOOL_RETURN_IF_ERROR(CheckQueueLabels(queue));
    if (queue.budget_milli_gpu_seconds.has_value()) {
      GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(*queue.budget_milli_gpu_seconds,
                                             "queues[{}].budget_milli_gpu_seconds", id));
    }
    GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(queue.budget_used_milli_gpu_seconds,
                                           "queues[{}].budget_used_milli_gpu_seconds", id));
    return CheckQuantityF(queue.decayed_usage_milli_gpu_seconds,
                          "queues[{}].decayed_usage_milli_gpu_seconds", id);
  }

  // Labels in key order: keys first (an empty key, then the smallest duplicate), then per key
  // its length and characters, then its value's. Two passes, so that of two labels with one key
  // the one listed first cannot decide the error.
  absl::Status CheckQueueLabels(const Queue& queue) {
    const std::string& id = queue.id;
    std::vector<const TopologyLabel*>& labels = labels_scratch_;
    SortInto(
        queue.labels, [](const TopologyLabel& l) -> const std::string& { return l.level; }, labels);
    for (size_t i = 0; i < labels.size(); ++i) {
      const std::string& key = labels[i]->level;
      if (key.empty()) return Invalid("queues[{}].labels[]: key must not be empty", id);
      if (i > 0 && key == labels[i - 1]->level) {
        return Invalid("queues[{}].labels[{}]: duplicate key", id, Shown(key));
      }
    }
    for (size_t i = 0; i < labels.size(); ++i) {
      const std::string& key = labels[i]->level;
      if (key.size() > kMaxLabelKeyBytes) {
        return Invalid("queues[{}].labels[{}]: key is {} bytes long, more than {}", id, Shown(key),
                       key.size(), kMaxLabelKeyBytes);
      }
      if (HasControl(key)) {
        return Invalid("queues[{}].labels[{}]: key must not hold control characters", id,
                       Shown(key));
      }
      const std::string& value = labels[i]->value;
      if (value.empty()) return Invalid("queues[{}].labels[{}].value: must not be empty", id, key);
      if (value.size() > kMaxLabelValueBytes) {
        return Invalid("queues[{}].labels[{}].value: {} bytes long, more than {}", id, key,
                       value.size(), kMaxLabelValueBytes);
      }
      if (HasControl(value)) {
        return Invalid("queues[{}].labels[{}].value: must not hold control characters", id, key);
      }
    }
    return absl::OkStatus();
  }

  // A label key as an error message shows it: control characters as '?', cut after the longest
  // valid key with "...".
  static std::string Shown(std::string_view key) {
    std::string out(key.substr(0, kMaxLabelKeyBytes));
    for (char& c : out) {
      if (IsControl(c)) c = '?';
    }
    if (key.size() > kMaxLabelKeyBytes) out += "...";
    return out;
  }
  static bool IsControl(char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
  }
  static bool HasControl(std::string_view text) {
    return std::any_of(text.begin(), text.end(), IsControl);
  }

  // Walks the parent links from each queue in id order; the first cycle met is reported starting
  // from its smallest id, so the message does not depend on where the walk entered it.
  absl::Status CheckQueueCycles() {
    const std::vector<const Queue*>& queues = catalog_.queues;
    enum Color : uint8_t { kWhite, kGrey, kBlack };
    std::vector<Color> color(queues.size(), kWhite);
    auto index_of = [this](std::string_view id) -> int64_t {
      return Find(catalog_.queue_index, id);
    };
    std::vector<int64_t> path;
    for (size_t start = 0; start < queues.size(); ++start) {
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
          for (int64_t q : cycle) text += fmt::format("{} -> ", queues[q]->id);
          text += queues[cycle.front()]->id;
          return Inconsistent("queues[{}].parent: cycle {}", queues[cycle.front()]->id, text);
        }
        color[at] = kGrey;
        path.push_back(at);
        const std::string& parent = queues[at]->parent;
        if (parent.empty()) break;
        at = index_of(parent);
      }
      for (int64_t q : path) color[q] = kBlack;
    }
    return absl::OkStatus();
  }

  // --- nodes -----------------------------------------------------------------------------------

  // Nodes are checked in input order (see the file comment); catalog_.nodes follows that order.
  absl::Status CheckNodes() {
    GPUPOOL_RETURN_IF_ERROR(IndexIds(snapshot_.nodes, "nodes", catalog_.node_index));
    std::vector<NodeInfo>& nodes = catalog_.nodes;
    nodes.resize(snapshot_.nodes.size());
    SmallestIdError first;
    for (size_t i = 0; i < snapshot_.nodes.size(); ++i) {
      const Node& node = snapshot_.nodes[i];
      nodes[i].node = &node;
      first.Offer(node.id, CheckNode(node, nodes[i]));
    }
    return first.status();
  }

  absl::Status CheckNode(const Node& node, NodeInfo& info) {
    const std::string& id = node.id;
    if (node.state != NodeState::kReady && node.state != NodeState::kCordoned &&
        node.state != NodeState::kDraining && node.state != NodeState::kDown) {
      return Invalid("nodes[{}].state: unknown value {}", id, static_cast<int>(node.state));
    }
    if (!node.gpu_model.empty() && !catalog_.KnownModel(node.gpu_model)) {
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
      GPUPOOL_RETURN_IF_ERROR(
          CheckQuantityF(gpu->xid_errors, "nodes[{}].gpus[{}].xid_errors", id, gpu->index));
      GPUPOOL_RETURN_IF_ERROR(
          CheckQuantityF(gpu->ecc_errors, "nodes[{}].gpus[{}].ecc_errors", id, gpu->index));
      if (gpu->errors_since) {
        GPUPOOL_RETURN_IF_ERROR(
            CheckQuantityF(*gpu->errors_since, "nodes[{}].gpus[{}].errors_since", id, gpu->index));
      }
    }
    GPUPOOL_RETURN_IF_ERROR(CheckOperations(node));
    info.used_milli.assign(info.gpus.size(), 0);
    info.used_gpu_memory_mib.assign(info.gpus.size(), 0);
    if (const GpuModel* model = catalog_.FindModel(node.gpu_model))
      info.gpu_memory_mib = model->memory_mib;
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
      if (!catalog_.KnownLevel(label->level)) {
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
    for (size_t i = 0; i < owners.size(); ++i) {
      const std::string_view owner = owners[i];
      if (owner.empty()) return Invalid("nodes[{}].owner_queues: must not hold an empty id", id);
      if (i > 0 && owner == owners[i - 1]) {
        return Invalid("nodes[{}].owner_queues: queue \"{}\" named twice", id, owner);
      }
      if (!catalog_.KnownQueue(owner)) {
        return Inconsistent("nodes[{}].owner_queues: unknown queue \"{}\"", id, owner);
      }
    }
    if (node.reclaiming && !node.spot) {
      return Invalid("nodes[{}].reclaiming: only a spot node is reclaimed (set spot)", id);
    }
    if (node.reclaim_deadline.has_value()) {
      if (!node.reclaiming) {
        return Invalid("nodes[{}].reclaim_deadline: set only on a node that is reclaiming", id);
      }
      if (*node.reclaim_deadline < 0) {
        return Invalid("nodes[{}].reclaim_deadline: must be >= 0", id);
      }
    }
    return absl::OkStatus();
  }

  // The node facts of docs/operations.md: maintenance windows, the last diagnostic, and the
  // cause of an engine-set state.
  absl::Status CheckOperations(const Node& node) {
    const std::string& id = node.id;
    for (size_t i = 0; i < node.maintenance.size(); ++i) {
      const MaintenanceWindow& window = node.maintenance[i];
      GPUPOOL_RETURN_IF_ERROR(
          CheckQuantityF(window.start, "nodes[{}].maintenance[{}].start", id, i));
      GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(window.end, "nodes[{}].maintenance[{}].end", id, i));
      if (window.end <= window.start) {
        return Invalid("nodes[{}].maintenance[{}].end: {} is not after the window's start {}", id,
                       i, window.end, window.start);
      }
      if (i > 0 && window.start < node.maintenance[i - 1].end) {
        return Invalid(
            "nodes[{}].maintenance[{}].start: {} is before the end {} of the window before it "
            "(windows must be in ascending order, without overlap)",
            id, i, window.start, node.maintenance[i - 1].end);
      }
    }
    if (node.last_diagnostic) {
      GPUPOOL_RETURN_IF_ERROR(
          CheckQuantityF(node.last_diagnostic->time, "nodes[{}].last_diagnostic.time", id));
    }
    const char* cause = nullptr;
    switch (node.state_cause) {
      case NodeStateCause::kHost:
        return absl::OkStatus();
      case NodeStateCause::kHealth:
        cause = "health";
        break;
      case NodeStateCause::kDiagnostic:
        cause = "diagnostic";
        break;
      case NodeStateCause::kMaintenance:
        cause = "maintenance";
        break;
      default:
        return Invalid("nodes[{}].state_cause: unknown value {}", id,
                       static_cast<int>(node.state_cause));
    }
    if (node.state == NodeState::kReady) {
      return Inconsistent(
          "nodes[{}].state_cause: \"{}\" but the node is ready (only a node the engine cordoned "
          "or drained has a cause)",
          id, cause);
    }
    return absl::OkStatus();
  }

  const Snapshot& snapshot_;
  Catalog catalog_;
  // Scratch buffers, reused from node to node to spare allocations.
  std::vector<const TopologyLabel*> path_scratch_, labels_scratch_;
  std::vector<std::string_view> names_scratch_;
};

}  // namespace

absl::Status ValidateSnapshot(const Snapshot& snapshot) { return Validator(snapshot).Run(); }

}  // namespace gpupool
