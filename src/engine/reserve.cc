#include "reserve.h"

#include <algorithm>
#include <compare>
#include <string>
#include <vector>

#include "internal/shortest_prefix.h"
#include "order.h"

namespace gpupool::internal {

Reserver::Reserver(const SnapshotIndex& index, WorkingState& state, Placer& placer,
                   const Policy& policy)
    : index_(index),
      state_(state),
      placer_(placer),
      policy_(policy),
      jobs_on_node_(index.node_count()),
      started_now_(index.job_count(), 0),
      placed_(index.job_count()),
      held_(index.node_count(), 0),
      held_gpu_milli_(index.gpu_count(), 0) {
  for (int32_t j = 0; j < index.job_count(); ++j) {
    for (const RunningPlacement& p : index.job(j).placements) {
      std::vector<int32_t>& on = jobs_on_node_[p.node];
      if (on.empty() || on.back() != j) on.push_back(j);
    }
  }
}

void Reserver::NoteStart(int32_t j, const std::vector<ReplicaPlacement>& placements) {
  started_now_[j] = 1;
  placed_[j] = placements;
  for (const ReplicaPlacement& p : placements) {
    const int32_t n = index_.FindNode(p.node);
    if (n == kNone) continue;
    std::vector<int32_t>& on = jobs_on_node_[n];
    if (on.empty() || on.back() != j) on.push_back(j);
  }
}

bool Reserver::Overrun(int32_t j) const {
  const Job& job = *index_.job(j).job;
  if (!policy_.backfill.enabled || !job.backfilled || started_now_[j]) return false;
  if (!job.runtime_estimate_s.has_value() || !job.start_time.has_value()) return false;
  // now > start_time + runtime_estimate_s + margin_s, without overflow (all are validated >= 0
  // and below 2^62, except margin_s, which may be up to the int64 maximum).
  const int64_t ran = index_.snapshot().now - *job.start_time;
  return ran > *job.runtime_estimate_s && ran - *job.runtime_estimate_s > policy_.backfill.margin_s;
}

bool Reserver::OverrunGoesFor(int32_t j, int32_t v) const {
  std::vector<int32_t> pair = {v, j};
  SortInJobOrder(index_, policy_, pair);
  return pair.front() == j;
}

int64_t Reserver::ExpectedEnd(int32_t j, int32_t v) const {
  const Job& job = *index_.job(v).job;
  if (Overrun(v)) {
    // Its estimate proved wrong. With "preempt" a preemptible one goes when a reservation needs
    // its node; otherwise nobody knows when it ends.
    // One that a settling pass evicted and a later one started again in place stays
    // (SnapshotIndex::restored): evicting it would change nothing.
    const bool goes = policy_.backfill.overrun == OverrunAction::kPreempt && job.preemptible &&
                      !index_.restored(v) && OverrunGoesFor(j, v);
    return goes ? index_.snapshot().now : kNever;
  }
  const std::optional<int64_t> work = RemainingWork(job);
  if (!work) return kNever;
  int64_t remaining = *work;
  // A backfilled job was admitted to end by its estimate plus the margin (and is not overrun
  // before then): a reservation counts on that, not on the bare estimate.
  if (policy_.backfill.enabled && job.backfilled) {
    remaining = policy_.backfill.margin_s > kNever - remaining
                    ? kNever
                    : remaining + policy_.backfill.margin_s;
  }
  const int64_t now = index_.snapshot().now;
  return remaining > kNever - now ? kNever : now + remaining;
}

void Reserver::Hold(int32_t j, const std::vector<ReplicaPlacement>& placements) {
  // The flat ids of the GPUs the placement uses.
  std::vector<int32_t> used;
  for (const ReplicaPlacement& p : placements) {
    const int32_t n = index_.FindNode(p.node);
    for (int32_t gpu_index : p.gpus) {
      const int32_t g = n == kNone ? kNone : index_.FindGpu(n, gpu_index);
      if (g != kNone) used.push_back(g);
    }
  }
  std::sort(used.begin(), used.end());
  // Each replica first takes the GPUs of its own placement that have room for its share (and
  // its CPU and memory); then a replica still short takes the node's GPUs that no replica of
  // the placement uses, in index order. Taking the first GPU with room instead could split a
  // GPU that another replica needs whole, and a later start would take the rest of it.
  std::vector<int32_t> short_of(placements.size(), 0);
  for (bool own : {true, false}) {
    for (size_t i = 0; i < placements.size(); ++i) {
      const ReplicaPlacement& p = placements[i];
      const int32_t n = index_.FindNode(p.node);
      const int32_t group = index_.FindGroup(j, p.group);
      if (n == kNone || group == kNone || (!own && short_of[i] == 0)) continue;
      const ResourceRequest& request = index_.job(j).job->groups[group].request;
      const int64_t milli = request.MilliPerGpu();
      const int64_t wanted = own ? static_cast<int64_t>(p.gpus.size()) : short_of[i];
      auto fits = [&](int32_t g) {
        return g != kNone && index_.gpu_healthy(g) && state_.gpu_free_milli(g) >= milli;
      };
      std::vector<int32_t> gpus;
      if (own) {
        for (int32_t gpu_index : p.gpus) {
          const int32_t g = index_.FindGpu(n, gpu_index);
          if (milli > 0 && fits(g)) gpus.push_back(g);
        }
      } else {
        for (int32_t g = index_.gpu_begin(n);
             g < index_.gpu_end(n) && static_cast<int64_t>(gpus.size()) < wanted; ++g) {
          if (fits(g) && !std::binary_search(used.begin(), used.end(), g)) gpus.push_back(g);
        }
      }
      short_of[i] = milli > 0 ? static_cast<int32_t>(wanted - std::ssize(gpus)) : 0;
      const int64_t cpu = own ? std::min(request.cpu_milli, state_.node_free_cpu(n)) : 0;
      const int64_t memory = own ? std::min(request.memory_mib, state_.node_free_memory(n)) : 0;
      if (own) {
        held_[n] = 1;
        state_.MarkHeld(n);
      }
      if (gpus.empty() && cpu == 0 && memory == 0) continue;
      state_.Allocate(j, n, gpus, milli, request.gpu_memory_mib, cpu, memory);
      for (int32_t g : gpus) held_gpu_milli_[g] += milli;
    }
  }
}

bool Reserver::TakeSlice(int32_t job, Slice& s) {
  if (s.gpu != kNone) {
    if (!index_.gpu_healthy(s.gpu)) return false;
    const int64_t milli = std::min(s.milli, state_.gpu_free_milli(s.gpu));
    if (milli <= 0) return false;
    // A whole GPU takes all its memory (Allocate()); a part of one, its share.
    s.gpu_memory_mib = std::min(s.gpu_memory_mib, state_.gpu_free_memory(s.gpu));
    s.milli = milli;
    state_.Allocate(job, s.node, {s.gpu}, s.milli, s.gpu_memory_mib, 0, 0, s.charged);
    held_gpu_milli_[s.gpu] += s.milli;
    return true;
  }
  s.cpu_milli = std::min(s.cpu_milli, state_.node_free_cpu(s.node));
  s.memory_mib = std::min(s.memory_mib, state_.node_free_memory(s.node));
  if (s.cpu_milli <= 0 && s.memory_mib <= 0) return false;
  state_.Allocate(job, s.node, {}, 0, 0, s.cpu_milli, s.memory_mib, s.charged);
  return true;
}

void Reserver::HoldExactly(Held& held, int32_t j, const ReplicaPlacement& p) {
  const int32_t n = index_.FindNode(p.node);
  const int32_t group = index_.FindGroup(j, p.group);
  if (n == kNone || group == kNone) return;
  held_[n] = 1;
  state_.MarkHeld(n);
  const ResourceRequest& request = index_.job(j).job->groups[group].request;
  for (int32_t gpu_index : p.gpus) {
    const int32_t g = index_.FindGpu(n, gpu_index);
    if (g == kNone) continue;
    const int64_t memory =
        p.gpu_milli >= kMilliPerGpu ? index_.gpu_memory_mib(n) : request.gpu_memory_mib;
    Slice slice{n, g, p.gpu_milli, memory, 0, 0, true};
    if (TakeSlice(j, slice)) held.slices.push_back(slice);
  }
  Slice slice{n, kNone, 0, 0, request.cpu_milli, request.memory_mib, true};
  if (TakeSlice(j, slice)) held.slices.push_back(slice);
}

void Reserver::HoldRest(Held& held, int32_t j, int32_t n) {
  for (int32_t g = index_.gpu_begin(n); g < index_.gpu_end(n); ++g) {
    Slice slice{n, g, kMilliPerGpu, index_.gpu_memory_mib(n), 0, 0, false};
    if (TakeSlice(j, slice)) held.slices.push_back(slice);
  }
  Slice slice{n, kNone, 0, 0, state_.node_free_cpu(n), state_.node_free_memory(n), false};
  if (TakeSlice(j, slice)) held.slices.push_back(slice);
}

bool Reserver::PlacedOn(int32_t v, int32_t n) const {
  const std::string& node = index_.node(n).id;
  return std::any_of(placed_[v].begin(), placed_[v].end(),
                     [&](const ReplicaPlacement& p) { return p.node == node; });
}

int64_t Reserver::NodeEnd(int32_t j, int32_t n, const Drain& drain) const {
  int64_t end = index_.snapshot().now;
  for (int32_t v : jobs_on_node_[n]) {
    if (!started_now_[v] && state_.released(v)) continue;  // evicted in this cycle
    const int64_t ends = ExpectedEnd(j, v);
    end = std::max(end, started_now_[v] ? ends : std::min(ends, drain.from(v)));
  }
  return end;
}

std::optional<Reserver::Reservation> Reserver::Reserve(int32_t j, const Drain& drain) {
  const int64_t now = index_.snapshot().now;
  struct Rank {
    int64_t end;   // when the node's work is expected to end
    int64_t busy;  // milli-GPUs in use
    int32_t node;
  };
  std::vector<Rank> ranks;
  for (int32_t n = 0; n < index_.node_count(); ++n) {
    if (held_[n] || !state_.node_open(n)) continue;
    const int64_t busy = int64_t{index_.healthy_gpus(n)} * kMilliPerGpu - state_.node_free_gpu(n);
    ranks.push_back(Rank{NodeEnd(j, n, drain), busy, n});
  }
  std::sort(ranks.begin(), ranks.end(), [](const Rank& a, const Rank& b) {
    if (a.end != b.end) return a.end < b.end;
    if (a.busy != b.busy) return a.busy < b.busy;
    return a.node < b.node;
  });

  // Backfilled jobs running in the snapshot, by expected end (known ends only): each was
  // admitted to be gone by the reservations it borrowed from, so it goes too, wherever it runs,
  // once the prefix emptied ends no earlier than it. Otherwise a backfilled job on a node the
  // reservation uses but does not empty (one whose free GPUs sufficed) would push the
  // reservation onto later nodes in the next pass or cycle, though it ends first. Not one on a
  // node held for an earlier reservation: what it frees there is that reservation's.
  std::vector<std::pair<int64_t, int32_t>> backfilled;
  if (policy_.backfill.enabled) {
    for (int32_t v = 0; v < index_.job_count(); ++v) {
      const JobInfo& info = index_.job(v);
      const Job& job = *info.job;
      if (job.state != JobState::kRunning || !job.backfilled || started_now_[v] ||
          state_.released(v) ||
          std::any_of(info.placements.begin(), info.placements.end(),
                      [&](const RunningPlacement& p) { return held_[p.node] != 0; })) {
        continue;
      }
      const int64_t ends = ExpectedEnd(j, v);
      if (ends != kNever) backfilled.emplace_back(ends, v);
    }
    std::sort(backfilled.begin(), backfilled.end());
  }
  // The events by which room appears, in time order: a ranked node's work ends (it empties), or a
  // backfilled job ends (it goes, wherever it runs); at one time, backfilled jobs first, then
  // nodes in rank order. The reservation takes the shortest prefix of them after which the job
  // fits, so a backfilled job that ends between two nodes' ends counts at its own end (not at the
  // next node's, which could make the expected start later with less work in the way).
  struct Event {
    int64_t time;
    int32_t rank;  // index in ranks, or kNone
    int32_t job;   // a backfilled job, or kNone
  };
  std::vector<Event> events;
  events.reserve(ranks.size() + backfilled.size());
  for (const auto& [ends, v] : backfilled) events.push_back(Event{ends, kNone, v});
  for (size_t i = 0; i < ranks.size(); ++i) {
    events.push_back(Event{ranks[i].end, static_cast<int32_t>(i), kNone});
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    return a.job != kNone && b.job == kNone;
  });
  // Applies the first k events (emptied nodes' running gangs go, wherever they run; without a
  // drain, so do the gangs this cycle started there), tries the job, and rolls back.
  auto try_with = [&](size_t k) {
    const WorkingState::Mark mark = state_.Checkpoint();
    std::vector<int32_t> freed;  // this cycle's starts let go, each once (a gang spans nodes)
    for (size_t e = 0; e < k; ++e) {
      if (events[e].job != kNone) {
        state_.ReleaseRunningJob(events[e].job);
        continue;
      }
      const int32_t n = ranks[events[e].rank].node;
      for (int32_t v : jobs_on_node_[n]) {
        if (!started_now_[v]) {
          state_.ReleaseRunningJob(v);
        } else if (!drain.drains && PlacedOn(v, n) &&
                   std::find(freed.begin(), freed.end(), v) == freed.end()) {
          freed.push_back(v);
          state_.DeallocatePlacements(v, placed_[v]);
        }
      }
    }
    auto placements = placer_.TryStart(j);
    state_.Rollback(mark);
    return placements;
  };
  auto placements = try_with(events.size());
  if (!placements) return std::nullopt;
  // The job just failed with nothing emptied; the placements kept are those of the last prefix
  // that worked, which is the one returned.
  const size_t applied = ShortestWorkingPrefix(
      events.size(),
      [&](size_t k) {
        auto p = try_with(k);
        if (!p) return false;
        placements = std::move(p);
        return true;
      },
      [] { return true; });
  // The ranked nodes emptied (ranks[0, hi)) and the backfilled jobs let go, with the latest end
  // among them.
  size_t hi = 0;
  std::vector<std::pair<int64_t, int32_t>> let_go;
  for (size_t e = 0; e < applied; ++e) {
    if (events[e].job != kNone) {
      let_go.emplace_back(events[e].time, events[e].job);
    } else {
      hi = static_cast<size_t>(events[e].rank) + 1;
    }
  }

