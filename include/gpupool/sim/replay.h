// The job-level replay (docs/replay.md): a time-based trace of jobs (gpupool/sim/trace_job.h,
// e.g. the Philly trace read by gpupool/sim/philly.h) replayed on a pool through
// gpupool::Schedule(). Not to be confused with the pod-level inflation protocol
// (gpupool/sim/inflation.h), which places pods one at a time and never preempts.
//
// A discrete-event replay of job arrivals and completions through gpupool::Schedule(): at every
// second where something changed the replay builds a Snapshot of the pool, schedules it and
// carries out the decisions (starts and preemptions), with checkpoints and restore costs.
// Everything is deterministic: integer seconds, ordered containers, no clock, thread, global or
// environment variable. The same options and jobs give the same result, byte for byte.
#ifndef GPUPOOL_SIM_REPLAY_H_
#define GPUPOOL_SIM_REPLAY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/ledger.h"
#include "gpupool/policy.h"
#include "gpupool/sim/philly.h"  // for callers that replay the Philly trace
#include "gpupool/sim/trace_job.h"
#include "gpupool/sim/utc_time.h"  // for callers that select a window by date
#include "gpupool/snapshot.h"

namespace gpupool::sim {

// The pool of a replay: `nodes` nodes of `gpus_per_node` GPUs of one model, each node one NVLink
// island, `nodes_per_rack` nodes per rack (topology level "rack"). Default: 64 x 8, 16 per rack.
struct ReplayPool {
  int32_t nodes = 64;
  int32_t gpus_per_node = 8;
  int32_t nodes_per_rack = 16;

  int64_t TotalGpus() const { return int64_t{nodes} * gpus_per_node; }
};

// The Snapshot of an empty pool (topology, the one GPU model "gpu", nodes "n000".. with racks
// "r00"..); queues and jobs left empty.
Snapshot MakePoolSnapshot(const ReplayPool& pool);

// How jobs become queues and priorities, which the named policies set (MakeReplayPolicy).
enum class QueueMode {
  // One queue per virtual cluster, priority 0 (fifo).
  kPerCluster,
  // All jobs in one queue "all", each job's priority = -(its 2D-LAS level) at every cycle, so
  // that same-queue priority preemption carries out 2D-LAS across tenants, as Tiresias does
  // (las, las-free, default; fair_share_boost_half_levels adds to it).
  kSingleQueueLas,
  // One queue per virtual cluster, and each job's priority = -(its 2D-LAS level) inside it
  // (guarantees).
  kPerClusterLas,
};

// Settings of one virtual cluster's queue that the trace does not carry: its labels (the
// cost_center label bills its GPU time to a cost center, docs/accounting.md) and its GPU-hour
// budget per period (docs/budgets.md).
struct ReplayQueue {
  // A virtual cluster of the replayed jobs (an unknown name is an error).
  std::string queue;
  // Labels of the queue in the snapshots the engine sees and in the ledger (validated like a
  // snapshot's queue labels).
  std::vector<TopologyLabel> labels;
  // GPU time the queue may use per budget period, in milli-GPU-seconds (3,600,000 = one
  // GPU-hour), in [0, 2^40]. Unset: no budget.
  std::optional<int64_t> budget_milli_gpu_seconds;
};

// A failure put into the replay at a known time (ReplayFailures::injected): GPU `gpu` of node
// `node` (indices: node 3 is "n003"), or the whole node when `gpu` is -1.
struct ReplayInjectedFailure {
  int64_t time = 0;
  int32_t node = 0;
  int32_t gpu = -1;
};

// GPU and node failures with repairs (docs/replay.md, "Failures and repairs"). Off by default:
// both rates 0 and nothing injected, and then the replay is exactly what it is without this.
//
// Failures of GPUs and of whole nodes are two Poisson processes over the pool, drawn in integer
// seconds from `seed` (one stream each) and independent of the jobs. A failure drawn for a GPU
// or node already under repair is dropped, so the rates apply to the GPUs and nodes in service.
// A failed GPU is unhealthy, a failed node down, in every snapshot the engine sees until its
// repair, exactly `repair_s` seconds later. The jobs on it stop at once, keep the work of their
// last checkpoint, wait again and pay restore_time_s when they restart.
struct ReplayFailures {
  // Failures per 1,000,000 GPU-days of GPUs in service (1,000 x the CLI's --failures, which is
  // per 1,000 GPU-days), in [0, 100,000]. 0: no GPU failures.
  int64_t gpu_per_million_gpu_days = 0;
  // Whole-node failures per 1,000,000 node-days of nodes in service, in [0, 100,000].
  int64_t node_per_million_node_days = 0;
  // Every repair (of a GPU or a node) takes exactly this long, in (0, 8,760 h].
  int64_t repair_s = 86400;
  uint64_t seed = 1;
  // Failures at known times, in addition to the random ones (each time >= the first arrival).
  std::vector<ReplayInjectedFailure> injected;

