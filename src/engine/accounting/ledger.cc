// The GPU-time ledger: its setup and events (ledger.h, docs/accounting.md; the state they act on
// and how it keeps its figures: ledger_state.h).
#include "gpupool/ledger.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fmt/format.h"
#include "gpupool/resources.h"
#include "ledger_state.h"

namespace gpupool {

namespace {

using ledger_detail::Alloc;
using ledger_detail::JobRecord;
using ledger_detail::kNoTime;
using ledger_detail::NodeRecord;
using ledger_detail::QueueModel;
using ledger_detail::QueueRecord;
using ledger_detail::RunEnd;

}  // namespace

Ledger::Ledger(std::unique_ptr<State> state) : state_(std::move(state)) {}
Ledger::Ledger(Ledger&&) noexcept = default;
Ledger& Ledger::operator=(Ledger&&) noexcept = default;
Ledger::~Ledger() = default;

absl::StatusOr<Ledger> Ledger::Create(const LedgerSetup& setup) {
  auto s = std::make_unique<State>();
  s->start = setup.start_time;
  s->now = setup.start_time;
  if (setup.series_bucket_s < 0) {
    return absl::InvalidArgumentError(
        fmt::format("series_bucket_s: must be >= 0, got {}", setup.series_bucket_s));
  }
  s->bucket_s = setup.series_bucket_s;
  if (s->bucket_s > 0) {
    s->series_start =
        setup.start_time - ((setup.start_time % s->bucket_s) + s->bucket_s) % s->bucket_s;
  }

  // Nodes, in id order; models in name order.
  std::vector<const Node*> nodes;
  std::map<std::string, int32_t, std::less<>> model_index;
  for (size_t i = 0; i < setup.nodes.size(); ++i) {
    const Node& node = setup.nodes[i];
    if (node.id.empty()) {
      return absl::InvalidArgumentError(fmt::format("nodes[{}].id: empty", i));
    }
    if (node.gpus.empty()) continue;
    if (node.gpu_model.empty()) {
      return absl::InvalidArgumentError(
          fmt::format("nodes[{}] ({}).gpu_model: empty on a node with GPUs", i, node.id));
    }
    model_index.emplace(node.gpu_model, 0);
    nodes.push_back(&node);
  }
  for (auto& [name, index] : model_index) {
    index = static_cast<int32_t>(s->models.size());
    s->models.push_back(name);
  }
  s->model_gpus.assign(s->models.size(), 0);
  std::sort(nodes.begin(), nodes.end(), [](const Node* a, const Node* b) { return a->id < b->id; });
  for (const Node* node : nodes) {
    if (!s->node_index.emplace(node->id, static_cast<int32_t>(s->nodes.size())).second) {
      return absl::InvalidArgumentError(fmt::format("nodes: duplicate id \"{}\"", node->id));
    }
    NodeRecord record;
    record.id = node->id;
    record.model = model_index.at(node->gpu_model);
    for (const Gpu& gpu : node->gpus) record.gpu_indices.push_back(gpu.index);
    std::sort(record.gpu_indices.begin(), record.gpu_indices.end());
    if (std::adjacent_find(record.gpu_indices.begin(), record.gpu_indices.end()) !=
        record.gpu_indices.end()) {
      return absl::InvalidArgumentError(
          fmt::format("nodes ({}).gpus: duplicate GPU index", node->id));
    }
    record.used_milli.assign(record.gpu_indices.size(), 0);
    const auto gpus = static_cast<int64_t>(record.gpu_indices.size());
    s->model_gpus[static_cast<size_t>(record.model)] += gpus;
    if (__builtin_add_overflow(s->capacity_rate, gpus * kMilliPerGpu, &s->capacity_rate)) {
      return absl::OutOfRangeError("nodes: too many GPUs");
    }
    s->nodes.push_back(std::move(record));
  }

  // Queues, in id order, with parents, depths and guarantees per model.
  std::vector<const Queue*> queues;
  for (const Queue& queue : setup.queues) queues.push_back(&queue);
  std::sort(queues.begin(), queues.end(),
            [](const Queue* a, const Queue* b) { return a->id < b->id; });
  for (const Queue* queue : queues) {
    if (queue->id.empty()) return absl::InvalidArgumentError("queues: empty id");
    if (!s->queue_index.emplace(queue->id, static_cast<int32_t>(s->queues.size())).second) {
      return absl::InvalidArgumentError(fmt::format("queues: duplicate id \"{}\"", queue->id));
    }
    QueueRecord record;
    record.id = queue->id;
    record.labels = queue->labels;
    std::sort(record.labels.begin(), record.labels.end(),
              [](const TopologyLabel& a, const TopologyLabel& b) { return a.level < b.level; });
    for (size_t k = 0; k < record.labels.size(); ++k) {
      const TopologyLabel& label = record.labels[k];
      if (label.level.empty()) {
        return absl::InvalidArgumentError(
            fmt::format("queues ({}).labels[]: key must not be empty", queue->id));
      }
      if (k > 0 && label.level == record.labels[k - 1].level) {
        return absl::InvalidArgumentError(
            fmt::format("queues ({}).labels[{}]: duplicate key", queue->id, label.level));
      }
      if (label.value.empty()) {
        return absl::InvalidArgumentError(
            fmt::format("queues ({}).labels[{}].value: must not be empty", queue->id, label.level));
      }
    }
    record.guarantee.assign(s->models.size(), 0);
    std::map<std::string, bool, std::less<>> seen;
    for (size_t k = 0; k < queue->quotas.size(); ++k) {
      const Quota& quota = queue->quotas[k];
      if (quota.guaranteed_milli < 0) {
        return absl::InvalidArgumentError(
            fmt::format("queues ({}).quotas[{}].guaranteed_milli: negative ({})", queue->id, k,
                        quota.guaranteed_milli));
      }
      if (!seen.emplace(quota.gpu_model, true).second) {
        return absl::InvalidArgumentError(
            fmt::format("queues ({}).quotas[{}].gpu_model: a second quota for \"{}\"", queue->id, k,
                        quota.gpu_model));
      }
      if (quota.gpu_model == kAnyGpuModel) {
        record.star_guarantee = quota.guaranteed_milli;
      } else if (auto it = model_index.find(quota.gpu_model); it != model_index.end()) {
        record.guarantee[static_cast<size_t>(it->second)] = quota.guaranteed_milli;
      }
    }
    s->queues.push_back(std::move(record));
  }
  for (const Queue* queue : queues) {
    if (queue->parent.empty()) continue;
    auto it = s->queue_index.find(queue->parent);
    if (it == s->queue_index.end()) {
      return absl::FailedPreconditionError(
          fmt::format("queues ({}).parent: unknown queue \"{}\"", queue->id, queue->parent));
    }
    s->queues[static_cast<size_t>(s->queue_index.at(queue->id))].parent = it->second;
  }
  for (size_t q = 0; q < s->queues.size(); ++q) {
    int32_t depth = 0;
    for (int32_t p = s->queues[q].parent; p >= 0; p = s->queues[static_cast<size_t>(p)].parent) {
      if (++depth > static_cast<int32_t>(s->queues.size())) {
        return absl::FailedPreconditionError(
            fmt::format("queues ({}).parent: the parents form a cycle", s->queues[q].id));
      }
    }
    s->queues[q].depth = depth;
  }
  s->qm.resize(s->queues.size() * s->models.size());
  for (QueueModel& q : s->qm) q.last = s->start;
  return Ledger(std::move(s));
}

int64_t Ledger::now() const { return state_->now; }

bool Ledger::IsRunning(std::string_view job) const {
  const JobRecord* record = state_->FindJob(job);
  return record != nullptr && record->running;
}

absl::Status Ledger::AdvanceTo(int64_t time) {
  if (absl::Status status = state_->CheckTime("AdvanceTo", "", time); !status.ok()) return status;
  state_->now = time;
  return absl::OkStatus();
}

absl::Status Ledger::Start(int64_t time, const LedgerStart& start) {
  State& s = *state_;
  const std::string& id = start.job;
  if (id.empty()) return absl::InvalidArgumentError("Start: job: empty id");
  if (absl::Status status = s.CheckTime("Start", id, time); !status.ok()) return status;
  auto queue_it = s.queue_index.find(start.queue);
  if (queue_it == s.queue_index.end()) {
    return absl::InvalidArgumentError(
        fmt::format("Start {}: queue: unknown queue \"{}\"", id, start.queue));
  }
  const int32_t queue = queue_it->second;
  if (const JobRecord* known = s.FindJob(id); known != nullptr) {
    if (known->running) {
      return absl::FailedPreconditionError(fmt::format("Start {}: the job is already running", id));
    }
    if (known->queue != queue) {
      return absl::FailedPreconditionError(
          fmt::format("Start {}: queue: \"{}\", but the job ran in queue \"{}\" before", id,
                      start.queue, s.queues[static_cast<size_t>(known->queue)].id));
    }
  }
  if (start.restore_s < 0) {
    return absl::InvalidArgumentError(
        fmt::format("Start {}: restore_s: negative ({})", id, start.restore_s));
  }
  if (start.placements.empty()) {
    return absl::InvalidArgumentError(fmt::format("Start {}: placements: empty", id));
  }
  std::vector<Alloc> allocs;
  size_t gpus = 0;
  for (const ReplicaPlacement& placement : start.placements) gpus += placement.gpus.size();
  allocs.reserve(gpus);
  for (size_t p = 0; p < start.placements.size(); ++p) {
    const ReplicaPlacement& placement = start.placements[p];
    auto node_it = s.node_index.find(absl::string_view(placement.node));
    if (node_it == s.node_index.end()) {
      return absl::InvalidArgumentError(
          fmt::format("Start {}: placements[{}].node: unknown node \"{}\"", id, p, placement.node));
    }
    const NodeRecord& node = s.nodes[static_cast<size_t>(node_it->second)];
    if (placement.gpu_milli < 1 || placement.gpu_milli > kMilliPerGpu) {
      return absl::InvalidArgumentError(
          fmt::format("Start {}: placements[{}].gpu_milli: must be in 1..1000, got {}", id, p,
                      placement.gpu_milli));
    }
    if (placement.gpus.empty()) {
      return absl::InvalidArgumentError(fmt::format("Start {}: placements[{}].gpus: empty", id, p));
    }
    for (size_t q = 0; q < p; ++q) {
      const ReplicaPlacement& other = start.placements[q];
      if (other.group == placement.group && other.replica == placement.replica) {
        return absl::InvalidArgumentError(
            fmt::format("Start {}: placements[{}]: replica {} of group \"{}\" is placed twice", id,
                        p, placement.replica, placement.group));
      }
    }
    for (size_t g = 0; g < placement.gpus.size(); ++g) {
      if (std::find(placement.gpus.begin(), placement.gpus.begin() + g, placement.gpus[g]) !=
          placement.gpus.begin() + g) {
        return absl::InvalidArgumentError(fmt::format(
            "Start {}: placements[{}].gpus: GPU {} is listed twice", id, p, placement.gpus[g]));
      }
    }
    for (int32_t gpu : placement.gpus) {
      auto slot_it = std::lower_bound(node.gpu_indices.begin(), node.gpu_indices.end(), gpu);
      if (slot_it == node.gpu_indices.end() || *slot_it != gpu) {
        return absl::InvalidArgumentError(fmt::format(
            "Start {}: placements[{}].gpus: node {} has no GPU {}", id, p, node.id, gpu));
      }
      const auto slot = static_cast<int32_t>(slot_it - node.gpu_indices.begin());
      // What this start puts on the GPU so far (a GPU may hold several of its replicas).
      int64_t sum = placement.gpu_milli;
      for (const Alloc& a : allocs) {
        if (a.node == node_it->second && a.slot == slot) sum += a.milli;
      }
      if (node.used_milli[static_cast<size_t>(slot)] + sum > kMilliPerGpu) {
        return absl::FailedPreconditionError(fmt::format(
            "Start {}: placements[{}]: GPU {} of node {} would be used {} milli-GPUs over its "
            "1000",
            id, p, gpu, node.id, node.used_milli[static_cast<size_t>(slot)] + sum - kMilliPerGpu));
      }
      allocs.push_back(Alloc{.node = node_it->second,
                             .slot = slot,
                             .milli = placement.gpu_milli,
                             .since = time,
                             .group = placement.group,
                             .replica = placement.replica});
    }
  }

  s.now = time;
  JobRecord& job = s.FindOrAddJob(id);
  job.queue = queue;
  job.running = true;
  ++job.runs;
  job.run_start = time;
  job.restore_end = time + start.restore_s;
  job.checkpoint = kNoTime;
  std::vector<int64_t>& delta = s.delta_scratch;
  delta.assign(s.models.size(), 0);
  for (const Alloc& a : allocs) {
    NodeRecord& node = s.nodes[static_cast<size_t>(a.node)];
    node.used_milli[static_cast<size_t>(a.slot)] += a.milli;
    delta[static_cast<size_t>(node.model)] += a.milli;
  }
  job.allocs = std::move(allocs);
  s.ChangeUsage(queue, delta, time);
  return absl::OkStatus();
}

absl::Status Ledger::Checkpoint(int64_t time, std::string_view job) {
  State& s = *state_;
  if (absl::Status status = s.CheckTime("Checkpoint", job, time); !status.ok()) return status;
  absl::StatusOr<JobRecord*> record = s.RunningJob("Checkpoint", job);
  if (!record.ok()) return record.status();
  s.now = time;
  (*record)->checkpoint = time;
  return absl::OkStatus();
}

absl::Status Ledger::Finish(int64_t time, std::string_view job) {
  return state_->EndRun("Finish", job, time, RunEnd::kFinish, {}, std::nullopt);
}

absl::Status Ledger::Preempt(int64_t time, std::string_view job, std::string_view by_queue,
                             std::optional<int64_t> last_checkpoint) {
  return state_->EndRun("Preempt", job, time, RunEnd::kPreempt, by_queue, last_checkpoint);
}

absl::Status Ledger::Fail(int64_t time, std::string_view job,
                          std::optional<int64_t> last_checkpoint) {
  return state_->EndRun("Fail", job, time, RunEnd::kFail, {}, last_checkpoint);
}

absl::Status Ledger::Shrink(int64_t time, std::string_view job, std::string_view group,
                            int32_t to_replicas, bool lost, std::string_view by_queue) {
  State& s = *state_;
  if (absl::Status status = s.CheckTime("Shrink", job, time); !status.ok()) return status;
  absl::StatusOr<JobRecord*> record = s.RunningJob("Shrink", job);
  if (!record.ok()) return record.status();
  absl::StatusOr<int32_t> by = s.ByQueue("Shrink", job, by_queue);
  if (!by.ok()) return by.status();
  if (to_replicas < 0) {
    return absl::InvalidArgumentError(
        fmt::format("Shrink {}: to_replicas: must be >= 0, got {}", job, to_replicas));
  }
  JobRecord& r = **record;
  auto removed = [&](const Alloc& a) { return a.group == group && a.replica >= to_replicas; };
  const bool any = std::any_of(r.allocs.begin(), r.allocs.end(), removed);
  if (!any) {
    return absl::FailedPreconditionError(
        fmt::format("Shrink {}: group \"{}\" has no running replica at index {} or above", job,
                    group, to_replicas));
  }
  if (std::all_of(r.allocs.begin(), r.allocs.end(), removed)) {
    return absl::FailedPreconditionError(fmt::format(
        "Shrink {}: would remove every replica of the job (preempt or finish it instead)", job));
  }
  s.now = time;
  s.Close(r, time, lost ? RunEnd::kPreempt : RunEnd::kFinish, *by, removed);
  return absl::OkStatus();
}

absl::Status Ledger::Record(const Snapshot& snapshot, const Decisions& decisions) {
  const int64_t time = snapshot.now;
  std::map<std::string_view, const Job*> jobs;
  for (const Job& job : snapshot.jobs) jobs.emplace(job.id, &job);
  auto queue_of = [&](const std::string& job) -> std::string_view {
    auto it = jobs.find(job);
    return it == jobs.end() ? std::string_view() : std::string_view(it->second->queue);
  };
  for (const PreemptDecision& p : decisions.preemptions) {
    auto it = jobs.find(p.job);
    std::optional<int64_t> checkpoint = kNoTime;
    if (it != jobs.end() && it->second->checkpointing.last_checkpoint_time.has_value()) {
      checkpoint = it->second->checkpointing.last_checkpoint_time;
    }
    if (absl::Status status = Preempt(time, p.job, queue_of(p.for_job), checkpoint); !status.ok()) {
      return status;
    }
  }
  for (const ResizeDecision& r : decisions.resizes) {
    if (r.to_replicas >= r.from_replicas) {
      return absl::InvalidArgumentError(
          fmt::format("Record: resize of {} from {} to {} replicas: only shrinks are recorded",
                      r.job, r.from_replicas, r.to_replicas));
    }
    if (absl::Status status =
            Shrink(time, r.job, r.group, r.to_replicas,
                   !r.for_job.empty() || r.lost_milli_gpu_seconds > 0, queue_of(r.for_job));
        !status.ok()) {
      return status;
    }
  }
  State& s = *state_;
  for (const MigrateDecision& m : decisions.migrations) {
    if (absl::Status status = s.CheckTime("Migrate", m.job, time); !status.ok()) return status;
    absl::StatusOr<JobRecord*> record = s.RunningJob("Migrate", m.job);
    if (!record.ok()) return record.status();
    JobRecord& r = **record;
    const int64_t restore_end = r.restore_end;
    const int64_t checkpoint = r.checkpoint;
    const int64_t run_start = r.run_start;
    // Close the whole run without loss and start it again on the new GPUs, keeping the run's
    // start, restore and checkpoint: the job does not notice the move.
    std::vector<Alloc> before = r.allocs;
    s.now = time;
    s.Close(r, time, RunEnd::kFinish, -1, [](const Alloc&) { return true; });
    r.running = false;
    LedgerStart start{.job = m.job,
                      .queue = s.queues[static_cast<size_t>(r.queue)].id,
                      .placements = m.to,
                      .restore_s = 0};
    if (absl::Status status = Start(time, start); !status.ok()) return status;
    --r.runs;
    r.run_start = run_start;
    r.restore_end = restore_end;
    r.checkpoint = checkpoint;
  }
  for (const StartDecision& d : decisions.starts) {
    auto it = jobs.find(d.job);
    if (it == jobs.end()) {
      return absl::InvalidArgumentError(
          fmt::format("Record: start of {}: the job is not in the snapshot", d.job));
    }
    const JobRecord* known = s.FindJob(d.job);
    const bool ran_before = known != nullptr && known->runs > 0;
    LedgerStart start{.job = d.job,
                      .queue = it->second->queue,
                      .placements = d.placements,
                      .restore_s = ran_before ? it->second->checkpointing.restore_time_s : 0};
    if (absl::Status status = Start(time, start); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace gpupool
