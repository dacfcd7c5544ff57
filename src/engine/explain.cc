// Stage 9 (second half): explanations for people.
#include "gpupool/explain.h"

#include <algorithm>
#include <string>

#include "fmt/format.h"

namespace gpupool {
namespace {

std::string DescribePlacements(const std::vector<ReplicaPlacement>& placements) {
  std::string out;
  for (const ReplicaPlacement& p : placements) {
    std::string gpus;
    for (int32_t g : p.gpus) gpus += fmt::format("{}{}", gpus.empty() ? "" : ",", g);
    out += fmt::format("  {}[{}] on node {}", p.group, p.replica, p.node);
    if (!p.gpus.empty()) {
      out += fmt::format(", GPU{} {}", p.gpus.size() > 1 ? "s" : "", gpus);
      if (p.gpu_milli > 0 && p.gpu_milli < kMilliPerGpu) {
        out += fmt::format(" ({} milli-GPUs)", p.gpu_milli);
      }
    }
    out += '\n';
  }
  return out;
}

template <typename T>
const T* FindByJob(const std::vector<T>& items, std::string_view job) {
  auto it = std::lower_bound(items.begin(), items.end(), job,
                             [](const T& item, std::string_view id) { return item.job < id; });
  return it != items.end() && it->job == job ? &*it : nullptr;
}

}  // namespace

absl::StatusOr<std::string> ExplainJob(const Snapshot& snapshot, const Decisions& decisions,
                                       std::string_view job_id) {
  const Job* job = nullptr;
  for (const Job& candidate : snapshot.jobs) {
    if (candidate.id == job_id) job = &candidate;
  }
  if (job == nullptr) {
    return absl::NotFoundError(fmt::format("no job \"{}\" in the snapshot", job_id));
  }
  std::string out = fmt::format("job {} (queue {}, priority {}, submitted at {})\n", job->id,
                                job->queue, job->priority, job->submit_time);
  if (job->state == JobState::kRunning) {
    out += fmt::format("running since {}:\n", job->start_time.value_or(0));
    out += DescribePlacements(job->placements);
    return out;
  }
  if (const StartDecision* start = FindByJob(decisions.starts, job_id)) {
    out += fmt::format("starts now ({} replica{}):\n", start->placements.size(),
                       start->placements.size() == 1 ? "" : "s");
    out += DescribePlacements(start->placements);
    return out;
  }
  if (const PendingDecision* pending = FindByJob(decisions.pending, job_id)) {
    out += fmt::format("pending: {}\n  {}\n", PendingReasonName(pending->reason), pending->detail);
    if (!pending->queue.empty()) {
      out += fmt::format("  blocking queue: {} (GPU model {}), over by {} milli-GPUs\n",
                         pending->queue, pending->gpu_model, pending->shortfall_milli);
    } else if (pending->shortfall_milli > 0) {
      out += fmt::format("  missing: {} milli-GPUs\n", pending->shortfall_milli);
    }
    return out;
  }
  out += "pending: no decision for this job in this cycle\n";
  return out;
}

}  // namespace gpupool