  bool enabled() const {
    return gpu_per_million_gpu_days > 0 || node_per_million_node_days > 0 || !injected.empty();
  }
};

// The rates `--failures published` stands for (docs/replay.md cites and derives them): GPU
// failures per 1,000,000 GPU-days and node failures per 1,000,000 node-days, from Meta's Llama 3
// report (16,384 H100 GPUs, 54 days), and the repair time of a pool with spares on site.
inline constexpr int64_t kPublishedGpuFailuresPerMillionGpuDays = 303;
inline constexpr int64_t kPublishedNodeFailuresPerMillionNodeDays = 479;
inline constexpr int64_t kPublishedRepairS = 86400;

// A maintenance window put into the replay at a known time (ReplayMaintenance::windows): node
// `node` (index: 3 is "n003") takes no work in [start, end).
struct ReplayMaintenanceWindow {
  int32_t node = 0;
  int64_t start = 0;
  int64_t end = 0;
};

// Maintenance windows of the pool's nodes (docs/replay.md, "Maintenance, spot reclaims and
// scaling"). Off by default: then the replay is exactly what it is without this.
//
// Rolling maintenance, when every_s > 0: node k's windows start at first arrival + (k x every_s)
// / nodes + m x every_s, m = 0, 1, ..., and last duration_s each, so the pool's nodes take turns,
// evenly spread over each period. Plus `windows`, at known times. The host announces each window
// notice_s before its start: from then on the window is in the node's `maintenance` list of every
// snapshot the engine sees (overlapping windows of a node merged into one), so a job that would
// still run at its start does not start there; at its start the engine checkpoints and stops the
// jobs still on the node (a Preempt each, carried out like any preemption); at its end the node
// takes work again. The engine's `drain` and `uncordon` node actions for the window are carried
// out as a host would (the node draining, with state_cause maintenance).
struct ReplayMaintenance {
  // The period of rolling maintenance, in (0, 3,650 days]; 0: no rolling maintenance.
  int64_t every_s = 0;
  // Length of each rolling window, in (0, every_s) when every_s > 0.
  int64_t duration_s = 8 * 3600;
  // How long before its start a window is announced, in [0, 366 days]. With rolling maintenance,
  // every rack must have a moment in each period when none of its nodes is in a window or has
  // one announced ((nodes_per_rack - 1) x every_s / nodes + duration_s + notice_s < every_s), so
  // that a job as wide as a rack can always start again.
  int64_t notice_s = 86400;
  // Windows at known times, in addition to the rolling ones (each start >= the first arrival,
  // end > start, node in the pool; they may overlap).
  std::vector<ReplayMaintenanceWindow> windows;