  // Draining (preemption.starving_drain): the running jobs on the GPUs the placement uses that
  // may go now, asked in id order; the nodes' expected ends are then those of the work left.
  // Without backfill, a job goes only if that empties some GPU of the placement of the work in
  // the way: where a job that may not go yet (or a start of this cycle) shares every GPU of the
  // placement it uses (fractional work), the room it would free stays short of a GPU, which
  // Hold() does not hold, so it would start again in place, to be drained again by the next
  // cycle. With backfill the hold keeps what is free of each GPU (HoldExactly()), and such a
  // job goes as before: the others on its GPU follow when they may.
  Reservation reservation;
  // The work on each GPU the placement uses: running jobs, which are in the way, and the starts
  // of this pass, which stay.
  struct OnGpu {
    int32_t node, gpu, job;
    auto operator<=>(const OnGpu&) const = default;
  };
  std::vector<OnGpu> on_gpu;
  for (const ReplicaPlacement& p : *placements) {
    const int32_t n = index_.FindNode(p.node);
    if (n == kNone) continue;
    for (int32_t v : jobs_on_node_[n]) {
      if (!started_now_[v] && state_.released(v)) continue;
      const std::vector<ReplicaPlacement>& runs =
          started_now_[v] ? placed_[v] : index_.job(v).job->placements;
      for (const ReplicaPlacement& q : runs) {
        if (q.node != p.node) continue;
        for (int32_t g : q.gpus) {
          if (std::find(p.gpus.begin(), p.gpus.end(), g) != p.gpus.end()) {
            on_gpu.push_back(OnGpu{n, g, v});
          }
        }
      }
    }
  }
  std::sort(on_gpu.begin(), on_gpu.end());
  on_gpu.erase(std::unique(on_gpu.begin(), on_gpu.end()), on_gpu.end());
  std::vector<int32_t> in_the_way;
  for (const OnGpu& w : on_gpu) {
    if (!started_now_[w.job]) in_the_way.push_back(w.job);
  }
  std::sort(in_the_way.begin(), in_the_way.end());
  in_the_way.erase(std::unique(in_the_way.begin(), in_the_way.end()), in_the_way.end());
  // The jobs the drain asks about: without backfill, those with a GPU of the placement that all
  // the work on it leaves, every job there one that may go now (asked as the drain will ask: in
  // id order, each after the others; a start of this pass never goes).
  std::vector<int32_t> asked = in_the_way;
  if (drain.drains && !policy_.backfill.enabled) {
    std::vector<int32_t> may_go;
    for (int32_t v : in_the_way) {
      if (drain.may(v, may_go)) may_go.push_back(v);
    }
    asked.clear();
    for (size_t i = 0; i < on_gpu.size();) {
      size_t end = i;
      bool all_go = true;
      for (; end < on_gpu.size() && on_gpu[end].node == on_gpu[i].node &&
             on_gpu[end].gpu == on_gpu[i].gpu;
           ++end) {
        all_go = all_go && std::binary_search(may_go.begin(), may_go.end(), on_gpu[end].job);
      }
      for (; i < end; ++i) {
        if (all_go) asked.push_back(on_gpu[i].job);
      }
    }
    std::sort(asked.begin(), asked.end());
  }
  // A blocked job's reservation that cannot tell when it starts (work in its way that may not go
  // has no estimate) drains nothing: what a drain freed would idle for as long as that work
  // runs, and the next pass, ranking the nodes again, may make the reservation elsewhere and
  // drain there too. A starving job's drain goes on: it is what bounds the wait.
  int64_t prefix_end = now;  // when the emptied nodes' work ends (before any drain)
  for (size_t i = 0; i < hi; ++i) prefix_end = std::max(prefix_end, ranks[i].end);
  int64_t before = prefix_end;
  for (const auto& [ends, v] : let_go) before = std::max(before, ends);
  if (before == kNever && !drain.without_start) asked.clear();
  for (int32_t v : in_the_way) {
    if (!std::binary_search(asked.begin(), asked.end(), v) || !drain.take(v)) continue;
    state_.ReleaseRunningJob(v);
    reservation.drained.push_back(v);
  }
  if (!reservation.drained.empty()) {
    for (size_t i = 0; i < hi; ++i) ranks[i].end = NodeEnd(j, ranks[i].node, drain);
  }

