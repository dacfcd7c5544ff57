// The inflation protocol's ledger (InflationLedger, gpupool/sim/inflation.h): each placed pod
// told to a gpupool::Ledger as a run that starts at its arrival and never ends, and the report
// cut down to what the protocol's outputs show.
//
// Not API: a part of RunInflation() (inflation.cc).
#ifndef GPUPOOL_SRC_SIM_INFLATION_INFLATION_LEDGER_H_
#define GPUPOOL_SRC_SIM_INFLATION_INFLATION_LEDGER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/ledger.h"
#include "gpupool/sim/inflation.h"
#include "gpupool/sim/placer.h"
#include "gpupool/sim/workload.h"

namespace gpupool::sim::internal {

class InflationLedgerRecorder {
 public:
  // A ledger of `cluster`'s GPU nodes (ids "n0", "n1", ... by position) and the three request
  // classes, from time 0. `workload` must outlive the recorder.
  static absl::StatusOr<InflationLedgerRecorder> Create(const Cluster& cluster,
                                                        const Workload& workload);

  // Arrival `k` (its time) placed workload pod `pod` as `placement` (node -1: failed, nothing
  // recorded; a pod without GPUs holds none).
  absl::Status Placed(int64_t k, int32_t pod, const PodPlacement& placement);
  // The ledger after `arrivals` arrivals.
  absl::StatusOr<InflationLedger> Finish(int64_t arrivals);

 private:
  InflationLedgerRecorder(Ledger ledger, std::vector<std::string> node_ids,
                          const Workload& workload)
      : ledger_(std::move(ledger)), node_ids_(std::move(node_ids)), workload_(&workload) {}

  Ledger ledger_;
  // The ledger's node id of each node of the cluster, by position.
  std::vector<std::string> node_ids_;
  const Workload* workload_;
};

// Adds `x` to `into` figure by figure (models and queues matched by name).
void AddInflationLedger(InflationLedger& into, const InflationLedger& x);

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_INFLATION_INFLATION_LEDGER_H_