  bool enabled() const { return every_s > 0 || !windows.empty(); }
};

// A spot reclaim put into the replay at a known time (ReplaySpot::injected): the provider
// announces at `time` that it takes spot node `node` back.
struct ReplayInjectedReclaim {
  int64_t time = 0;
  int32_t node = 0;
};

// Spot nodes and their reclaims (docs/replay.md, "Maintenance, spot reclaims and scaling"). Off
// by default (no spot node).
//
// The last `nodes` nodes of the pool are spot (Node::spot): they take only jobs the policy lets
// on spot nodes (the replay's jobs are preemptible and checkpoint every checkpoint_interval_s).
// Reclaims of spot nodes in service are a seeded Poisson process (a reclaim drawn for a node
// already reclaimed is dropped), plus `injected`. At a reclaim the node is `reclaiming`, with
// reclaim_deadline = now + notice_s, and a cycle runs at once: the engine checkpoints and stops its
// jobs (they checkpoint on demand, at no cost, so each loses only its restore) and starts them
// elsewhere when they fit. At the deadline the provider takes the node (down; a job still on it
// stops as on a failed node); away_s later the provider gives it back.
struct ReplaySpot {
  // Spot nodes: the last `nodes` of the pool, in [0, pool.nodes].
  int32_t nodes = 0;
  // Reclaims per 1,000,000 node-days of spot nodes in service (1,000 x the CLI's
  // --spot-reclaims), in [0, 1,000,000].
  int64_t reclaims_per_million_node_days = 0;
  // From the announcement to the deadline, in [0, 86,400] (AWS gives two minutes).
  int64_t notice_s = 120;
  // From the deadline until the node is back, in (0, 8,760 h].
  int64_t away_s = 4 * 3600;
  uint64_t seed = 1;
  std::vector<ReplayInjectedReclaim> injected;

  bool enabled() const { return nodes > 0; }
};

// Scaling the pool from the engine's scale advice (docs/replay.md, "Maintenance, spot reclaims
// and scaling"). Off by default (max_nodes 0).
//
// The pool may grow by up to `max_nodes` nodes like its own ("n064".. for a pool of 64), in one
// rack of their own, "rs". At most every advice_every_s the host asks for advice: the cycle's
// policy gets a `scale` object with one template, "node", whose max_count is max_nodes minus the
// added nodes in the pool, and max_simulations. Of `add`, the nodes already ordered count toward
// it and the rest are ordered, joining the pool provision_s later (the lowest free indices
// first); of `release`, the nodes the replay added are removed at once (the pool's own nodes are
// never released). A cycle asks whenever advice is due and jobs wait, and also, while added
// nodes are in the pool, at any event once advice is due (so that idle ones go). The ledger's
// capacity counts every node the pool may have; a node not in the pool is idle there, and out of
// service in the metrics.
struct ReplayScaling {
  // Nodes the pool may add, in [0, 1,000 - pool.nodes]; 0: no scaling.
  int32_t max_nodes = 0;
  // Price of one added node per hour, in micro-units (metrics: scale cost), >= 0.
  int64_t cost_per_hour_micro = 0;
  // From the advice to the node in the pool, in [0, 86,400].
  int64_t provision_s = 600;
  // The host asks for advice at a cycle at least this long after the previous advice, in
  // [1, 86,400]; such a cycle also runs after a completion when added nodes are in the pool.
  int64_t advice_every_s = 600;
  // ScaleOptions::max_simulations of the advice, in [1, 10,000].
  int64_t max_simulations = 32;

