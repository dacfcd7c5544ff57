// The GPU-time ledger (ledger.h, docs/accounting.md).
//
// Two kinds of figures, kept two ways:
//
//   - What busy time went to (productive, lost, restore) is known only when a run ends: a
//     preemption decides after the fact that the time since the last checkpoint was lost. So each
//     run keeps its allocations (node, GPU, milli-GPUs, since when) and classifies them when they
//     close; a report classifies the runs still open as if they finished at its time.
//   - Within-guarantee versus borrowed depends on a queue's total use at each instant, so each
//     queue x model pair integrates its current rates lazily: whenever the queue's use changes,
//     and when a report is made (on a copy).
//
// Both integrate the same allocations over the same seconds, so busy == within + borrowed holds
// exactly, and every other identity of ledger.h follows from sums over the same integers.
#include "gpupool/ledger.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fmt/format.h"
#include "gpupool/resources.h"

namespace gpupool {
namespace {

// 128-bit products of milli-GPU-seconds and prices, which may pass int64 before a division.
__extension__ typedef __int128 Int128;

constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();

// One replica's use of one GPU since `since`.
struct Alloc {
  int32_t node = 0;
  int32_t slot = 0;  // the GPU's position in the node's sorted GPU list
  int64_t milli = 0;
  int64_t since = 0;
  std::string group;
  int32_t replica = 0;
};

struct JobRecord {
  int32_t queue = 0;
  WorkTime work;
  int32_t runs = 0;
  int32_t preemptions = 0;
  int32_t failures = 0;
  bool running = false;
  int64_t run_start = 0;
  int64_t restore_end = 0;
  int64_t checkpoint = kNoTime;
  std::vector<Alloc> allocs;
};

struct NodeRecord {
  std::string id;
  int32_t model = 0;
  std::vector<int32_t> gpu_indices;  // sorted
  std::vector<int64_t> used_milli;   // per slot
  WorkTime work;
};

// A queue's own jobs on one model: current rates and what they integrated to.
struct QueueModel {
  bool used = false;
  int64_t usage = 0;  // milli-GPUs held now
  int64_t within_rate = 0;
  int64_t borrowed_rate = 0;
  int64_t last = 0;  // integrated up to here
  int64_t within = 0;
  int64_t borrowed = 0;
  int64_t peak = 0;
  WorkTime work;  // closed allocations
  std::vector<int64_t> busy_series, within_series, borrowed_series;
};

struct QueueRecord {
  std::string id;
  int32_t parent = -1;
  int32_t depth = 0;
  std::vector<TopologyLabel> labels;  // in key order
  std::vector<int64_t> guarantee;     // per model
  int64_t star_guarantee = 0;
};

void AddWork(WorkTime& into, const WorkTime& w) {
  into.busy += w.busy;
  into.productive += w.productive;
  into.lost_to_preemption += w.lost_to_preemption;
  into.lost_to_failure += w.lost_to_failure;
  into.restore += w.restore;
}

void AddQueueTime(QueueTime& into, const QueueTime& t) {
  AddWork(into.work, t.work);
  into.within_guarantee += t.within_guarantee;
  into.borrowed += t.borrowed;
}

enum class RunEnd { kFinish, kPreempt, kFail };

// Classifies [a.since, end) of one allocation of a run that restores until `restore_end` and whose
// work after `loss_from` (>= restore_end) is lost when the run ends by `how`.
WorkTime Classify(const Alloc& a, int64_t restore_end, int64_t loss_from, int64_t end, RunEnd how) {
  WorkTime w;
  const int64_t length = end - a.since;
  const int64_t restore = std::clamp<int64_t>(restore_end - a.since, 0, length);
  const int64_t lost = how == RunEnd::kFinish
                           ? 0
                           : std::clamp<int64_t>(end - std::max(a.since, loss_from), 0, length);
  w.busy = length * a.milli;
  w.restore = restore * a.milli;
  if (how == RunEnd::kPreempt) w.lost_to_preemption = lost * a.milli;
  if (how == RunEnd::kFail) w.lost_to_failure = lost * a.milli;
  w.productive = (length - restore - lost) * a.milli;
  return w;
}

}  // namespace

struct Ledger::State {
  int64_t start = 0;
  int64_t now = 0;
  int64_t bucket_s = 0;
  int64_t series_start = 0;
  int64_t capacity_rate = 0;  // milli-GPUs of the whole pool
  std::vector<std::string> models;
  std::vector<int64_t> model_gpus;
  std::vector<NodeRecord> nodes;
  // Node id -> position in `nodes` (lookups only, never iterated).
  absl::flat_hash_map<std::string, int32_t> node_index;
  std::vector<QueueRecord> queues;
  std::map<std::string, int32_t, std::less<>> queue_index;
  std::vector<QueueModel> qm;  // queue x model, row-major
  // Jobs in the order of their first start, found by id through a hash index that is never
  // iterated (Report() sorts the ids). A vector and one hash table, rather than a node per job:
  // a host that schedules between events allocates much, and a ledger that keeps a long-lived
  // node per job scatters those allocations over more memory.
  std::vector<JobRecord> job_records;
  std::vector<std::string> job_ids;
  absl::flat_hash_map<std::string, int32_t> job_index;
  // Per model, reused by every event.
  std::vector<int64_t> delta_scratch;

