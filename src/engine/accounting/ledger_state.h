// The GPU-time ledger's state (ledger.h, docs/accounting.md): the records of jobs, nodes and
// queues, and Ledger::State, which keeps them and applies the events to them. Internal to the
// ledger: ledger.cc (setup and events) and ledger_report.cc (the report) include it.
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
#ifndef GPUPOOL_LEDGER_STATE_H_
#define GPUPOOL_LEDGER_STATE_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
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
#include "gpupool/ledger.h"
#include "gpupool/resources.h"

namespace gpupool {
namespace ledger_detail {

// 128-bit products of milli-GPU-seconds and prices, which may pass int64 before a division.
__extension__ typedef __int128 Int128;

inline constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();

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

inline void AddWork(WorkTime& into, const WorkTime& w) {
  into.busy += w.busy;
  into.productive += w.productive;
  into.lost_to_preemption += w.lost_to_preemption;
  into.lost_to_failure += w.lost_to_failure;
  into.restore += w.restore;
}

inline void AddQueueTime(QueueTime& into, const QueueTime& t) {
  AddWork(into.work, t.work);
  into.within_guarantee += t.within_guarantee;
  into.borrowed += t.borrowed;
}

enum class RunEnd { kFinish, kPreempt, kFail };

// Classifies [a.since, end) of one allocation of a run that restores until `restore_end` and whose
// work after `loss_from` (>= restore_end) is lost when the run ends by `how`.
inline WorkTime Classify(const Alloc& a, int64_t restore_end, int64_t loss_from, int64_t end,
                         RunEnd how) {
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

}  // namespace ledger_detail

struct Ledger::State {
  using Alloc = ledger_detail::Alloc;
  using JobRecord = ledger_detail::JobRecord;
  using NodeRecord = ledger_detail::NodeRecord;
  using QueueModel = ledger_detail::QueueModel;
  using QueueRecord = ledger_detail::QueueRecord;
  using RunEnd = ledger_detail::RunEnd;
  using Int128 = ledger_detail::Int128;

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

  // `job` is empty for an event of no job (AdvanceTo).
  absl::Status CheckTime(std::string_view event, std::string_view job, int64_t time) const {
    // Named only on an error: every event passes here.
    auto what = [&] { return job.empty() ? std::string(event) : fmt::format("{} {}", event, job); };
    if (time < now) {
      return absl::InvalidArgumentError(
          fmt::format("{}: time {} is before the ledger's time {} (events must come in time "
                      "order)",
                      what(), time, now));
    }
    const Int128 capacity =
        static_cast<Int128>(capacity_rate) * (static_cast<Int128>(time) - start);
    if (capacity > std::numeric_limits<int64_t>::max()) {
      return absl::OutOfRangeError(
          fmt::format("{}: time {}: the pool's capacity since {} no longer fits in int64 "
                      "milli-GPU-seconds",
                      what(), time, start));
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
      const WorkTime w = ledger_detail::Classify(a, job.restore_end, loss_from, time, how);
      ledger_detail::AddWork(job.work, w);
      ledger_detail::AddWork(node.work, w);
      ledger_detail::AddWork(At(job.queue, node.model).work, w);
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

}  // namespace gpupool

#endif  // GPUPOOL_LEDGER_STATE_H_
