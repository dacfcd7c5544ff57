// The GPU-time ledger's report (ledger.h, docs/accounting.md): the open runs classified as if
// they finished at the report's time, on copies of the state (ledger_state.h).
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/ledger.h"
#include "gpupool/resources.h"
#include "ledger_state.h"

namespace gpupool {

namespace {

using ledger_detail::AddQueueTime;
using ledger_detail::AddWork;
using ledger_detail::Alloc;
using ledger_detail::Classify;
using ledger_detail::JobRecord;
using ledger_detail::NodeRecord;
using ledger_detail::QueueModel;
using ledger_detail::QueueRecord;
using ledger_detail::RunEnd;

}  // namespace

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
