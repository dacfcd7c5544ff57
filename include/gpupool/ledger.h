// The GPU-time ledger: who used which GPUs, for how long, and what that time went to.
//
// A host feeds the ledger what happened over time: jobs that started on GPUs, finished, were
// preempted, failed or checkpointed, at integer times on its clock (the same seconds as
// Snapshot::now). Record() turns one scheduling cycle (a snapshot and the decisions the host
// applied) into those events. The ledger reads back, exactly, in integer milli-GPU-seconds (1000
// milli-GPU-seconds = one GPU busy for one second; docs/accounting.md):
//
//   - for the pool, each GPU model and each node: capacity, busy and idle time;
//   - for the pool, each GPU model, each queue (its own jobs, and its whole subtree), each
//     queue and GPU model, each node and each job: busy time split into productive work, work lost
//     to preemption, work lost to failures and restore time;
//   - for the pool, each GPU model and each queue: busy time within the queue's guarantee and
//     borrowed above it;
//   - each queue's peak concurrent use of each GPU model (what a dedicated pool of its own would
//     have needed, pooling.h) and, optionally, busy time per queue and model in time buckets.
//
// Definitions (all exact integers; a run is one stretch of a job from Start to Finish, Preempt or
// Fail; each of its GPUs counts the milli-GPUs the job holds on it for every second of the run):
//
//   restore            the first `restore_s` seconds of a run (LedgerStart::restore_s), or all of
//                      the run if it ends sooner;
//   lost_to_preemption when a run ends by Preempt, the time after the run's last checkpoint (and
//                      after its restore); no checkpoint in the run: everything after the restore;
//   lost_to_failure    the same, when the run ends by Fail;
//   productive         everything else: all of a run that ends by Finish (except its restore),
//                      and the time up to the last checkpoint of a preempted or failed run.
//   A run still going when the ledger is read counts as if it finished at that time: its work is
//   productive until it is lost.
//
//   within_guarantee   at every instant, the GPUs a queue's own jobs hold of model m count within
//                      its guarantee up to its Quota for m; what is left over, over all models in
//                      name order, up to its "*" quota; the rest is borrowed. A queue's guarantee
//                      covers its own jobs only: a parent's guarantee is not spread over its
//                      children's jobs.
//
// Identities that always hold (tests/core/ledger_test.cc checks them on random histories):
//
//   capacity = busy + idle                       (pool, each model, each node)
//   busy = productive + lost_to_preemption + lost_to_failure + restore    (every row)
//   busy = within_guarantee + borrowed           (pool, each model, each queue, queue x model)
//   pool busy = sum of the queues' own busy = sum of the models' busy = sum of the nodes' busy
//             = sum of the jobs' busy
//   a queue's subtree figures = its own figures + the sum of its children's subtree figures
//   the sum of a queue and model's series buckets = its own figures for that model
//
// Determinism: ordered containers and integers only; the same events give the same report, byte
// for byte. Overflow: every event checks that the pool's capacity from the start time to the
// event's time fits in int64 milli-GPU-seconds (OutOfRange otherwise); every other figure is
// bounded by it. Not thread-safe: one ledger per thread, or a lock around it.
#ifndef GPUPOOL_LEDGER_H_
#define GPUPOOL_LEDGER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/decisions.h"
#include "gpupool/job.h"
#include "gpupool/node.h"
#include "gpupool/queue.h"
#include "gpupool/snapshot.h"

namespace gpupool {

// What busy GPU time went to, in milli-GPU-seconds.
// busy == productive + lost_to_preemption + lost_to_failure + restore.
struct WorkTime {
  int64_t busy = 0;
  int64_t productive = 0;
  int64_t lost_to_preemption = 0;
  int64_t lost_to_failure = 0;
  int64_t restore = 0;

  friend bool operator==(const WorkTime&, const WorkTime&) = default;
};

// Busy time of a queue (or of a sum of queues), what it went to, and how much of it was within
// the guarantee. busy == within_guarantee + borrowed.
struct QueueTime {
  WorkTime work;
  int64_t within_guarantee = 0;
  int64_t borrowed = 0;