  bool enabled() const { return max_nodes > 0; }
};

struct ReplayOptions {
  ReplayPool pool;
  // The engine policy for every cycle.
  Policy policy;
  QueueMode queue_mode = QueueMode::kPerCluster;
  // Checkpoint every this many seconds of work; a preempted job keeps its work rounded down to a
  // multiple of it. 0: never checkpoints (loses all its work).
  int64_t checkpoint_interval_s = 1800;
  // Seconds of running time without progress a preempted job pays when it starts again.
  int64_t restore_time_s = 60;
  // Preemption charged nothing: a victim keeps all its work and restarts without restore time
  // (the "las-free" policy; the engine is told so, too).
  bool free_preemption = false;
  // 2D-LAS level thresholds in GPU-seconds for the priorities of the LAS queue modes.
  std::vector<int64_t> las_thresholds_gpu_seconds = {3250, 7200};
  // Under the LAS queue modes: a job of a virtual cluster within its fair-share entitlement is
  // raised this many half LAS levels (docs/replay.md, "The fairness knob"). When it is set,
  // priorities are -2 x (2D-LAS level), plus the boost for such a job, so that the boost may
  // sit between two levels: 1 orders a cluster within its entitlement first inside a level, 2
  // puts its jobs level with those of the next level down of the other clusters, 2 x (number
  // of thresholds) + 1 above every job of a cluster beyond its entitlement. The entitlement is
  // the metrics' own (the guarantees bounded by demand, the rest water-filled with weight 1);
  // a pending job is within it when its cluster's GPUs plus its own fit in it, a running job
  // when its cluster's GPUs do (so a job evicted for a boosted one is not boosted to evict it
  // back). 0: plain 2D-LAS priorities, -(level). In [0, 1000]; must be 0 under
  // QueueMode::kPerCluster.
  int64_t fair_share_boost_half_levels = 0;
  // With a boost: a running job holding at least this many GPUs keeps the boost whatever its
  // virtual cluster holds, as if its cluster were within its entitlement. A job of its own
  // 2D-LAS level raised by the boost then no longer evicts it for fair share alone; only a job
  // that outranks it with the boost counted does (with a boost of one level: a job two levels
  // down, or one level down and raised itself). A whole node's job evicted for a small one of
  // its level costs a restore and the lost work on each of its GPUs, and such evictions were
  // most of what the boost lost (docs/replay.md, "The fairness knob"). 0: off. In [0, 2^20];
  // must be 0 without a boost.
  int64_t boost_kept_from_gpus = 0;
  // With a boost: a cluster counts as within its entitlement only if, besides fitting in it now
  // (above), it has received no more GPU-seconds than its entitlement over the last this many
  // hours: the hour holding the second before the cycle, so far, and the hours-1 before it, in
  // whole hours from the first arrival, on the same yardstick (what it held and what it was
  // entitled to, second by second). A
  // cluster served beyond its share for the past week no longer gets the boost the moment it
  // dips below its entitlement, and one that was kept below it does. Jain's index measures the
  // share over the whole run, not at one moment (docs/replay.md, "The fairness knob"). The
  // kept boost (boost_kept_from_gpus) is not affected. 0: the present only. In [0, 8784] (a
  // year); must be 0 without a boost.
  int32_t fair_share_history_hours = 0;
  // With a history (fair_share_history_hours > 0): a running job whose virtual cluster has
  // received more than this many percent of its entitlement over that window loses half a level,
  // unless it keeps the boost (boost_kept_from_gpus). A waiting job of its own 2D-LAS level (of a
  // cluster that is not so far beyond its share) then outranks it, and may evict it at its next
  // cheap moment: a cluster served far beyond its share lately gives GPUs back to the jobs of its
  // level too, not only to those above. Its waiting jobs are not lowered (that held back the short
  // jobs of the clusters above their share, which 2D-LAS serves first, and cost October's mean JCT;
  // docs/replay.md, "The fairness knob"). 0: off. In [0, 1,000,000]; must be 0 without a history.
  int64_t demote_running_above_history_percent = 0;
  // While jobs wait, the host also runs a cycle this many seconds after the previous one, even
  // without an arrival or completion (0: cycles only at arrivals and completions). A policy that
  // waits for victims to checkpoint (max_victim_lost_s) needs it: a checkpoint is not an event.
  // In [0, 86400].
  int64_t wake_up_every_s = 0;
  // While jobs wait, the host also runs a cycle when a running job checkpoints, if a job that
  // the previous cycle left pending outranks it (a higher priority in that cycle's snapshot), or
  // it runs on a node that the previous cycle reserved for a job waiting past the starvation
  // bound (with policy.preemption.starving_drain, such a reservation evicts the jobs on its
  // nodes as each becomes a cheap victim), and it will have run the policy's min_victim_run_s
  // (and starved_min_run_s, below, if it applies and the reservation may not drain past it)
  // since it last started: the moment it is the cheapest victim it will be (no work lost, only
  // its restore). Such a cycle comes no sooner than this many seconds after the previous one,
  // so that one cycle takes the checkpoints of many jobs; a job that checkpointed in between has
  // lost at most this much work by then, so a value at or below max_victim_lost_s keeps it a
  // victim (docs/replay.md, "Waking at victims' checkpoints"). Only each running job's next
  // checkpoint is looked at. 0: off. In [0, 86400]; when set, needs preemption
  // (policy.preemption.enabled) and checkpoints (checkpoint_interval_s > 0, free_preemption off).
  int64_t wake_up_at_checkpoints_s = 0;
  // A job that waited longer than the policy's starvation_bound_s before it started (one the
  // starvation guard served) is not evicted until it has run this many seconds since: the host
  // sets its Job::min_runtime_s, which holds against every eviction, a starving job's drain
  // included unless policy.preemption.starving_drain_past_min_runtime lets that drain take it
  // where the starving job has no earlier way in. Without it such a job, back at its 2D-LAS level
  // once it runs, goes at its first cheap moment to a newcomer or to the next starving job's drain,
  // waits out the bound again, and what was evicted to start it is lost for nothing
  // (docs/replay.md, "Protecting a job served for starving"). 0: off. In [0, 31,536,000] (365
  // days); when set, needs preemption (policy.preemption.enabled) and a starvation bound
  // (policy.starvation_bound_s > 0).
  int64_t starved_min_run_s = 0;
  // With starved_min_run_s: the protection holds only in a cycle where the job's virtual cluster
  // holds no more GPUs than its fair-share entitlement (the boost's yardstick,
  // fair_share_boost_half_levels: guarantees bounded by demand, the rest water-filled). A cluster
  // beyond its share keeps no job from eviction, so the GPUs each cluster protects stay within
  // what it is entitled to, and in weeks of overload protected jobs do not fill the pool and
  // turn it into FIFO for the jobs served (docs/replay.md, "Protecting a job served for
  // starving"). When set, needs starved_min_run_s > 0 and a boost.
  bool starved_min_run_within_share = false;
  // With a boost: a running job whose virtual cluster holds no more GPUs than its fair-share
  // entitlement (the yardstick of starved_min_run_within_share) is a victim only in a cycle
  // where preempting it loses at most this many seconds of work (since its last checkpoint, or
  // since it started if it has written none, as the engine counts policy.preemption.
  // max_victim_lost_s); otherwise the host offers it to the engine as not preemptible, for any
  // eviction. A job of a cluster beyond its share stays a victim up to the policy's
  // max_victim_lost_s. So evictions that only reorder the jobs of clusters served no more than
  // their share wait for the moment the victim loses (almost) nothing but its restore, while
  // evictions that take back GPUs from a cluster beyond its share are not delayed
  // (docs/replay.md, "Cheaper victims within the share"). Pair it with
  // wake_up_at_checkpoints_s at or below it, so that a cycle comes while the victim is cheap.
  // Unset: the policy's max_victim_lost_s for every victim. In [0, 86400]; when set, needs a
  // boost (fair_share_boost_half_levels > 0), preemption (policy.preemption.enabled),
  // checkpoints (checkpoint_interval_s > 0) and costed preemption (free_preemption off).
  std::optional<int64_t> max_victim_lost_within_share_s;
  // Width of the buckets of ReplayResult::series, in seconds (> 0). One hour by default.
  int64_t series_bucket_s = 3600;
  // Labels and budgets of the virtual clusters' queues (at most one entry per cluster).
  std::vector<ReplayQueue> queues;
  // Length of a budget period in seconds (> 0; a multiple of series_bucket_s keeps the HTML
  // burn-down exact). Periods start at midnight UTC of the first arrival's day (the first
  // arrival rounded down to a multiple of 86,400) and follow each other; at the start of each
  // one every queue's budget_used_milli_gpu_seconds starts again from 0. One week by default.
  int64_t budget_period_s = 7 * 86400;
  // GPU and node failures and their repairs; none by default.
  ReplayFailures failures;
  // Maintenance windows, spot nodes and their reclaims, scaling from the engine's advice; none by
  // default.
  ReplayMaintenance maintenance;
  ReplaySpot spot;
  ReplayScaling scaling;
};

// The options of a named replay policy: "fifo", "las", "las-free", "default" or "guarantees"
// (docs/replay.md says what each sets and why). InvalidArgument for other names.
absl::StatusOr<ReplayOptions> MakeReplayOptions(std::string_view policy_name);

// The E2 policies ("fifo", "las", "las-free", "default"; what `--policy all` runs), in a stable
// order. MakeReplayOptions also accepts "guarantees".
std::vector<std::string> ReplayPolicyNames();

// What one virtual cluster received.
struct QueueMetrics {
  std::string queue;
  int64_t jobs = 0;
  // GPU-seconds of work its jobs asked for (duration x GPUs), over the replay's total.
  double demand_fraction = 0;
  // Guarantee in milli-GPUs (demand_fraction x pool, rounded down).
  int64_t guaranteed_milli = 0;
  // Integrals over time of the GPUs it held (any use, restore included) and of its fair-share
  // entitlement at each instant (guarantee bounded by demand, then the surplus water-filled with
  // weight 1 among queues wanting more), in GPU-seconds.
  double received_gpu_seconds = 0;
  double entitled_gpu_seconds = 0;
  // received / entitled (0 when never entitled).
  double share_ratio = 0;
  double jct_mean_s = 0;
};

// The metrics of a replay (docs/replay.md, "Metrics"). Times in seconds.
struct ReplayMetrics {
  std::string policy;
  int64_t jobs = 0;
  int64_t jobs_completed = 0;
  // Jobs that can never run in the pool (more GPUs than a rack holds); left out of everything
  // else.
  int64_t jobs_unschedulable = 0;
  // Job completion time: completion - submit.
  double jct_mean_s = 0;
  double jct_p50_s = 0;
  double jct_p99_s = 0;
  // Queueing delay: every second a job spent pending (before its first start and after each
  // preemption).
  double queue_delay_mean_s = 0;
  double queue_delay_p99_s = 0;
  // Last completion - first submit.
  int64_t makespan_s = 0;
  // GPU-seconds held by jobs (work, lost work and restores) / (pool GPUs x makespan).
  double utilization = 0;
  int64_t preemptions = 0;
  // GPUs x (work lost since the last checkpoint + restore time) over all preemptions, in hours.
  double gpu_hours_lost_to_preemption = 0;
  // Jain's index of share_ratio over the queues with demand.
  double jain_fairness = 0;
  // The longest single stretch any job spent pending.
  int64_t max_wait_s = 0;
  // Schedule() calls made.
  int64_t cycles = 0;
  std::vector<QueueMetrics> queues;
  // Failures and repairs (ReplayOptions::failures); all 0 and `failures_on` false without them.
  bool failures_on = false;
  // The failure model the run used (rates per 1,000,000 unit-days, repair seconds, seed).
  ReplayFailures failure_model;
  // GPU and node failures that happened (drawn or injected, not dropped), and job runs they
  // stopped.
  int64_t gpu_failures = 0;
  int64_t node_failures = 0;
  int64_t failure_stops = 0;
  // GPUs x (work lost since the last checkpoint + restore time) over the runs failures stopped,
  // in hours (the preemption metric's definition).
  double gpu_hours_lost_to_failures = 0;
  // Integrals up to the last completion of the GPUs out of service (a failed GPU, or any GPU of
  // a failed node, counted once) and of the nodes down, in hours. GPUs under repair stay in the
  // pool's capacity: they are idle in the ledger and in `utilization`.
  double gpu_hours_under_repair = 0;
  double node_hours_under_repair = 0;
  // Maintenance (ReplayOptions::maintenance); all 0 and `maintenance_on` false without it.
  bool maintenance_on = false;
  ReplayMaintenance maintenance_model;
  // Windows that started, job runs their start stopped, GPUs x (work lost since the last
  // checkpoint + restore) of those runs in hours, and the integral up to the last completion of
  // the nodes in a window, in hours.
  int64_t maintenance_windows = 0;
  int64_t maintenance_stops = 0;
  double gpu_hours_lost_to_maintenance = 0;
  double node_hours_under_maintenance = 0;
  // Spot nodes (ReplayOptions::spot); all 0 and `spot_on` false without them.
  bool spot_on = false;
  ReplaySpot spot_model;
  // Reclaims that took effect, job runs they stopped (at the announcement, or at the deadline
  // for a job still there), GPUs x (work lost + restore) of those runs in hours, and the
  // integral of the spot nodes the provider held, in hours.
  int64_t spot_reclaims = 0;
  int64_t spot_stops = 0;
  double gpu_hours_lost_to_spot = 0;
  double node_hours_reclaimed = 0;
  // Scaling (ReplayOptions::scaling); all 0 and `scaling_on` false without it.
  bool scaling_on = false;
  ReplayScaling scaling_model;
  // Advice asked for; nodes ordered (added later), nodes released; the integral of the added
  // nodes in the pool up to the last completion in hours, and its price (node-hours x
  // cost_per_hour); the most added nodes in the pool at once.
  int64_t scale_advice_cycles = 0;
  int64_t nodes_added = 0;
  int64_t nodes_released = 0;
  double added_node_hours = 0;
  double scale_cost = 0;
  int32_t max_added_nodes = 0;
};

// Per-job outcome, in input order.
struct JobOutcome {
  // -1 when never started / never completed (unschedulable).
  int64_t first_start = -1;
  int64_t completion = -1;
  int64_t pending_s = 0;
  // Runs the engine stopped: preemptions, and stops for a maintenance window or a spot reclaim.
  int32_t preemptions = 0;
  // Runs stopped by a failure of a GPU or node it ran on.
  int32_t failures = 0;
  // completion - submit (-1 when unschedulable).
  int64_t jct_s = -1;
};

// What one queue held and was entitled to over time: the integrals behind
// QueueMetrics::received_gpu_seconds and entitled_gpu_seconds, cut at bucket boundaries. In
// milli-GPU-seconds, integers, so that the buckets sum exactly to the totals:
//   received_gpu_seconds == sum(received_milli_gpu_s) / 1000.0, and the same for entitled.
// The mean GPUs held in bucket k is received_milli_gpu_s[k] / (1000 x bucket_s).
struct QueueSeries {
  std::string queue;
  std::vector<int64_t> received_milli_gpu_s;
  std::vector<int64_t> entitled_milli_gpu_s;
};

// Bucket k covers [start + k x bucket_s, start + (k + 1) x bucket_s); the last one ends at the
// last completion, so it may be partial. Memory: buckets x queues.
struct ReplaySeries {
  // The first submit rounded down to a multiple of bucket_s (whole UTC hours by default).
  int64_t start = 0;
  int64_t bucket_s = 0;
  // The last completion (start when nothing ran).
  int64_t end = 0;
  // One per virtual cluster, in the order of ReplayMetrics::queues; every one has the same
  // number of buckets, ceil((end - start) / bucket_s).
  std::vector<QueueSeries> queues;
};

// What one queue with a budget used of it, period by period (ReplayBudgets).
struct QueueBudgetUse {
  std::string queue;
  // The budget of every period, in milli-GPU-seconds.
  int64_t budget_milli_gpu_s = 0;
  // Per period: the busy milli-GPU-seconds of the queue's jobs in it (from the ledger, so their
  // sum is the queue's busy_milli_gpu_s in ReplayResult::ledger), and the time of the first
  // cycle at which the queue was over its budget (used >= budget; -1: never).
  std::vector<int64_t> used_milli_gpu_s;
  std::vector<int64_t> over_budget_since;
};

// Budgets of a replay (ReplayOptions::queues), period by period. Period p covers
// [period_start + p x period_s, period_start + (p + 1) x period_s); the last one ends at the
// last completion, so it may be partial. Empty `queues`: no budget was set.
struct ReplayBudgets {
  int64_t period_start = 0;
  int64_t period_s = 0;
  int64_t periods = 0;
  // Whether the engine saw the budgets: true when the queue mode gives the engine one queue per
  // virtual cluster (fifo, guarantees); false under the single-queue LAS policies (las,
  // las-free, default), whose one queue carries no cluster's budget, so the budgets are only
  // recorded.
  bool enforced = false;
  // The queues with a budget, by name.
  std::vector<QueueBudgetUse> queues;
};

struct ReplayResult {
  ReplayMetrics metrics;
  std::vector<JobOutcome> jobs;
  ReplaySeries series;
  ReplayBudgets budgets;
  // The GPU-time ledger of the replay (docs/accounting.md), from the first arrival to the last
  // completion, with series buckets of series_bucket_s: per queue busy time split into
  // productive work, work lost to preemption and restore time, within its guarantee or
  // borrowed. Work lost to failures (ReplayOptions::failures) is lost_to_failure, 0 without them.
  LedgerReport ledger;
};

// Replays `jobs` (any order; ties broken by input index) on an empty pool until every job that
// can run has completed. Errors: InvalidArgument for a job with no GPUs or a negative duration,
// and for options.queues naming a cluster twice or one the jobs do not contain, bad labels
// (the snapshot's rules, "queues[6214e9].labels[]: key must not be empty") or a budget out of
// [0, 2^40], or budget_period_s <= 0, and for a failure model out of range (rates, repair_s,
// an injected failure before the first arrival or outside the pool, checkpoint_interval_s <= 0
// with failures on, or a rack's mean GPUs under repair above 4; docs/replay.md says why), and
// for maintenance, spot or scaling options out of range (replay.h above; rolling windows that
// leave a rack no moment free); FailedPrecondition if waiting jobs see no job arrive, start or
// complete for 4,000 simulated days;
// Internal if Schedule() or applying its decisions fails
// (a bug). Cost: one Schedule() call per
// distinct event second where something changed, each about linear in the jobs present.
absl::StatusOr<ReplayResult> RunReplay(const ReplayOptions& options,
                                       const std::vector<TraceJob>& jobs);

// The budgets as one JSON object: period_start, period_s, periods, enforced and "queues" (per
// queue: queue, budget_milli_gpu_s, used_milli_gpu_s and over_budget_since per period, and
// used_total_milli_gpu_s); docs/accounting.md, "Budgets in the replay".
std::string ReplayBudgetsToJson(const ReplayBudgets& budgets);

// The metrics as one JSON object: jct_mean_s, jct_p50_s, jct_p99_s, queue_delay_mean_s,
// queue_delay_p99_s, makespan_s, utilization, preemptions, gpu_hours_lost_to_preemption,
// jain_fairness, max_wait_s, plus policy, jobs, jobs_completed, jobs_unschedulable, cycles and
// "queues" (per-queue share received versus entitlement), one member per line; with failures
// on, a "failures" object too (the model and the failure metrics; absent without failures, so
// that output is what it was before failures existed). Written by
// gpupool::io's JSON writer: names are escaped, so any policy or queue name round-trips through
// a JSON parser; numbers have a fixed number of decimals per key, and one that is not finite is
// null. Deterministic: the same metrics give the same bytes.
std::string ReplayMetricsToJson(const ReplayMetrics& metrics);

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_REPLAY_H_
