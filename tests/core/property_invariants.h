// CheckSnapshot(): the invariants of EVALUATION.md E4 on one random snapshot, scheduled under the
// policy of its seed (PolicyForSeed(), one of the built-in strategies):
//   - Schedule() succeeds, and twice gives the same decisions;
//   - every pending job of the input gets exactly one outcome, and so does every running job a
//     rule stops (a Preempt without for_job); no other job gets any but a restart elsewhere;
//   - Start placements are well formed (known group, replica indices 0..n-1, GpuCount() GPUs of
//     the node, gpu_milli = MilliPerGpu()), and each started group runs between min_replicas and
//     replicas (gangs all or nothing);
//   - nothing lands on a node that is not ready, a GPU that is unhealthy, a node reserved to other
//     queues, a model the job does not accept, a GPU with too little memory, or across models;
//   - replica island scope and gang levels, when required, hold;
//   - isolation: a started job shares no GPU (exclusive-gpu) or node (exclusive-node) with
//     another tenant;
//   - no GPU, CPU or memory over-committed once the starts are applied (and the result validates);
//   - no queue pushed past a limit by new starts;
//   - shuffling every list of the input gives byte-identical decisions;
//   - applying the starts and scheduling again starts nothing (fixed point).
// Shared by property_test.cc and settling_property_test.cc.
#ifndef GPUPOOL_TESTS_CORE_PROPERTY_INVARIANTS_H_
#define GPUPOOL_TESTS_CORE_PROPERTY_INVARIANTS_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/apply.h"
#include "gpupool/schedule.h"
#include "gpupool/validate.h"
#include "testing/builders.h"
#include "tests/core/property_helpers.h"