  friend bool operator==(const QueueTime&, const QueueTime&) = default;
};

// The pool, or one GPU model of it. capacity == busy + idle, with busy == time.work.busy.
struct CapacityTime {
  // GPUs (whole) and milli-GPU-seconds of capacity from the start time to the report's end.
  int64_t gpus = 0;
  int64_t capacity = 0;
  int64_t idle = 0;
  QueueTime time;
};

struct ModelLedger {
  std::string gpu_model;
  CapacityTime usage;
};

struct NodeLedger {
  std::string node;
  std::string gpu_model;
  // capacity == work.busy + idle.
  int64_t gpus = 0;
  int64_t capacity = 0;
  int64_t idle = 0;
  WorkTime work;
};

// One queue and one GPU model: the queue's own jobs on that model.
struct QueueModelLedger {
  std::string queue;
  std::string gpu_model;
  QueueTime own;
  // The most milli-GPUs of the model the queue's own jobs held together at any instant (held for
  // at least one second).
  int64_t peak_milli = 0;
  // Busy time per series bucket (LedgerReport::series_start, series_bucket_s): its own busy,
  // within-guarantee and borrowed time in each bucket; empty without series. The sums of the
  // buckets are own.work.busy, own.within_guarantee and own.borrowed.
  std::vector<int64_t> busy_series;
  std::vector<int64_t> within_guarantee_series;
  std::vector<int64_t> borrowed_series;
};

// One queue of the tree.
struct QueueLedger {
  std::string queue;
  // Its parent ("" for a root) and its depth (0 for a root).
  std::string parent;
  int32_t depth = 0;
  // Its labels (LedgerSetup's Queue::labels), in key order. Chargeback reads "cost_center".
  std::vector<TopologyLabel> labels;
  // Its own jobs, and its own jobs with those of all its descendants.
  QueueTime own;
  QueueTime subtree;
};

struct JobLedger {
  std::string job;
  std::string queue;
  WorkTime work;
  // Runs started, and how they ended.
  int32_t runs = 0;
  int32_t preemptions = 0;
  int32_t failures = 0;
  bool running = false;
};

// Work lost to preemption by the jobs of `victim_queue` on `gpu_model`, in preemptions made for
// jobs of `by_queue` ("" when the host did not say). For each victim queue and model the
// entries sum to its own lost_to_preemption.
struct PreemptionLoss {
  std::string victim_queue;
  std::string gpu_model;
  std::string by_queue;
  int64_t lost = 0;
};

// Everything the ledger knows, as of `end_time`. Every list is sorted by its key(s).
struct LedgerReport {
  int64_t start_time = 0;
  int64_t end_time = 0;
  CapacityTime pool;
  std::vector<ModelLedger> models;
  std::vector<NodeLedger> nodes;
  // Every queue of the tree, including those that never ran anything.
  std::vector<QueueLedger> queues;
  // Every queue and model pair its own jobs used.
  std::vector<QueueModelLedger> queue_models;
  std::vector<JobLedger> jobs;
  std::vector<PreemptionLoss> preemption_losses;
  // Series buckets: bucket k covers [series_start + k x series_bucket_s, ... + series_bucket_s),
  // the last one ending at end_time. series_bucket_s == 0: no series.
  int64_t series_start = 0;
  int64_t series_bucket_s = 0;
  int64_t series_buckets = 0;
};

// What the ledger is told about the pool when it is created.
struct LedgerSetup {
  // Time the ledger starts counting capacity, on the host's clock.
  int64_t start_time = 0;
  // The pool's nodes: id, gpu_model and gpus (index) are used; nodes without GPUs are ignored.
  // Capacity is every GPU of every node, healthy or not, ready or not, from start_time on.
  std::vector<Node> nodes;
  // The queue tree: id, parent, quotas (guaranteed_milli) and labels are used.
  std::vector<Queue> queues;
  // Width of the series buckets in seconds; 0: no series. Buckets are aligned on multiples of
  // it (the first starts at start_time rounded down to one).
  int64_t series_bucket_s = 0;
};

// A job starting a run.
struct LedgerStart {
  std::string job;
  // The queue the job belongs to; must be the same in every run of the job.
  std::string queue;
  // Its replicas: node, GPU indices and milli-GPUs on each GPU (gpu_milli in 1..1000, 0 not
  // accepted here). Several replicas (of this or other jobs) may share a GPU up to 1000 in all.
  std::vector<ReplicaPlacement> placements;
  // Seconds at the start of the run spent restoring from a checkpoint (not progressing).
  int64_t restore_s = 0;
};

class Ledger {
 public:
  // Validates the setup: unique node ids, unique GPU indices per node, GPU model names on nodes
  // with GPUs, unique queue ids, known parents, no cycles, non-negative guarantees, at most one
  // quota per model per queue, label keys non-empty and unique per queue with non-empty values,
  // series_bucket_s >= 0. InvalidArgument (malformed) or
  // FailedPrecondition (inconsistent) naming the field and the id.
  static absl::StatusOr<Ledger> Create(const LedgerSetup& setup);

