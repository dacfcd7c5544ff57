#include "reserve.h"

#include <algorithm>

#include "internal/shortest_prefix.h"

namespace gpupool::internal {

Reserver::Reserver(const SnapshotIndex& index, WorkingState& state, Placer& placer)
    : index_(index),
      state_(state),
      placer_(placer),
      jobs_on_node_(index.node_count()),
      started_now_(index.job_count(), 0),
      held_(index.node_count(), 0) {
  for (int32_t j = 0; j < index.job_count(); ++j) {
    for (const RunningPlacement& p : index.job(j).placements) {
      std::vector<int32_t>& on = jobs_on_node_[p.node];
      if (on.empty() || on.back() != j) on.push_back(j);
    }
  }
}

void Reserver::NoteStart(int32_t j, const std::vector<ReplicaPlacement>& placements) {
  started_now_[j] = 1;
  for (const ReplicaPlacement& p : placements) {
    const int32_t n = index_.FindNode(p.node);
    if (n == kNone) continue;
    std::vector<int32_t>& on = jobs_on_node_[n];
    if (on.empty() || on.back() != j) on.push_back(j);
  }
}

int64_t Reserver::ExpectedEnd(int32_t j) const {
  const Job& job = *index_.job(j).job;
  if (!job.runtime_estimate_s.has_value()) return kNever;
  const int64_t remaining = std::max<int64_t>(0, *job.runtime_estimate_s - job.attained_service_s);
  const int64_t now = index_.snapshot().now;
  return remaining > kNever - now ? kNever : now + remaining;
}

void Reserver::Hold(int32_t j, const ReplicaPlacement& p) {
  const int32_t n = index_.FindNode(p.node);
  const int32_t group = index_.FindGroup(j, p.group);
  if (n == kNone || group == kNone) return;
  held_[n] = 1;
  state_.MarkHeld(n);
  const ResourceRequest& request = index_.job(j).job->groups[group].request;
  const int64_t milli = request.MilliPerGpu();
  std::vector<int32_t> gpus;
  for (int32_t g = index_.gpu_begin(n);
       g < index_.gpu_end(n) && gpus.size() < p.gpus.size() && milli > 0; ++g) {
    if (index_.gpu_healthy(g) && state_.gpu_free_milli(g) >= milli) gpus.push_back(g);
  }
  const int64_t cpu = std::min(request.cpu_milli, state_.node_free_cpu(n));
  const int64_t memory = std::min(request.memory_mib, state_.node_free_memory(n));
  if (gpus.empty() && cpu == 0 && memory == 0) return;
  state_.Allocate(j, n, gpus, milli, request.gpu_memory_mib, cpu, memory);
}

std::optional<ReserveDecision> Reserver::Reserve(int32_t j) {
  const int64_t now = index_.snapshot().now;
  struct Rank {
    int64_t end;   // when the node's work is expected to end
    int64_t busy;  // milli-GPUs in use
    int32_t node;
  };
  std::vector<Rank> ranks;
  for (int32_t n = 0; n < index_.node_count(); ++n) {
    if (held_[n] || !state_.node_open(n)) continue;
    int64_t end = now;
    for (int32_t v : jobs_on_node_[n]) {
      if (!started_now_[v] && state_.released(v)) continue;  // evicted in this cycle
      end = std::max(end, ExpectedEnd(v));
    }
    const int64_t busy = int64_t{index_.healthy_gpus(n)} * kMilliPerGpu - state_.node_free_gpu(n);
    ranks.push_back(Rank{end, busy, n});
  }
  std::sort(ranks.begin(), ranks.end(), [](const Rank& a, const Rank& b) {
    if (a.end != b.end) return a.end < b.end;
    if (a.busy != b.busy) return a.busy < b.busy;
    return a.node < b.node;
  });

  // Empties the first k ranked nodes (their running gangs go, wherever they run), tries the job,
  // and rolls back.
  auto try_with = [&](size_t k) {
    const WorkingState::Mark mark = state_.Checkpoint();
    for (size_t i = 0; i < k; ++i) {
      for (int32_t v : jobs_on_node_[ranks[i].node]) {
        if (!started_now_[v]) state_.ReleaseRunningJob(v);
      }
    }
    auto placements = placer_.TryStart(j);
    state_.Rollback(mark);
    return placements;
  };
  auto placements = try_with(ranks.size());
  if (!placements) return std::nullopt;
  // The job just failed with nothing emptied; the placements kept are those of the last prefix
  // that worked, which is the one returned.
  const size_t hi = ShortestWorkingPrefix(
      ranks.size(),
      [&](size_t k) {
        auto p = try_with(k);
        if (!p) return false;
        placements = std::move(p);
        return true;
      },
      [] { return true; });

  std::vector<int64_t> end_of(index_.node_count(), now);
  for (size_t i = 0; i < hi; ++i) end_of[ranks[i].node] = ranks[i].end;
  ReserveDecision decision;
  decision.job = index_.job(j).job->id;
  int64_t expected = now;
  for (const ReplicaPlacement& p : *placements) {
    const int32_t n = index_.FindNode(p.node);
    if (n == kNone) continue;
    expected = std::max(expected, end_of[n]);
    if (std::find(decision.nodes.begin(), decision.nodes.end(), p.node) == decision.nodes.end()) {
      decision.nodes.push_back(p.node);
    }
  }
  decision.expected_start = expected == kNever ? -1 : expected;
  std::sort(decision.nodes.begin(), decision.nodes.end());
  for (const ReplicaPlacement& p : *placements) Hold(j, p);
  state_.Commit();
  return decision;
}

}  // namespace gpupool::internal