namespace gpupool::property_testing {

using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::ShuffleSnapshot;

// Does job `job`'s reservation in `d` include a node `victim` runs on?
inline bool ReservesANodeOf(const Decisions& d, const std::string& job, const Job& victim) {
  for (const ReserveDecision& r : d.reservations) {
    if (r.job != job) continue;
    for (const ReplicaPlacement& p : victim.placements) {
      if (std::find(r.nodes.begin(), r.nodes.end(), p.node) != r.nodes.end()) return true;
    }
  }
  return false;
}

// preemption.take_back_from_gpus: `job` outranks `victim` of its priority when it needs at least
// that many GPUs (its gang at its minimum size), more than the victim holds, was submitted
// before it and has been pending take_back_after_s.
inline bool TakesBack(const Policy& policy, int64_t now, const Job& job, const Job& victim) {
  const int64_t from = policy.preemption.take_back_from_gpus;
  if (from <= 0 || victim.priority != job.priority || victim.submit_time <= job.submit_time) {
    return false;
  }
  if (now - job.pending_since.value_or(job.submit_time) < policy.preemption.take_back_after_s) {
    return false;
  }
  int64_t needs = 0, holds = 0;
  for (const TaskGroup& g : job.groups) needs += g.MinReplicas() * g.request.gpu_milli;
  for (const ReplicaPlacement& p : victim.placements) {
    for (const TaskGroup& g : victim.groups) {
      if (g.name == p.group) holds += g.request.gpu_milli;
    }
  }
  return needs >= from * kMilliPerGpu && holds < needs;
}

// preemption.victim_remaining_percent: `victim`, expected to need no more than that percent of
// the work `job` is expected to need, stays for it (both with estimates, `job` not starving, the
// priority gap within victim_remaining_max_gap unless that is 0).
inline bool ShorterVictimStays(const Policy& policy, int64_t now, const Job& job,
                               const Job& victim) {
  const PreemptionOptions& o = policy.preemption;
  if (o.victim_remaining_percent <= 0 || !job.runtime_estimate_s || !victim.runtime_estimate_s) {
    return false;
  }
  if (policy.starvation_bound_s > 0 &&
      now - job.pending_since.value_or(job.submit_time) > policy.starvation_bound_s) {
    return false;
  }
  if (o.victim_remaining_max_gap > 0 &&
      int64_t{job.priority} - victim.priority > o.victim_remaining_max_gap) {
    return false;
  }
  const int64_t left = std::max<int64_t>(0, *victim.runtime_estimate_s - victim.attained_service_s);
  const int64_t needs = std::max<int64_t>(0, *job.runtime_estimate_s - job.attained_service_s);
  return left * 100 <= needs * o.victim_remaining_percent;
}

// Does a start of `d`, of another job, use a node `victim` runs on, or quota of a queue of its
// chain (a queue both jobs count against)?
inline bool OthersTakeItsRoom(const World& world, const Decisions& d, const Job& victim) {
  const std::vector<const Queue*> chain = world.Chain(victim.queue);
  for (const StartDecision& s : d.starts) {
    if (s.job == victim.id) continue;
    for (const ReplicaPlacement& a : s.placements) {
      for (const ReplicaPlacement& b : victim.placements) {
        if (a.node == b.node) return true;
      }
    }
    const Job* job = world.job(s.job);
    if (job == nullptr) continue;
    for (const Queue* q : world.Chain(job->queue)) {
      if (std::find(chain.begin(), chain.end(), q) != chain.end()) return true;
    }
  }
  return false;
}

// Usage per (queue, model or "*") of the running jobs of a snapshot, counted up the tree.
inline std::map<std::pair<std::string, std::string>, int64_t> QueueUsage(const Snapshot& s) {
  World world(s);
  std::map<std::pair<std::string, std::string>, int64_t> usage;
  for (const Job& job : s.jobs) {
    if (job.state != JobState::kRunning) continue;
    for (const ReplicaPlacement& p : job.placements) {
      const TaskGroup* g = world.group(job, p.group);
      const Node* n = world.node(p.node);
      if (g == nullptr || n == nullptr || g->request.gpu_milli == 0) continue;
      for (const Queue* q : world.Chain(job.queue)) {
        usage[{q->id, n->gpu_model}] += g->request.gpu_milli;
        usage[{q->id, kAnyGpuModel}] += g->request.gpu_milli;
      }
    }
  }
  return usage;
}

// Checks every invariant on one valid snapshot; appends a line per violation.
inline void CheckSnapshot(uint64_t seed, const Snapshot& snapshot,
                          std::vector<std::string>& violations) {
  auto fail = [&](std::string what) {
    violations.push_back(fmt::format("seed {}: {}", seed, what));
  };
  const Policy policy = PolicyForSeed(seed);
  if (absl::Status valid = ValidateSnapshot(snapshot); !valid.ok()) {
    fail(fmt::format("invalid snapshot: {}", valid.ToString()));
    return;
  }
  absl::StatusOr<Decisions> result = Schedule(snapshot, policy);
  if (!result.ok()) {
    fail(fmt::format("Schedule failed: {}", result.status().ToString()));
    return;
  }
  const Decisions& d = *result;
  const World world(snapshot);
  // Settled, not cut at the cap of passes (docs/engine.md, "Settling").
  if (d.counters.passes >= kMaxSettlingPasses)
    fail(fmt::format("cut at {} passes", d.counters.passes));

  // Same input, same output.
  {
    absl::StatusOr<Decisions> again = Schedule(snapshot, policy);
    if (!again.ok() || DecisionsToText(*again) != DecisionsToText(d)) {
      fail("scheduling the same snapshot twice gave different decisions");
    }
  }

  // Exactly one outcome per pending job, none for others.
  {
    std::map<std::string, int> outcomes;
    for (const StartDecision& s : d.starts) ++outcomes[s.job];
    for (const PendingDecision& p : d.pending) ++outcomes[p.job];
    for (const Job& job : snapshot.jobs) {
      const int count = outcomes.count(job.id) ? outcomes[job.id] : 0;
      if (job.state == JobState::kPending && count != 1) {
        fail(fmt::format("pending job {} has {} outcomes", job.id, count));
      }
      // A running job gets no decision, except a victim that the cycle evicts and then
      // restarts elsewhere (stage 6b): one start; and a job a rule stops (a Preempt without
      // for_job) is pending again, so it gets exactly one outcome (docs/decisions-format.md,
      // "Complete").
      auto preempt = std::find_if(d.preemptions.begin(), d.preemptions.end(),
                                  [&job](const PreemptDecision& p) { return p.job == job.id; });
      const bool evicted = preempt != d.preemptions.end();
      const bool stopped = evicted && preempt->for_job.empty();
      const bool pended = std::any_of(d.pending.begin(), d.pending.end(),
                                      [&job](const PendingDecision& p) { return p.job == job.id; });
      if (job.state == JobState::kRunning && stopped && count != 1) {
        fail(fmt::format("running job {} stopped by a rule has {} outcomes", job.id, count));
      }
      if (job.state == JobState::kRunning && !stopped && (pended || count > (evicted ? 1 : 0))) {
        fail(fmt::format("running job {} got a start or pending decision", job.id));
      }
      outcomes.erase(job.id);
    }
    for (const auto& [id, count] : outcomes) fail(fmt::format("decision for unknown job {}", id));
  }

  // Preemptions: whole running gangs of the same queue and lower priority, preemptible, past their
  // minimum runtime, each for a job that starts; at most one decision per victim, sorted by id.
  std::set<std::string> victims;
  {
    std::set<std::string> started;
    for (const StartDecision& s : d.starts) started.insert(s.job);
    std::set<std::string> reserved;
    for (const ReserveDecision& r : d.reservations) reserved.insert(r.job);
    if (!policy.preemption.enabled && !d.preemptions.empty()) {
      fail("preemption decisions with preemption disabled");
    }
    for (size_t i = 0; i < d.preemptions.size(); ++i) {
      const PreemptDecision& p = d.preemptions[i];
      if (i > 0 && !(d.preemptions[i - 1].job < p.job)) {
        fail(fmt::format("preemptions not sorted by job id at {}", p.job));
      }
      if (!victims.insert(p.job).second) fail(fmt::format("{} preempted twice", p.job));
      const Job* victim = world.job(p.job);
      const Job* beneficiary = world.job(p.for_job);
      if (victim == nullptr || beneficiary == nullptr) {
        fail(fmt::format("preemption names unknown job {} or {}", p.job, p.for_job));
        continue;
      }
      if (victim->state != JobState::kRunning)
        fail(fmt::format("{} preempted, not running", p.job));
      if (!victim->preemptible) fail(fmt::format("{} preempted, not preemptible", p.job));
      if (p.for_job == p.job) fail(fmt::format("{} preempted for itself", p.job));
      if (victim->queue != beneficiary->queue ||
          (victim->priority >= beneficiary->priority &&
           !TakesBack(policy, snapshot.now, *beneficiary, *victim))) {
        fail(fmt::format("{} (queue {}, priority {}) preempted for {} (queue {}, priority {})",
                         p.job, victim->queue, victim->priority, p.for_job, beneficiary->queue,
                         beneficiary->priority));
      }
      // The job that evicted it: the one its reason names when a settling pass gave its room to
      // another (for_job then names who took it), else for_job.
      const Job* evicting = beneficiary;
      if (p.reason.rfind("job ", 0) == 0) {
        const Job* named = world.job(p.reason.substr(4, p.reason.find(' ', 4) - 4));
        if (named != nullptr) evicting = named;
      }
      if (ShorterVictimStays(policy, snapshot.now, *evicting, *victim)) {
        fail(fmt::format("{} preempted by {}, which expects to need more work than it", p.job,
                         evicting->id));
      }
      if (victim->start_time.has_value() &&
          snapshot.now - *victim->start_time < victim->min_runtime_s) {
        fail(fmt::format("{} preempted before its minimum runtime", p.job));
      }
      // A drained job goes for a job that holds a reservation instead (stage 7), on a node the
      // drained job ran on; or, when the settling passes gave that reservation up, for the room
      // (or quota) of a job that starts (it is put back otherwise).
      const bool drained = p.reason.find("preemption.drain_blocked_jobs") != std::string::npos;
      if (drained && !ReservesANodeOf(d, p.for_job, *victim) &&
          !OthersTakeItsRoom(world, d, *victim)) {
        fail(
            fmt::format("{} drained for {}, which reserves none of its nodes, and no other job "
                        "takes its room or quota",
                        p.job, p.for_job));
      }
      if (!drained && !started.count(p.for_job)) {
        fail(fmt::format("{} preempted for {}, which does not start", p.job, p.for_job));
      }
      if (p.lost_milli_gpu_seconds < 0) fail(fmt::format("{}: negative lost work", p.job));
    }
    // Elastic shrinks: same rules, and the group keeps at least its minimum.
    for (const ResizeDecision& r : d.resizes) {
      const Job* victim = world.job(r.job);
      const Job* beneficiary = world.job(r.for_job);
      if (victim == nullptr || beneficiary == nullptr) {
        fail(fmt::format("resize names unknown job {} or {}", r.job, r.for_job));
        continue;
      }
      if (victims.count(r.job)) fail(fmt::format("{} both preempted and resized", r.job));
      const TaskGroup* g = world.group(*victim, r.group);
      if (g == nullptr || r.to_replicas < g->MinReplicas() || r.to_replicas >= r.from_replicas) {
        fail(fmt::format("{}: resize {} -> {} breaks the group's bounds", r.job, r.from_replicas,
                         r.to_replicas));
      }
      if (!victim->preemptible || victim->queue != beneficiary->queue ||
          (victim->priority >= beneficiary->priority &&
           !TakesBack(policy, snapshot.now, *beneficiary, *victim)) ||
          ShorterVictimStays(policy, snapshot.now, *beneficiary, *victim)) {
        fail(fmt::format("{} shrunk for {} against the rules", r.job, r.for_job));
      }
      if (!started.count(r.for_job)) {
        fail(fmt::format("{} shrunk for {}, which does not start", r.job, r.for_job));
      }
    }
  }

  // Occupants per GPU and per node (running jobs that stay and new starts), to check sharing:
  // what the host holds once it has carried out the evictions and the elastic shrinks (a
  // replica removed by a Resize frees its GPUs for the starts of the same cycle).
  std::map<std::pair<std::string, int32_t>, std::set<std::string>> gpu_jobs;
  std::map<std::string, std::set<std::string>> node_jobs;
  const Snapshot staying = WithVictimsEvicted(snapshot, d);
  for (const Job& job : staying.jobs) {
    if (victims.count(job.id)) continue;
    for (const ReplicaPlacement& p : job.placements) {
      node_jobs[p.node].insert(job.id);
      for (int32_t g : p.gpus) gpu_jobs[{p.node, g}].insert(job.id);
    }
  }
  for (const StartDecision& s : d.starts) {
    for (const ReplicaPlacement& p : s.placements) {
      node_jobs[p.node].insert(s.job);
      for (int32_t g : p.gpus) gpu_jobs[{p.node, g}].insert(s.job);
    }
  }

  // Each start.
  for (const StartDecision& s : d.starts) {
    const Job* job = world.job(s.job);
    if (job == nullptr) continue;  // reported above
    std::map<std::string, std::set<int32_t>> replicas;
    std::set<std::string> models_used;
    for (const ReplicaPlacement& p : s.placements) {
      const TaskGroup* group = world.group(*job, p.group);
      const Node* node = world.node(p.node);
      if (group == nullptr || node == nullptr) {
        fail(
            fmt::format("{}: placement names unknown group {} or node {}", s.job, p.group, p.node));
        continue;
      }
      if (!replicas[p.group].insert(p.replica).second) {
        fail(fmt::format("{}: replica {}/{} placed twice", s.job, p.group, p.replica));
      }
      if (node->state != NodeState::kReady) {
        fail(fmt::format("{}: placed on node {} that is not ready", s.job, node->id));
      }
      if (!node->owner_queues.empty()) {
        bool allowed = false;
        for (const std::string& owner : node->owner_queues) {
          allowed = allowed || world.InSubtree(job->queue, owner);
        }
        if (!allowed) {
          fail(fmt::format("{}: placed on node {} reserved to other queues", s.job, node->id));
        }
      }
      const ResourceRequest& request = group->request;
      if (static_cast<int64_t>(p.gpus.size()) != request.GpuCount()) {
        fail(fmt::format("{}: {}/{} has {} GPUs, wants {}", s.job, p.group, p.replica,
                         p.gpus.size(), request.GpuCount()));
      }
      if (p.gpu_milli != request.MilliPerGpu()) {
        fail(fmt::format("{}: {}/{} gpu_milli {} != {}", s.job, p.group, p.replica, p.gpu_milli,
                         request.MilliPerGpu()));
      }
      std::set<int32_t> islands;
      std::set<int32_t> seen;
      for (int32_t index : p.gpus) {
        const Gpu* gpu = nullptr;
        for (const Gpu& g : node->gpus) {
          if (g.index == index) gpu = &g;
        }
        if (gpu == nullptr) {
          fail(fmt::format("{}: GPU {} is not on node {}", s.job, index, node->id));
          continue;
        }
        if (!seen.insert(index).second) fail(fmt::format("{}: GPU {} used twice", s.job, index));
        if (!gpu->healthy) {
          fail(fmt::format("{}: placed on unhealthy GPU {} of {}", s.job, index, node->id));
        }
        islands.insert(gpu->island);
      }
      if (!p.gpus.empty()) {
        models_used.insert(node->gpu_model);
        if (!group->gpu_models.empty() &&
            std::find(group->gpu_models.begin(), group->gpu_models.end(), node->gpu_model) ==
                group->gpu_models.end()) {
          fail(fmt::format("{}: placed on model {} it does not accept", s.job, node->gpu_model));
        }
        const GpuModel* model = world.model(node->gpu_model);
        if (model != nullptr && request.gpu_memory_mib > model->memory_mib) {
          fail(fmt::format("{}: needs {} MiB per GPU, {} has {}", s.job, request.gpu_memory_mib,
                           node->id, model->memory_mib));
        }
      }
      if (group->topology.replica_scope == ReplicaScope::kIsland &&
          group->topology.replica_strictness == Strictness::kRequired && islands.size() > 1) {
        fail(fmt::format("{}: replica {}/{} spans islands on {}", s.job, p.group, p.replica,
                         node->id));
      }
      // Isolation, seen from the jobs already on this node or GPU: a job of another tenant
      // must not have joined them.
      auto outside_tenant_of = [&](const std::string& other, Isolation mode) {
        if (other == s.job) return false;
        const Job* o = world.job(other);
        const Queue* root = o == nullptr ? nullptr : world.TenantRoot(o->queue);
        return root != nullptr && root->isolation == mode && !world.InSubtree(job->queue, root->id);
      };
      for (const std::string& other : node_jobs[node->id]) {
        if (outside_tenant_of(other, Isolation::kExclusiveNode)) {
          fail(
              fmt::format("{}: joined node {} of exclusive tenant job {}", s.job, node->id, other));
        }
      }
      for (int32_t index : p.gpus) {
        for (const std::string& other : gpu_jobs[{node->id, index}]) {
          if (outside_tenant_of(other, Isolation::kExclusiveGpu)) {
            fail(fmt::format("{}: joined GPU {}:{} of exclusive tenant job {}", s.job, node->id,
                             index, other));
          }
        }
      }
      // Isolation, seen from this job.
      if (const Queue* root = world.TenantRoot(job->queue); root != nullptr) {
        auto other_tenant = [&](const std::string& other) {
          const Job* o = world.job(other);
          return o != nullptr && !world.InSubtree(o->queue, root->id);
        };
        if (root->isolation == Isolation::kExclusiveNode) {
          for (const std::string& other : node_jobs[node->id]) {
            if (other_tenant(other)) {
              fail(fmt::format("{}: shares exclusive node {} with {}", s.job, node->id, other));
            }
          }
        } else {
          for (int32_t index : p.gpus) {
            for (const std::string& other : gpu_jobs[{node->id, index}]) {
              if (other_tenant(other)) {
                fail(fmt::format("{}: shares exclusive GPU {}:{} with {}", s.job, node->id, index,
                                 other));
              }
            }
          }
        }
      }
    }
    if (models_used.size() > 1) fail(fmt::format("{}: placed across GPU models", s.job));
    // Gangs all or nothing, replica indices dense.
    for (const TaskGroup& group : job->groups) {
      const std::set<int32_t>& got = replicas[group.name];
      const int64_t count = static_cast<int64_t>(got.size());
      if (count < group.MinReplicas() || count > group.replicas) {
        fail(fmt::format("{}: group {} started with {} replicas, needs [{}, {}]", s.job, group.name,
                         count, group.MinReplicas(), group.replicas));
      }
      if (!got.empty() && (*got.begin() != 0 || *got.rbegin() != count - 1)) {
        fail(fmt::format("{}: group {} replica indices not 0..{}", s.job, group.name, count - 1));
      }
    }
    // Required gang level: every replica in one domain.
    for (const TaskGroup& group : job->groups) {
      const TopologyConstraint& t = group.topology;
      if (!t.gang_level.has_value() || t.gang_strictness != Strictness::kRequired) continue;
      std::set<std::optional<std::string>> domains;
      for (const ReplicaPlacement& p : s.placements) {
        if (const Node* node = world.node(p.node)) {
          domains.insert(world.DomainKey(*node, *t.gang_level));
        }
      }
      if (domains.size() > 1 || (domains.size() == 1 && !domains.begin()->has_value())) {
        fail(fmt::format("{}: required gang level {} broken", s.job, *t.gang_level));
      }
    }
  }

  // Apply (evictions, then starts), then check capacity directly and through validation.
  Snapshot applied = WithVictimsEvicted(snapshot, d);
  if (absl::Status status = ApplyStarts(d, applied); !status.ok()) {
    fail(fmt::format("ApplyStarts failed: {}", status.ToString()));
    return;
  }
  {
    const World after(applied);
    std::map<std::pair<std::string, int32_t>, int64_t> milli;
    std::map<std::string, std::pair<int64_t, int64_t>> cpu_memory;
    for (const Job& job : applied.jobs) {
      for (const ReplicaPlacement& p : job.placements) {
        const TaskGroup* g = after.group(job, p.group);
        if (g == nullptr) continue;
        for (int32_t index : p.gpus) milli[{p.node, index}] += g->request.MilliPerGpu();
        cpu_memory[p.node].first += g->request.cpu_milli;
        cpu_memory[p.node].second += g->request.memory_mib;
      }
    }
    for (const auto& [gpu, used] : milli) {
      if (used > kMilliPerGpu) {
        fail(fmt::format("GPU {}:{} over-committed: {}", gpu.first, gpu.second, used));
      }
    }
    for (const auto& [id, used] : cpu_memory) {
      const Node* node = after.node(id);
      if (node != nullptr && (used.first > node->cpu_milli || used.second > node->memory_mib)) {
        fail(fmt::format("node {} over-committed: cpu {} of {}, memory {} of {}", id, used.first,
                         node->cpu_milli, used.second, node->memory_mib));
      }
    }
  }
  if (absl::Status valid = ValidateSnapshot(applied); !valid.ok()) {
    fail(fmt::format("snapshot after ApplyStarts is invalid: {}", valid.ToString()));
  }

  // Limits: new starts never take a queue past a limit (usage that was already above a limit
  // before the cycle may stay there, but must not grow).
  {
    const auto before = QueueUsage(snapshot);
    const auto after = QueueUsage(applied);
    for (const Queue& q : snapshot.queues) {
      for (const Quota& quota : q.quotas) {
        if (!quota.limit_milli.has_value()) continue;
        auto key = std::make_pair(q.id, quota.gpu_model);
        const int64_t was = before.count(key) ? before.at(key) : 0;
        const int64_t now = after.count(key) ? after.at(key) : 0;
        if (now > *quota.limit_milli && now > was) {
          fail(fmt::format("queue {} model {}: usage {} -> {} past limit {}", q.id, quota.gpu_model,
                           was, now, *quota.limit_milli));
        }
      }
    }
  }

  // Fixed point: once the starts are applied, the next cycle starts nothing (with preemption on,
  // the victims evicted first; PreemptionReachesAFixedPoint in property_test.cc also checks
  // preemptions).
  {
    absl::StatusOr<Decisions> next = Schedule(applied, policy);
    if (!next.ok()) {
      fail(fmt::format("Schedule after ApplyStarts failed: {}", next.status().ToString()));
    } else if (!next->starts.empty()) {
      fail(fmt::format("Schedule after ApplyStarts started {} more, first {}", next->starts.size(),
                       next->starts.front().job));
    }
  }

  // Shuffled input, same decisions.
  {
    Snapshot shuffled = snapshot;
    ShuffleSnapshot(shuffled, seed * 7919 + 1);
    absl::StatusOr<Decisions> other = Schedule(shuffled, policy);
    if (!other.ok()) {
      fail(fmt::format("Schedule of the shuffled snapshot failed: {}", other.status().ToString()));
    } else if (const std::string a = DecisionsToText(d), b = DecisionsToText(*other); a != b) {
      fail(fmt::format("shuffled input changed the decisions:\n--- original\n{}--- shuffled\n{}", a,
                       b));
    }
  }
}

}  // namespace gpupool::property_testing

#endif  // GPUPOOL_TESTS_CORE_PROPERTY_INVARIANTS_H_
