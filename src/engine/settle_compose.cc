// Settling's bookkeeping: the cycle's decisions composed from what the passes decided
// (settle_compose.h).
#include "settle_compose.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "gpupool/validate.h"
#include "snapshot_index.h"

namespace gpupool::internal {
namespace {

// The job that, in the end, got the room a victim was evicted for `for_job`'s start: that job
// if it starts (`starts`), else, when a later pass undid that start for another job, the one it
// was evicted for, and so on (as far as the chain goes: a job that is not among `starts` when
// the chain ends, or where a start was undone for no one).
std::string_view ChainEnd(const History& history, const std::set<std::string_view>& starts,
                          std::string_view for_job) {
  std::string_view beneficiary = for_job;
  for (int hops = 0; hops < kMaxPasses && !starts.count(beneficiary); ++hops) {
    const std::string id(beneficiary);
    if (!history.last_start.count(id)) break;
    // The eviction that undid its start; a job started again where it ran, with none, was
    // evicted only before (its first eviction).
    if (auto undone = history.undone_for.find(id); undone != history.undone_for.end()) {
      // Undone for no one (a headroom rule restored, an operations rule stopped it): the chain
      // ends at this start.
      if (undone->second.empty()) break;
      beneficiary = undone->second;
      continue;
    }
    auto next = history.first_preempt.find(id);
    if (next == history.first_preempt.end()) break;
    beneficiary = next->second.for_job;
  }
  return beneficiary;
}

// Milli-GPUs that the running jobs of `s` hold, per queue (counted up its chain of parents) and
// GPU model (and kAnyGpuModel), for the queues of `queues` only.
std::map<std::pair<std::string, std::string>, int64_t> QuotaUsage(
    const Snapshot& s, const std::map<std::string, const Queue*>& queues,
    const std::set<std::string>& counted) {
  std::map<std::string, std::string_view> model_of;
  for (const Node& node : s.nodes) model_of.emplace(node.id, node.gpu_model);
  std::map<std::pair<std::string, std::string>, int64_t> usage;
  for (const Job& job : s.jobs) {
    if (job.state != JobState::kRunning) continue;
    for (const ReplicaPlacement& p : job.placements) {
      int64_t milli = 0;
      for (const TaskGroup& group : job.groups) {
        if (group.name == p.group) milli = group.request.gpu_milli;
      }
      auto model = model_of.find(p.node);
      if (milli == 0 || model == model_of.end()) continue;
      // Parents are validated to exist and to form no cycle.
      for (auto q = queues.find(job.queue); q != queues.end(); q = queues.find(q->second->parent)) {
        if (!counted.count(q->first)) continue;
        usage[{q->first, std::string(model->second)}] += milli;
        usage[{q->first, kAnyGpuModel}] += milli;
      }
    }
  }
  return usage;
}

// Does `trial` (the settled state with jobs `ids` put back) keep each queue of their chains
// within its quota limits, or, where it is past one, at or below what the snapshot uses?
bool KeepsQuotaLimits(const Snapshot& snapshot, const Snapshot& trial,
                      const std::vector<std::string>& ids) {
  std::map<std::string, const Queue*> queues;
  for (const Queue& q : snapshot.queues) queues.emplace(q.id, &q);
  std::set<std::string> counted;
  for (const Job& job : snapshot.jobs) {
    if (std::find(ids.begin(), ids.end(), job.id) == ids.end()) continue;
    for (auto q = queues.find(job.queue); q != queues.end(); q = queues.find(q->second->parent)) {
      counted.insert(q->first);
    }
  }
  const auto before = QuotaUsage(snapshot, queues, counted);
  const auto after = QuotaUsage(trial, queues, counted);
  for (const std::string& id : counted) {
    for (const Quota& quota : queues.at(id)->quotas) {
      if (!quota.limit_milli.has_value()) continue;
      const std::pair<std::string, std::string> key{id, quota.gpu_model};
      const int64_t was = before.count(key) ? before.at(key) : 0;
      const int64_t now = after.count(key) ? after.at(key) : 0;
      if (now > *quota.limit_milli && now > was) return false;
    }
  }
  return true;
}

// Does `trial` keep the jobs `ids` (put back) apart from other tenants' jobs as Queue::isolation
// asks, by the placer's rule (place.cc: tenants as SnapshotIndex finds them)? Validation does
// not check it (a host's snapshot may mix tenants), but a job put back must not join, or be
// joined by, another tenant's start.
bool KeepsIsolation(const Snapshot& trial, const std::vector<std::string>& ids) {
  if (std::none_of(trial.queues.begin(), trial.queues.end(),
                   [](const Queue& q) { return q.isolation != Isolation::kNone; })) {
    return true;
  }
  const SnapshotIndex index(trial);
  for (const std::string& id : ids) {
    const int32_t j = index.FindJob(id);
    if (j == kNone || index.job(j).job->state != JobState::kRunning) continue;
    const JobInfo& mine = index.job(j);
    for (int32_t o = 0; o < index.job_count(); ++o) {
      const JobInfo& other = index.job(o);
      if (o == j || other.job->state != JobState::kRunning || other.tenant == mine.tenant) {
        continue;
      }
      const bool whole_node = mine.isolation == Isolation::kExclusiveNode ||
                              other.isolation == Isolation::kExclusiveNode;
      for (const ReplicaPlacement& p : mine.job->placements) {
        for (const ReplicaPlacement& q : other.job->placements) {
          if (p.node != q.node) continue;
          const bool same_gpu = std::any_of(p.gpus.begin(), p.gpus.end(), [&](int32_t g) {
            return std::find(q.gpus.begin(), q.gpus.end(), g) != q.gpus.end();
          });
          if (same_gpu || whole_node) return false;
        }
      }
    }
  }
  return true;
}

// `composed` without any decision for the jobs `ids` (they stay as the snapshot has them),
// applied to `state` (from the snapshot).
Moves LeftAsTheyRan(const Moves& composed, const std::vector<std::string>& ids,
                    SettleState& state) {
  Moves trial = composed;
  auto listed = [&ids](const auto& d) {
    return std::find(ids.begin(), ids.end(), d.job) != ids.end();
  };
  std::erase_if(trial.preemptions, listed);
  std::erase_if(trial.starts, listed);
  state.Reset();
  state.Apply(trial);
  return trial;
}

}  // namespace

// Same replicas on the same GPUs (gpu_milli may be left 0 in a snapshot's placements).
bool SamePlace(const std::vector<ReplicaPlacement>& a, const std::vector<ReplicaPlacement>& b) {
  if (a.size() != b.size()) return false;
  // Listed alike (the usual case: a job no pass moved keeps its placements as they were).
  auto alike = [](const ReplicaPlacement& x, const ReplicaPlacement& y) {
    return x.group == y.group && x.replica == y.replica && x.node == y.node && x.gpus == y.gpus;
  };
  if (std::equal(a.begin(), a.end(), b.begin(), alike)) return true;
  auto key = [](const ReplicaPlacement& p) { return std::tie(p.group, p.replica); };
  auto by_replica = [&](const ReplicaPlacement& x, const ReplicaPlacement& y) {
    return key(x) < key(y);
  };
  std::vector<ReplicaPlacement> sa = a, sb = b;
  std::sort(sa.begin(), sa.end(), by_replica);
  std::sort(sb.begin(), sb.end(), by_replica);
  for (size_t i = 0; i < sa.size(); ++i) {
    std::vector<int32_t> ga = sa[i].gpus, gb = sb[i].gpus;
    std::sort(ga.begin(), ga.end());
    std::sort(gb.begin(), gb.end());
    if (key(sa[i]) != key(sb[i]) || sa[i].node != sb[i].node || ga != gb) return false;
  }
  return true;
}

// Each GPU `job` holds in `placements`, with the milli-GPUs and GPU memory it takes there, and
// (as GPU -1) each node with the number of its replicas there.
std::map<std::tuple<std::string, int32_t>, std::pair<int64_t, int64_t>> GpuShares(
    const Job& job, const std::vector<ReplicaPlacement>& placements) {
  std::map<std::tuple<std::string, int32_t>, std::pair<int64_t, int64_t>> shares;
  for (const ReplicaPlacement& p : placements) {
    auto group = std::find_if(job.groups.begin(), job.groups.end(),
                              [&](const TaskGroup& g) { return g.name == p.group; });
    GPUPOOL_CHECK(group != job.groups.end());
    ++shares[{p.node, -1}].first;
    for (int32_t gpu : p.gpus) {
      auto& [milli, memory] = shares[{p.node, gpu}];
      milli += group->request.MilliPerGpu();
      memory += group->request.gpu_memory_mib;
    }
  }
  return shares;
}

// The decisions that take `snapshot` to `settled`, built from what the passes decided
// (`history`); the other parts of the cycle's decisions are the first pass's and the settled
// pass's (see the top).
Moves Compose(const Snapshot& snapshot, const Snapshot& settled, const History& history) {
  Moves out;
  // ApplyDecisions() keeps the jobs in place: job i of `settled` is job i of `snapshot`.
  for (size_t i = 0; i < snapshot.jobs.size(); ++i) {
    const Job& before = snapshot.jobs[i];
    const Job& after = settled.jobs[i];
    const bool ran = before.state == JobState::kRunning;
    const bool runs = after.state == JobState::kRunning;
    // A start's placements are where the job runs in the settled state (a later pass may have
    // moved it).
    auto start = [&] {
      StartDecision s = history.last_start.at(before.id);
      s.placements = after.placements;
      return s;
    };
    if (!ran && runs) {
      out.starts.push_back(start());
    } else if (ran && !runs) {
      out.preemptions.push_back(history.first_preempt.at(before.id));
    } else if (ran && runs && !SamePlace(before.placements, after.placements)) {
      if (auto p = history.first_preempt.find(before.id); p != history.first_preempt.end()) {
        out.preemptions.push_back(p->second);
        out.starts.push_back(start());
        continue;
      }
      if (auto r = history.last_resize.find(before.id); r != history.last_resize.end()) {
        ResizeDecision resize = r->second;
        resize.to_replicas = 0;
        for (const ReplicaPlacement& p : after.placements) {
          if (p.group == resize.group) ++resize.to_replicas;
        }
        resize.from_replicas = 0;
        for (const ReplicaPlacement& p : before.placements) {
          if (p.group == resize.group) ++resize.from_replicas;
        }
        if (resize.to_replicas != resize.from_replicas) out.resizes.push_back(resize);
      }
      if (auto m = history.first_migrate.find(before.id); m != history.first_migrate.end()) {
        MigrateDecision migrate = m->second;
        migrate.to = after.placements;
        out.migrations.push_back(std::move(migrate));
      }
    }
  }
  // Each list in job-id order, as Finish() leaves one pass's (ids are unique).
  auto by_job = [](const auto& a, const auto& b) { return a.job < b.job; };
  std::sort(out.starts.begin(), out.starts.end(), by_job);
  std::sort(out.preemptions.begin(), out.preemptions.end(), by_job);
  std::sort(out.migrations.begin(), out.migrations.end(), by_job);
  std::sort(out.resizes.begin(), out.resizes.end(), by_job);
  return out;
}

// Names, for each Preempt of the cycle, the job the room went to (`out`: the composed decisions
// with the settled pass's reservations; `snapshot`: the cycle's input). A victim whose
// beneficiary a pass started and a later pass evicted again was, in the end, evicted for the job
// that took the beneficiary's room: follow the chain to a job that starts. If the chain ends at a
// start a later pass undid without evicting it for another (a restoring headroom rule took it
// back, or the victim, moved meanwhile, stays moved), the room went to whichever job starts on a
// GPU the victim held: the first such in id order. A job drained for a reservation keeps the
// eviction while it holds one (stage 7); a job evicted for another's start does not, when that job
// only reserves in the end. An elastic group shrunk for a job whose start a later pass undid was
// shrunk, in the end, for the job at the end of the same chain, when that one starts.
void NameBeneficiaries(const Snapshot& snapshot, const History& history, Decisions& out) {
  std::set<std::string_view> starts, reserved;
  for (const StartDecision& s : out.starts) starts.insert(s.job);
  for (const ReserveDecision& r : out.reservations) reserved.insert(r.job);
  std::map<std::string_view, const Job*> ran;
  for (const PreemptDecision& p : out.preemptions) ran.emplace(p.job, nullptr);
  for (const Job& job : snapshot.jobs) {
    if (auto it = ran.find(job.id); it != ran.end()) it->second = &job;
  }
  for (PreemptDecision& p : out.preemptions) {
    if (p.for_job.empty() || starts.count(p.for_job)) continue;
    if (reserved.count(p.for_job) && history.evicted_for_reservation.count(p.job)) continue;
    const std::string beneficiary(ChainEnd(history, starts, p.for_job));
    // A chain that ends at the victim itself (the start it was evicted for was undone for it, and
    // it starts elsewhere) names no one: the room went to whoever starts on its GPUs, or else on
    // its nodes (their CPU or memory).
    const bool itself = beneficiary == p.job;
    if (starts.count(beneficiary) && !itself) {
      p.for_job = beneficiary;
    } else if (history.last_start.count(beneficiary) || itself) {
      const std::vector<ReplicaPlacement>& held = ran.at(p.job)->placements;
      // The first other start, in id order, whose placements `touch` the victim's.
      auto first = [&](auto touch) -> const StartDecision* {
        for (const StartDecision& s : out.starts) {
          if (s.job != p.job && touch(s.placements)) return &s;
        }
        return nullptr;
      };
      const StartDecision* took = first([&](const std::vector<ReplicaPlacement>& placements) {
        return SharesAGpu(held, placements);
      });
      if (took == nullptr && itself) {
        took = first([&](const std::vector<ReplicaPlacement>& placements) {
          return std::any_of(held.begin(), held.end(), [&](const ReplicaPlacement& h) {
            return std::any_of(placements.begin(), placements.end(),
                               [&](const ReplicaPlacement& q) { return q.node == h.node; });
          });
        });
      }
      if (took != nullptr) p.for_job = took->job;
    }
  }
  for (ResizeDecision& r : out.resizes) {
    if (r.for_job.empty() || starts.count(r.for_job)) continue;
    const std::string_view beneficiary = ChainEnd(history, starts, r.for_job);
    if (starts.count(beneficiary) && beneficiary != r.job) r.for_job = std::string(beneficiary);
  }
}

// Puts back where they ran, if they fit there (nothing else the cycle starts or moves took their
// room, and isolation lets them), the jobs the cycle evicts or moves for nothing:
//   - for a reservation that the settled pass (`reservations`) no longer holds on any node the
//     job ran on (its job starts elsewhere, waits without one, or reserves other nodes);
//   - for a start that does not happen, the chain of undone starts followed (ChainEnd());
//   - running jobs moved only for each other's moves (two queues reclaiming from each other: A
//     evicted for B's re-placement, B's room taken by A's), all at once.
// Leaving them evicted would lose their work for no one. `composed` takes the settled state
// (`state`, left so) to the state with those jobs back (in job-id order); the ids are returned.
std::vector<std::string> KeepEvictedForNothing(const History& history,
                                               const std::vector<ReserveDecision>& reservations,
                                               Moves& composed, SettleState& state) {
  std::set<std::string_view> starts;
  for (const StartDecision& s : composed.starts) starts.insert(s.job);
  // Sets of jobs to put back together, in the order tried.
  std::vector<std::vector<std::string>> candidates;
  // Running jobs moved for another moved job's start (the chain followed).
  std::vector<std::string> swapped;
  for (const PreemptDecision& p : composed.preemptions) {
    const Job& now = state.StateJob(p.job);
    if (SamePlace(now.placements, state.SnapshotJob(p.job).placements)) continue;
    const std::string& for_job = history.first_preempt.at(p.job).for_job;
    if (for_job.empty()) continue;
    if (!history.evicted_for_reservation.count(p.job)) {
      const std::string_view end = ChainEnd(history, starts, for_job);
      if (!starts.count(end)) {
        candidates.push_back({p.job});
      } else if (now.state == JobState::kRunning &&
                 state.SnapshotJob(end).state == JobState::kRunning) {
        swapped.push_back(p.job);
      }
      continue;
    }
    bool needed = false;
    for (const ReserveDecision& r : reservations) {
      if (r.job != for_job) continue;
      for (const ReplicaPlacement& placement : state.SnapshotJob(p.job).placements) {
        needed =
            needed || std::find(r.nodes.begin(), r.nodes.end(), placement.node) != r.nodes.end();
      }
    }
    if (!needed) candidates.push_back({p.job});
  }
  // A move is for nothing only if every move it was for is too: the moved jobs whose chain
  // ends at a job outside the set leave it, until none does.
  for (bool shrunk = true; shrunk;) {
    shrunk = false;
    const std::set<std::string> in(swapped.begin(), swapped.end());
    std::erase_if(swapped, [&](const std::string& id) {
      const std::string_view end = ChainEnd(history, starts, history.first_preempt.at(id).for_job);
      const bool leaves = !in.count(std::string(end));
      shrunk = shrunk || leaves;
      return leaves;
    });
  }
  if (swapped.size() >= 2) candidates.push_back(swapped);
  std::vector<std::string> kept;
  if (candidates.empty()) return kept;
  // Puts `ids` back if the state allows it.
  auto put_back = [&](const std::vector<std::string>& ids) {
    Moves trial = LeftAsTheyRan(composed, ids, state);
    // Over-commitment is all that validation can find: every other part of the state is as
    // valid as the snapshot's. Quota limits and isolation it does not check (a snapshot may hold
    // a queue past its limit, or mix tenants): a start may have taken the quota a job put back
    // would use again, or a share of its GPU for another tenant.
    if (!ValidateSnapshot(state.get()).ok() ||
        !KeepsQuotaLimits(state.original(), state.get(), ids) ||
        !KeepsIsolation(state.get(), ids)) {
      return false;
    }
    composed = std::move(trial);
    kept.insert(kept.end(), ids.begin(), ids.end());
    return true;
  };
  // One put back may make room for another tried before it (its start of the cycle sat where
  // the other ran): sweep again, in order, while a sweep puts any back.
  for (size_t before = 0; before != candidates.size();) {
    before = candidates.size();
    std::erase_if(candidates, put_back);
  }
  std::sort(kept.begin(), kept.end());
  state.Reset();
  state.Apply(composed);
  return kept;
}

std::vector<std::string> KeepPermutedInPlace(Moves& composed, SettleState& state) {
  std::vector<std::string> kept;
  for (const StartDecision& start : composed.starts) {
    const Job& before = state.SnapshotJob(start.job);
    // Evicted for another job: a rule's stop (a Preempt without for_job) wants it gone.
    auto evicted = std::find_if(composed.preemptions.begin(), composed.preemptions.end(),
                                [&](const PreemptDecision& p) { return p.job == start.job; });
    if (before.state != JobState::kRunning || evicted == composed.preemptions.end() ||
        evicted->for_job.empty() || SamePlace(before.placements, start.placements) ||
        GpuShares(before, before.placements) != GpuShares(before, start.placements)) {
      continue;
    }
    kept.push_back(start.job);
  }
  if (kept.empty()) return kept;
  // Tried one by one: a replica's CPU and memory move between nodes, and one job's old
  // arrangement may fit only while another's new one does not hold that room.
  std::erase_if(kept, [&](const std::string& id) {
    Moves trial = LeftAsTheyRan(composed, {id}, state);
    // The same GPUs with the same shares: only the nodes' CPU and memory can be over-committed
    // (quota, isolation and topology are the job's as it ran).
    if (!ValidateSnapshot(state.get()).ok()) return true;
    composed = std::move(trial);
    return false;
  });
  state.Reset();
  state.Apply(composed);
  return kept;
}

}  // namespace gpupool::internal