  JobRecord* FindJob(std::string_view id) {
    auto it = job_index.find(absl::string_view(id.data(), id.size()));
    return it == job_index.end() ? nullptr : &job_records[static_cast<size_t>(it->second)];
  }
  const JobRecord* FindJob(std::string_view id) const {
    auto it = job_index.find(absl::string_view(id.data(), id.size()));
    return it == job_index.end() ? nullptr : &job_records[static_cast<size_t>(it->second)];
  }
  JobRecord& FindOrAddJob(const std::string& id) {
    auto [it, added] = job_index.emplace(id, static_cast<int32_t>(job_records.size()));
    if (added) {
      job_records.emplace_back();
      job_ids.push_back(id);
    }
    return job_records[static_cast<size_t>(it->second)];
  }
  // (victim queue, model, by queue or -1) -> milli-GPU-seconds lost.
  std::map<std::tuple<int32_t, int32_t, int32_t>, int64_t> preemption_losses;

  QueueModel& At(int32_t queue, int32_t model) {
    return qm[static_cast<size_t>(queue) * models.size() + static_cast<size_t>(model)];
  }

  // Adds `rate` x [from, to) to a series, cut at bucket boundaries.
  void AddSeries(std::vector<int64_t>& series, int64_t rate, int64_t from, int64_t to) const {
    while (from < to) {
      const auto k = static_cast<size_t>((from - series_start) / bucket_s);
      const int64_t until = std::min(to, series_start + static_cast<int64_t>(k + 1) * bucket_s);
      if (series.size() <= k) series.resize(k + 1, 0);
      series[k] += (until - from) * rate;
      from = until;
    }
  }

  void Integrate(QueueModel& q, int64_t to) const {
    if (to <= q.last) return;
    const int64_t dt = to - q.last;
    q.within += q.within_rate * dt;
    q.borrowed += q.borrowed_rate * dt;
    if (q.usage > 0) q.peak = std::max(q.peak, q.usage);
    if (bucket_s > 0 && q.usage > 0) {
      AddSeries(q.busy_series, q.usage, q.last, to);
      if (q.within_rate > 0) AddSeries(q.within_series, q.within_rate, q.last, to);
      if (q.borrowed_rate > 0) AddSeries(q.borrowed_series, q.borrowed_rate, q.last, to);
    }
    q.last = to;
  }