  Ledger(Ledger&&) noexcept;
  Ledger& operator=(Ledger&&) noexcept;
  ~Ledger();

  // Events, at `time` >= the time of every earlier event (time >= start_time). Each returns
  // InvalidArgument naming the event, the job and the field when it is malformed (time going
  // backwards, unknown queue, node or GPU, milli-GPUs out of 1..1000, negative restore) and
  // FailedPrecondition when it contradicts what the ledger knows (start of a running job, a job
  // changing queue, stop of a job that is not running, a GPU used above 1000 milli-GPUs), and
  // OutOfRange when the pool's capacity up to `time` no longer fits in int64. A failed event
  // changes nothing.

  // The job starts a run on the given GPUs.
  absl::Status Start(int64_t time, const LedgerStart& start);
  // The running job wrote a checkpoint: a later Preempt or Fail of this run loses only what
  // follows.
  absl::Status Checkpoint(int64_t time, std::string_view job);
  // The job's run ended without loss (completion, or a graceful stop after a checkpoint).
  absl::Status Finish(int64_t time, std::string_view job);
  // The job was preempted: it loses the run's work since its last checkpoint. `by_queue`: the
  // queue of the job it was preempted for ("" if unknown; must name a queue otherwise).
  // `last_checkpoint`: the time of its last checkpoint if the host knows it better than the
  // Checkpoint events (a time before the run counts as none in the run; after `time`: refused).
  absl::Status Preempt(int64_t time, std::string_view job, std::string_view by_queue = {},
                       std::optional<int64_t> last_checkpoint = std::nullopt);
  // The job failed (its GPU or node failed, or it crashed): it loses the run's work since its
  // last checkpoint, as lost_to_failure.
  absl::Status Fail(int64_t time, std::string_view job,
                    std::optional<int64_t> last_checkpoint = std::nullopt);
  // A running elastic group shrinks to its `to_replicas` replicas of lowest index (as
  // ApplyDecisions does); the removed replicas lose their work since the run's last checkpoint
  // to preemption (for jobs of `by_queue`), or nothing when `lost` is false.
  absl::Status Shrink(int64_t time, std::string_view job, std::string_view group,
                      int32_t to_replicas, bool lost, std::string_view by_queue = {});
  // Moves time forward without an event (a report then counts up to `time`).
  absl::Status AdvanceTo(int64_t time);

  // One scheduling cycle, at snapshot.now: the decisions' preemptions (each victim's last
  // checkpoint from the snapshot, by the queue of its for_job), resizes, migrations (the job
  // keeps running on its new GPUs, nothing lost) and starts (a job that ran before restores
  // for its checkpointing.restore_time_s), in that order, as ApplyDecisions() carries them out.
  // `snapshot` is the one the decisions were made for. Completions and failures are not
  // decisions: the host reports them with Finish() and Fail(). Errors as for the events; the
  // events before the failing one stay applied.
  absl::Status Record(const Snapshot& snapshot, const Decisions& decisions);

  // Time of the last event (start_time at first).
  int64_t now() const;
  // Whether the job is in the middle of a run.
  bool IsRunning(std::string_view job) const;

  // The busy milli-GPU-seconds of the jobs of `queue` and of all queues below it, from
  // start_time to now(): what Report() would give as the queue's subtree.work.busy, without
  // building a report. This is what a host keeps budgets with (docs/budgets.md): the queue's
  // budget_used_milli_gpu_seconds is SubtreeBusy(queue) now minus SubtreeBusy(queue) when the
  // period began. NotFound for an unknown queue. Cost: queues x depth x GPU models.
  absl::StatusOr<int64_t> SubtreeBusy(std::string_view queue) const;

  // Everything, as of now(). Runs still going count as finished at now(). Cost: linear in jobs,
  // nodes, queues x models and series buckets.
  LedgerReport Report() const;

 private:
  struct State;
  explicit Ledger(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace gpupool

#endif  // GPUPOOL_LEDGER_H_