  std::vector<int64_t> end_of(index_.node_count(), now);
  for (size_t i = 0; i < hi; ++i) end_of[ranks[i].node] = ranks[i].end;
  ReserveDecision decision;
  decision.job = index_.job(j).job->id;
  // Not before the last node of the shortest prefix empties, even when the placement does not
  // use that node: a rule over the whole model (a headroom rule, headroom.h) may need its room.
  int64_t expected = now;
  for (size_t i = 0; i < hi; ++i) expected = std::max(expected, ranks[i].end);
  std::vector<uint8_t> used(index_.node_count(), 0);
  for (const ReplicaPlacement& p : *placements) {
    const int32_t n = index_.FindNode(p.node);
    if (n == kNone) continue;
    used[n] = 1;
    expected = std::max(expected, end_of[n]);
    if (std::find(decision.nodes.begin(), decision.nodes.end(), p.node) == decision.nodes.end()) {
      decision.nodes.push_back(p.node);
    }
  }
  // Nor before the backfilled jobs let go on the nodes it uses end (a drain may have lowered the
  // prefix's ends below theirs), nor before those let go after the last node emptied, wherever
  // they run: the job fits only once they are gone.
  for (const auto& [ends, v] : let_go) {
    if (state_.released(v)) continue;
    const bool after_nodes = ends > prefix_end;
    for (const RunningPlacement& p : index_.job(v).placements) {
      if (after_nodes || used[p.node]) expected = std::max(expected, ends);
    }
  }
  decision.expected_start = expected == kNever ? -1 : expected;
  std::sort(decision.nodes.begin(), decision.nodes.end());
  // What the placement needs per GPU model, and the queue's usage before the hold: the hold
  // charges part of the need, and the rest is held under the queue's limits (HoldLimitRoom()).
  const int32_t queue = index_.job(j).queue;
  std::vector<int64_t> needed(index_.model_count(), 0), usage_before(index_.model_count(), 0);
  for (const ReplicaPlacement& p : *placements) {
    const int32_t n = index_.FindNode(p.node);
    const int32_t group = index_.FindGroup(j, p.group);
    const int32_t m = n == kNone ? kNone : index_.node_model(n);
    if (m == kNone || group == kNone) continue;
    needed[m] += index_.job(j).job->groups[group].request.MilliPerGpu() *
                 static_cast<int64_t>(p.gpus.size());
  }
  for (int32_t m = 0; m < index_.model_count() && queue != kNone; ++m) {
    usage_before[m] = state_.queue_usage(queue, m);
  }
  if (!policy_.backfill.enabled) {
    Hold(j, *placements);
  } else {
    // Overrun backfilled jobs that were counted as ending now go from the nodes the job uses
    // (emptied, or let go as backfilled jobs that end by then), before their capacity is held
    // for it.
    for (const ReplicaPlacement& p : *placements) {
      const int32_t n = index_.FindNode(p.node);
      if (n == kNone) continue;
      for (int32_t v : jobs_on_node_[n]) {
        if (state_.released(v) || !Overrun(v) || ExpectedEnd(j, v) == kNever) continue;
        state_.ReleaseRunningJob(v);
        reservation.evicted.push_back(v);
      }
    }
    std::sort(reservation.evicted.begin(), reservation.evicted.end());
    Held held{j, expected, {}};
    for (const ReplicaPlacement& p : *placements) HoldExactly(held, j, p);
    for (const std::string& node : decision.nodes) HoldRest(held, j, index_.FindNode(node));
    holds_.push_back(std::move(held));
  }
  // So a later job of the queue cannot take the limit room the job needs at its start, as the
  // next cycle, which finds that job running, would refuse this one.
  for (int32_t m = 0; m < index_.model_count() && queue != kNone; ++m) {
    const int64_t rest = needed[m] - (state_.queue_usage(queue, m) - usage_before[m]);
    if (rest > 0) state_.HoldLimitRoom(j, m, rest);
  }
  state_.Commit();
  reservation.decision = std::move(decision);
  return reservation;
}

}  // namespace gpupool::internal