  // Brings every model of `queue` up to `time`, applies `delta` (per model) to its use and
  // recomputes its rates: per-model guarantees first, then the "*" guarantee over what is left,
  // models in name order.
  void ChangeUsage(int32_t queue, const std::vector<int64_t>& delta, int64_t time) {
    const QueueRecord& record = queues[static_cast<size_t>(queue)];
    int64_t star = record.star_guarantee;
    for (size_t m = 0; m < models.size(); ++m) {
      QueueModel& q = At(queue, static_cast<int32_t>(m));
      Integrate(q, time);
      q.usage += delta[m];
      if (q.usage > 0) q.used = true;
      const int64_t own = std::min(q.usage, record.guarantee[m]);
      const int64_t extra = std::min(q.usage - own, star);
      star -= extra;
      q.within_rate = own + extra;
      q.borrowed_rate = q.usage - q.within_rate;
    }
  }

  absl::Status CheckTime(std::string_view event, std::string_view job, int64_t time) const {
    if (time < now) {
      return absl::InvalidArgumentError(
          fmt::format("{} {}: time {} is before the ledger's time {} (events must come in time "
                      "order)",
                      event, job, time, now));
    }
    const Int128 capacity =
        static_cast<Int128>(capacity_rate) * (static_cast<Int128>(time) - start);
    if (capacity > std::numeric_limits<int64_t>::max()) {
      return absl::OutOfRangeError(
          fmt::format("{} {}: time {}: the pool's capacity since {} no longer fits in int64 "
                      "milli-GPU-seconds",
                      event, job, time, start));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<JobRecord*> RunningJob(std::string_view event, std::string_view job) {
    JobRecord* record = FindJob(job);
    if (record == nullptr) {
      return absl::InvalidArgumentError(fmt::format("{} {}: unknown job", event, job));
    }
    if (!record->running) {
      return absl::FailedPreconditionError(
          fmt::format("{} {}: the job is not running", event, job));
    }
    return record;
  }

  absl::StatusOr<int32_t> ByQueue(std::string_view event, std::string_view job,
                                  std::string_view by_queue) const {
    if (by_queue.empty()) return -1;
    auto it = queue_index.find(by_queue);
    if (it == queue_index.end()) {
      return absl::InvalidArgumentError(
          fmt::format("{} {}: by_queue: unknown queue \"{}\"", event, job, by_queue));
    }
    return it->second;
  }

  // Closes the allocations of `job` selected by `take` at `time`, classifying them as `how`, and
  // credits the job, the nodes and the queue x model pairs.
  template <typename Take>
  void Close(JobRecord& job, int64_t time, RunEnd how, int32_t by_queue, Take take) {
    const int64_t checkpoint = job.checkpoint >= job.run_start ? job.checkpoint : job.run_start;
    const int64_t loss_from = std::max(checkpoint, job.restore_end);
    std::vector<int64_t>& delta = delta_scratch;
    delta.assign(models.size(), 0);
    std::vector<Alloc> kept;
    for (Alloc& a : job.allocs) {
      if (!take(a)) {
        kept.push_back(std::move(a));
        continue;
      }
      NodeRecord& node = nodes[static_cast<size_t>(a.node)];
      const WorkTime w = Classify(a, job.restore_end, loss_from, time, how);
      AddWork(job.work, w);
      AddWork(node.work, w);
      AddWork(At(job.queue, node.model).work, w);
      if (w.lost_to_preemption > 0) {
        preemption_losses[{job.queue, node.model, by_queue}] += w.lost_to_preemption;
      }
      node.used_milli[static_cast<size_t>(a.slot)] -= a.milli;
      delta[static_cast<size_t>(node.model)] -= a.milli;
    }
    job.allocs = std::move(kept);
    ChangeUsage(job.queue, delta, time);
  }

  absl::Status EndRun(std::string_view event, std::string_view job, int64_t time, RunEnd how,
                      std::string_view by_queue, std::optional<int64_t> last_checkpoint) {
    if (absl::Status status = CheckTime(event, job, time); !status.ok()) return status;
    absl::StatusOr<JobRecord*> record = RunningJob(event, job);
    if (!record.ok()) return record.status();
    absl::StatusOr<int32_t> by = ByQueue(event, job, by_queue);
    if (!by.ok()) return by.status();
    if (last_checkpoint.has_value() && *last_checkpoint > time) {
      return absl::InvalidArgumentError(
          fmt::format("{} {}: last_checkpoint {} is after the event's time {}", event, job,
                      *last_checkpoint, time));
    }
    now = time;
    JobRecord& r = **record;
    if (last_checkpoint.has_value()) r.checkpoint = *last_checkpoint;
    Close(r, time, how, *by, [](const Alloc&) { return true; });
    r.running = false;
    if (how == RunEnd::kPreempt) ++r.preemptions;
    if (how == RunEnd::kFail) ++r.failures;
    return absl::OkStatus();
  }
};

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

absl::StatusOr<int64_t> Ledger::SubtreeBusy(std::string_view queue) const {
  const State& s = *state_;
  auto it = s.queue_index.find(queue);
  if (it == s.queue_index.end()) {
    return absl::NotFoundError(fmt::format("SubtreeBusy: unknown queue \"{}\"", queue));
  }
  const int32_t root = it->second;
  const size_t num_models = s.models.size();
  int64_t busy = 0;
  for (size_t q = 0; q < s.queues.size(); ++q) {
    int32_t at = static_cast<int32_t>(q);
    while (at >= 0 && at != root) at = s.queues[static_cast<size_t>(at)].parent;
    if (at != root) continue;
    // What Integrate() would add up to now: within + borrowed is all of the queue's use.
    for (size_t m = 0; m < num_models; ++m) {
      const QueueModel& x = s.qm[q * num_models + m];
      busy += x.within + x.borrowed + x.usage * (s.now - x.last);
    }
  }
  return busy;
}

LedgerReport Ledger::Report() const {
  const State& s = *state_;
  const int64_t end = s.now;
  LedgerReport report;
  report.start_time = s.start;
  report.end_time = end;
  report.series_bucket_s = s.bucket_s;
  report.series_start = s.series_start;
  if (s.bucket_s > 0 && end > s.series_start) {
    report.series_buckets = (end - s.series_start + s.bucket_s - 1) / s.bucket_s;
  }
  const size_t num_models = s.models.size();

  // Closed figures, then the open runs as if they finished now.
  std::vector<QueueModel> qm = s.qm;
  std::vector<WorkTime> node_work(s.nodes.size());
  for (size_t n = 0; n < s.nodes.size(); ++n) node_work[n] = s.nodes[n].work;
  std::vector<int32_t> job_order(s.job_ids.size());
  for (size_t j = 0; j < job_order.size(); ++j) job_order[j] = static_cast<int32_t>(j);
  std::sort(job_order.begin(), job_order.end(), [&](int32_t a, int32_t b) {
    return s.job_ids[static_cast<size_t>(a)] < s.job_ids[static_cast<size_t>(b)];
  });
  for (const int32_t j : job_order) {
    const std::string& id = s.job_ids[static_cast<size_t>(j)];
    const JobRecord& job = s.job_records[static_cast<size_t>(j)];
    JobLedger row;
    row.job = id;
    row.queue = s.queues[static_cast<size_t>(job.queue)].id;
    row.work = job.work;
    row.runs = job.runs;
    row.preemptions = job.preemptions;
    row.failures = job.failures;
    row.running = job.running;
    for (const Alloc& a : job.allocs) {
      const WorkTime w = Classify(a, job.restore_end, end, end, RunEnd::kFinish);
      AddWork(row.work, w);
      AddWork(node_work[static_cast<size_t>(a.node)], w);
      const size_t model = static_cast<size_t>(s.nodes[static_cast<size_t>(a.node)].model);
      AddWork(qm[static_cast<size_t>(job.queue) * num_models + model].work, w);
    }
    report.jobs.push_back(std::move(row));
  }

  for (size_t n = 0; n < s.nodes.size(); ++n) {
    const NodeRecord& node = s.nodes[n];
    NodeLedger row;
    row.node = node.id;
    row.gpu_model = s.models[static_cast<size_t>(node.model)];
    row.gpus = static_cast<int64_t>(node.gpu_indices.size());
    row.capacity = row.gpus * kMilliPerGpu * (end - s.start);
    row.work = node_work[n];
    row.idle = row.capacity - row.work.busy;
    report.nodes.push_back(std::move(row));
  }

  std::vector<QueueTime> own(s.queues.size());
  std::vector<QueueTime> per_model(num_models);
  for (size_t q = 0; q < s.queues.size(); ++q) {
    for (size_t m = 0; m < num_models; ++m) {
      QueueModel& x = qm[q * num_models + m];
      s.Integrate(x, end);
      if (!x.used) continue;
      QueueModelLedger row;
      row.queue = s.queues[q].id;
      row.gpu_model = s.models[m];
      row.own.work = x.work;
      row.own.within_guarantee = x.within;
      row.own.borrowed = x.borrowed;
      row.peak_milli = x.peak;
      if (s.bucket_s > 0) {
        const auto buckets = static_cast<size_t>(report.series_buckets);
        x.busy_series.resize(buckets, 0);
        x.within_series.resize(buckets, 0);
        x.borrowed_series.resize(buckets, 0);
        row.busy_series = std::move(x.busy_series);
        row.within_guarantee_series = std::move(x.within_series);
        row.borrowed_series = std::move(x.borrowed_series);
      }
      AddQueueTime(own[q], row.own);
      AddQueueTime(per_model[m], row.own);
      report.queue_models.push_back(std::move(row));
    }
  }

  // Subtrees: deepest queues first, each adds itself to its parent.
  std::vector<QueueTime> subtree = own;
  std::vector<size_t> by_depth(s.queues.size());
  for (size_t q = 0; q < by_depth.size(); ++q) by_depth[q] = q;
  std::stable_sort(by_depth.begin(), by_depth.end(),
                   [&](size_t a, size_t b) { return s.queues[a].depth > s.queues[b].depth; });
  for (size_t q : by_depth) {
    if (s.queues[q].parent >= 0) {
      AddQueueTime(subtree[static_cast<size_t>(s.queues[q].parent)], subtree[q]);
    }
  }
  for (size_t q = 0; q < s.queues.size(); ++q) {
    const QueueRecord& record = s.queues[q];
    report.queues.push_back(QueueLedger{
        .queue = record.id,
        .parent = record.parent >= 0 ? s.queues[static_cast<size_t>(record.parent)].id : "",
        .depth = record.depth,
        .labels = record.labels,
        .own = own[q],
        .subtree = subtree[q]});
  }

  for (size_t m = 0; m < num_models; ++m) {
    ModelLedger row;
    row.gpu_model = s.models[m];
    row.usage.gpus = s.model_gpus[m];
    row.usage.capacity = s.model_gpus[m] * kMilliPerGpu * (end - s.start);
    row.usage.time = per_model[m];
    row.usage.idle = row.usage.capacity - row.usage.time.work.busy;
    report.pool.gpus += row.usage.gpus;
    report.pool.capacity += row.usage.capacity;
    report.pool.idle += row.usage.idle;
    AddQueueTime(report.pool.time, row.usage.time);
    report.models.push_back(std::move(row));
  }

  for (const auto& [key, lost] : s.preemption_losses) {
    const auto& [victim, model, by] = key;
    report.preemption_losses.push_back(
        PreemptionLoss{.victim_queue = s.queues[static_cast<size_t>(victim)].id,
                       .gpu_model = s.models[static_cast<size_t>(model)],
                       .by_queue = by >= 0 ? s.queues[static_cast<size_t>(by)].id : "",
                       .lost = lost});
  }
  std::sort(report.preemption_losses.begin(), report.preemption_losses.end(),
            [](const PreemptionLoss& a, const PreemptionLoss& b) {
              return std::tie(a.victim_queue, a.gpu_model, a.by_queue) <
                     std::tie(b.victim_queue, b.gpu_model, b.by_queue);
            });
  return report;
}

}  // namespace gpupool
