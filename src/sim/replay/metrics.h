// The replay's measurements: what RunReplay() reports (ReplayMetrics, JobOutcome, ReplaySeries
// in gpupool/sim/replay.h), recorded as the replay goes.
//
// The driver tells the recorder about time passing (AdvanceTo, which integrates the constant
// state since the previous event: GPUs held, per tenant held and entitled) and about each
// transition (Started, Preempted, Completed, CycleRan). Finish() then turns the totals into the
// metrics: JCT and queueing-delay percentiles, utilization, Jain's index of the tenants' share
// ratios, and the per-tenant series.
//
// Entitlements are the replay's own yardstick, independent of the engine, so that every policy
// is measured against the same one: at each instant the tenants' guarantees bounded by their
// demand, then the rest water-filled with weight 1 among tenants wanting more
// (docs/fair-share.md for a flat tree).
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_METRICS_H_
#define GPUPOOL_SRC_SIM_REPLAY_METRICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gpupool/sim/replay.h"
#include "sim/replay/pool_events.h"
#include "sim/replay/run_state.h"
#include "sim/replay/share_history.h"
#include "sim/replay/tenants.h"

namespace gpupool::sim::internal {

// Fair-share entitlements for one instant, in milli-GPUs, into `out` (see above). Leftover
// units below one per tenant stay unassigned.
void WaterFill(const std::vector<int64_t>& guarantee, const std::vector<int64_t>& demand,
               int64_t capacity, std::vector<int64_t>& out);

class MetricsRecorder {
 public:
  // `tenants` must outlive the recorder. The clock starts at `start` (the first arrival).
  MetricsRecorder(const ReplayOptions& options, const Tenants& tenants, int32_t num_jobs,
                  int64_t start);

  // Time moves from the previous event to `t` (>= it): integrates the GPUs held, the GPUs and
  // nodes out of service, the nodes in maintenance, taken by the spot provider and added, and
  // per tenant the GPUs held and entitled, over [previous, t).
  void AdvanceTo(int64_t t, const RunState& state, const PoolHealth& health);
  // The tenants' entitlements from now on, from the demand of `state`.
  void UpdateEntitlements(const RunState& state);

  // Job `i` starts at `t`, after waiting since `pending_since`.
  void Started(int32_t i, int64_t t, int64_t pending_since);
  // Job `i`, holding `gpus`, is preempted and loses `lost_s` seconds (work since its last
  // checkpoint plus the restore it will pay).
  void Preempted(int32_t i, int32_t gpus, int64_t lost_s);
  void Completed(int32_t i, int64_t t);
  // Job `i`, holding `gpus`, is stopped by a failure and loses `lost_s` seconds (work since its
  // last checkpoint plus the restore it will pay).
  void FailureStopped(int32_t i, int32_t gpus, int64_t lost_s);
  // A GPU / a node failed (a failure that took effect, not one dropped).
  void GpuFailed() { ++result_.metrics.gpu_failures; }
  void NodeFailed() { ++result_.metrics.node_failures; }
  // Job `i`, holding `gpus`, is stopped by a maintenance window / a spot reclaim and loses
  // `lost_s` seconds (work since its last checkpoint plus the restore it will pay).
  void MaintenanceStopped(int32_t i, int32_t gpus, int64_t lost_s);
  void SpotStopped(int32_t i, int32_t gpus, int64_t lost_s);
  void MaintenanceStarted() { ++result_.metrics.maintenance_windows; }
  void SpotReclaimed() { ++result_.metrics.spot_reclaims; }
  // Scaling: a cycle's advice carried out, a node ordered, one released.
  void ScaleAdviceTaken() { ++result_.metrics.scale_advice_cycles; }
  void NodeOrdered() { ++result_.metrics.nodes_added; }
  void NodeReleased() { ++result_.metrics.nodes_released; }
  void CycleRan() { ++result_.metrics.cycles; }
  // The tenants' shares over the last ReplayOptions::fair_share_history_hours, up to the last
  // AdvanceTo(), on the yardstick above.
  const ShareHistory& share_history() const { return share_history_; }

  // The result once no event is left.
  ReplayResult Finish(const RunState& state) &&;

 private:
  void IntegrateTenants(int64_t from, int64_t to, const std::vector<int64_t>& usage_milli);

  const Tenants& tenants_;
  const int64_t total_gpus_;
  const int64_t start_;
  int64_t now_;
  int64_t last_completion_;
  int64_t max_wait_s_ = 0;
  long double busy_gpu_seconds_ = 0;
  long double lost_gpu_seconds_ = 0;
  // Failures: GPU-seconds lost (work and restores), GPU-seconds out of service, node-seconds
  // down.
  int64_t failure_lost_gpu_seconds_ = 0;
  int64_t repair_gpu_seconds_ = 0;
  int64_t down_node_seconds_ = 0;
  // Maintenance, spot, scaling: GPU-seconds lost, node-seconds in a window, taken, added.
  int64_t maintenance_lost_gpu_seconds_ = 0;
  int64_t spot_lost_gpu_seconds_ = 0;
  int64_t maintenance_node_seconds_ = 0;
  int64_t taken_node_seconds_ = 0;
  int64_t added_node_seconds_ = 0;
  int64_t added_gpu_seconds_ = 0;
  const int32_t gpus_per_node_;
  const int64_t scaling_cost_per_hour_micro_;
  // Per tenant, milli-GPUs entitled since the last UpdateEntitlements().
  std::vector<int64_t> entitled_milli_;
  ShareHistory share_history_;
  ReplayResult result_;
};

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_METRICS_H_
