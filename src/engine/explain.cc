// Stage 9 (second half): explanations for people.
#include "gpupool/explain.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fmt/format.h"
#include "internal/placements.h"

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

// `text` for a message: valid UTF-8 as it is, any other byte and every control character as
// \xNN, so that the message is valid UTF-8 without NUL bytes whatever a caller passed.
std::string Printable(std::string_view text) {
  static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};  // by sequence length
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80           ? 1
                          : (lead >> 5) == 0x6  ? 2
                          : (lead >> 4) == 0xE  ? 3
                          : (lead >> 3) == 0x1E ? 4
                                                : 0;
    bool valid = length > 0 && i + length <= text.size();
    uint32_t code = length > 1 ? lead & (0x7Fu >> length) : lead;
    for (size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xC0) == 0x80;
      code = (code << 6) | (next & 0x3Fu);
    }
    valid = valid && code >= kSmallest[length] && code <= 0x10FFFF &&
            !(code >= 0xD800 && code <= 0xDFFF) && lead >= 0x20 && lead != 0x7F;
    if (!valid) {
      out += fmt::format("\\x{:02x}", lead);
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

std::string DescribeReservation(const ReserveDecision& reservation) {
  std::string nodes;
  for (const std::string& node : reservation.nodes) {
    nodes += fmt::format("{}{}", nodes.empty() ? "" : ", ", node);
  }
  const std::string when = reservation.expected_start < 0
                               ? "expected start unknown (work there has no runtime estimate)"
                               : fmt::format("expected to start at {}", reservation.expected_start);
  return fmt::format("  reserved: node{} {}, {}\n", reservation.nodes.size() > 1 ? "s" : "", nodes,
                     when);
}

// What the decisions stop or move to make room for job `job`: a line for the jobs preempted for
// it and one for the jobs consolidation moves for it, each with the work they lose; "" if none.
// `lead` says what the room is for: "in room made by" for a start, "for it," for a job that
// waits with a reservation (a drain, or an overrun backfilled job evicted from a reserved node).
std::string DescribeRoomMade(const Decisions& decisions, std::string_view job,
                             std::string_view lead) {
  std::string preempted, moved;
  int64_t preempted_lost = 0, moved_lost = 0;
  for (const PreemptDecision& p : decisions.preemptions) {
    if (p.for_job != job) continue;
    preempted += (preempted.empty() ? "" : ", ") + p.job;
    preempted_lost += p.lost_milli_gpu_seconds;
  }
  for (const MigrateDecision& m : decisions.migrations) {
    if (m.for_job != job) continue;
    moved += (moved.empty() ? "" : ", ") + m.job;
    moved_lost += m.lost_milli_gpu_seconds;
  }
  std::string out;
  if (!preempted.empty()) {
    out += fmt::format("  {} preempting {} (losing {} milli-GPU-seconds)\n", lead, preempted,
                       preempted_lost);
  }
  if (!moved.empty()) {
    out += fmt::format("  {} moving {} (consolidation; losing {} milli-GPU-seconds)\n", lead, moved,
                       moved_lost);
  }
  return out;
}

// Why job `pending.job` waits: its reason, detail, what blocks it, and its reservation with the
// room made for it.
std::string DescribePending(const Decisions& decisions, const PendingDecision& pending) {
  std::string out =
      fmt::format("pending: {}\n  {}\n", PendingReasonName(pending.reason), pending.detail);
  if (!pending.queue.empty()) {
    out += fmt::format("  blocking queue: {} (GPU model {}), over by {} milli-GPUs\n",
                       pending.queue, pending.gpu_model, pending.shortfall_milli);
  } else if (pending.shortfall_milli > 0) {
    out += fmt::format("  missing: {} milli-GPUs\n", pending.shortfall_milli);
  }
  if (!pending.counterfactual.empty()) out += fmt::format("  {}\n", pending.counterfactual);
  if (const ReserveDecision* reservation = FindByJob(decisions.reservations, pending.job)) {
    out += DescribeReservation(*reservation);
    out += DescribeRoomMade(decisions, pending.job, "for it,");
  }
  return out;
}

// What the decisions do to running job `job`: preempt it (and perhaps start it again elsewhere),
// move it, or resize it; "" when it runs on as it is.
std::string DescribeChange(const Decisions& decisions, std::string_view job) {
  std::string out;
  if (const PreemptDecision* preempt = FindByJob(decisions.preemptions, job)) {
    out += preempt->for_job.empty()
               ? fmt::format("preempted now: {}\n", preempt->reason)
               : fmt::format("preempted now for job {}: {}\n", preempt->for_job, preempt->reason);
    out += fmt::format(
        "  loses {} milli-GPU-seconds (work since its last checkpoint, and its "
        "restore)\n",
        preempt->lost_milli_gpu_seconds);
    if (const StartDecision* again = FindByJob(decisions.starts, job)) {
      out += "starts again now:\n" + DescribePlacements(again->placements);
    } else if (const PendingDecision* pending = FindByJob(decisions.pending, job)) {
      // Stopped by a rule, it is pending again within the cycle (docs/decisions-format.md,
      // "Complete").
      out += "then " + DescribePending(decisions, *pending);
    } else if (const ReserveDecision* reservation = FindByJob(decisions.reservations, job)) {
      // A later settling pass reserved for it (docs/engine.md, "Settling").
      out += DescribeReservation(*reservation);
    }
  }
  if (const MigrateDecision* move = FindByJob(decisions.migrations, job)) {
    out += fmt::format("moves now for job {} (consolidation; loses {} milli-GPU-seconds), to:\n",
                       move->for_job, move->lost_milli_gpu_seconds);
    out += DescribePlacements(move->to);
  }
  for (const ResizeDecision& resize : decisions.resizes) {
    if (resize.job != job) continue;
    out += fmt::format("resized now: group {} from {} to {} replicas", resize.group,
                       resize.from_replicas, resize.to_replicas);
    if (!resize.for_job.empty()) {
      out += fmt::format(" for job {} (loses {} milli-GPU-seconds)", resize.for_job,
                         resize.lost_milli_gpu_seconds);
    }
    out += '\n';
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ExplainJob(const Snapshot& snapshot, const Decisions& decisions,
                                       std::string_view job_id) {
  const Job* job = nullptr;
  for (const Job& candidate : snapshot.jobs) {
    if (candidate.id == job_id) job = &candidate;
  }
  if (job == nullptr) {
    return absl::NotFoundError(fmt::format("no job \"{}\" in the snapshot", Printable(job_id)));
  }
  std::string out = fmt::format("job {} (queue {}, priority {}, submitted at {})\n", job->id,
                                job->queue, job->priority, job->submit_time);
  if (job->state == JobState::kRunning) {
    out += fmt::format("running since {}", job->start_time.value_or(0));
    if (job->backfilled) {
      out += job->runtime_estimate_s.has_value()
                 ? fmt::format(" (backfilled, runtime estimate {} s)", *job->runtime_estimate_s)
                 : " (backfilled)";
    }
    out += ":\n" + DescribePlacements(internal::PlacementsWithShares(*job));
    out += DescribeChange(decisions, job_id);
    return out;
  }
  if (const StartDecision* start = FindByJob(decisions.starts, job_id)) {
    out +=
        fmt::format("starts now ({} replica{}){}:\n", start->placements.size(),
                    start->placements.size() == 1 ? "" : "s",
                    start->backfilled ? ", backfilled into capacity held for a reservation" : "");
    out += DescribePlacements(start->placements);
    out += DescribeRoomMade(decisions, job_id, "in room made by");
    return out;
  }
  if (const PendingDecision* pending = FindByJob(decisions.pending, job_id)) {
    return out + DescribePending(decisions, *pending);
  }
  out += "pending: no decision for this job in this cycle\n";
  return out;
}

}  // namespace gpupool
