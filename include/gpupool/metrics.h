// Metrics: a snapshot and the decisions of its cycle as Prometheus text exposition.
//
// A host that runs Schedule() in a loop serves RenderMetrics()'s output on its /metrics endpoint
// (or writes it for node_exporter's textfile collector), and dashboards and alerts read the pool
// from there. The format is the Prometheus text exposition format, version 0.0.4
// (Content-Type: text/plain; version=0.0.4); `promtool check metrics` accepts it.
//
// What is measured, and when:
//   - the pool (GPUs by model and state, nodes by state, jobs by state) and every queue's fair
//     share are taken at the start of the cycle, as the snapshot shows them;
//   - pending reasons, starts and evictions are the cycle's decisions;
//   - the `_total` counters come from a MetricsTotals the host carries from cycle to cycle
//     (AddCycle() after each Schedule()), so they only go up while the host runs.
// Names carry the `gpupool_` prefix and base units (GPUs, seconds); fractional GPUs are printed
// as exact decimals of milli-GPUs ("2.5"). docs/metrics.md lists every metric, its type,
// labels and meaning.
//
// Deterministic: the same inputs give the same bytes. Series come in a fixed order (metric, then
// labels sorted by value), and label values are escaped as the format requires.
#ifndef GPUPOOL_METRICS_H_
#define GPUPOOL_METRICS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "gpupool/decisions.h"
#include "gpupool/snapshot.h"

namespace gpupool {

// Running totals over the cycles a host has run, rendered as Prometheus counters. Start from a
// value-initialised MetricsTotals when the host starts; add each cycle with AddCycle().
struct MetricsTotals {
  int64_t cycles = 0;
  int64_t jobs_started = 0;
  // Jobs evicted (Preempt decisions) and elastic shrinks (Resize decisions with a for_job).
  int64_t preemptions = 0;
  int64_t resizes = 0;
  // Work lost by evictions and shrinks, milli-GPU-seconds (PreemptDecision and ResizeDecision's
  // lost_milli_gpu_seconds).
  int64_t lost_milli_gpu_seconds = 0;
  // Engine work (Counters of each cycle).
  int64_t candidates_evaluated = 0;
  int64_t preemption_plans = 0;
  int64_t counterfactual_plans = 0;
  // Cycles whose work budget ran out.
  int64_t budget_exhausted_cycles = 0;
};

// Adds one cycle's decisions to `totals`. Sums saturate at INT64_MAX instead of overflowing.
void AddCycle(const Decisions& decisions, MetricsTotals& totals);

// Renders the pool of `snapshot` and the cycle's `decisions` (the result of Schedule() on that
// snapshot) with the counters of `totals` (which should already include this cycle).
// Errors: those of ValidateSnapshot for an invalid snapshot; InvalidArgument when a decision
// names a job or node the snapshot does not have.
absl::StatusOr<std::string> RenderMetrics(const Snapshot& snapshot, const Decisions& decisions,
                                          const MetricsTotals& totals);

}  // namespace gpupool

#endif  // GPUPOOL_METRICS_H_
