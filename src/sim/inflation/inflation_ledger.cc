// The inflation protocol's ledger (inflation_ledger.h).
#include "sim/inflation/inflation_ledger.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/resources.h"

namespace gpupool::sim {

std::string InflationPodClass(const SimPod& pod) {
  const int64_t milli = pod.request.gpu_milli;
  if (milli <= 0) return "";
  if (milli < kMilliPerGpu) return "sharing";
  return milli == kMilliPerGpu ? "one-gpu" : "multi-gpu";
}

namespace internal {
namespace {

// The classes, in the order of InflationLedger::queues.
constexpr const char* kClasses[] = {"sharing", "one-gpu", "multi-gpu"};

// A ledger error here is a bug of the protocol (it only reports what the placer did).
absl::Status Internal(const absl::Status& status) {
  if (status.ok()) return status;
  return absl::InternalError("inflation ledger: " + std::string(status.message()));
}

void AddWork(WorkTime& into, const WorkTime& w) {
  into.busy += w.busy;
  into.productive += w.productive;
  into.lost_to_preemption += w.lost_to_preemption;
  into.lost_to_failure += w.lost_to_failure;
  into.restore += w.restore;
}

void AddQueueTime(QueueTime& into, const QueueTime& t) {
  AddWork(into.work, t.work);
  into.within_guarantee += t.within_guarantee;
  into.borrowed += t.borrowed;
}

void AddCapacity(CapacityTime& into, const CapacityTime& c) {
  into.gpus += c.gpus;
  into.capacity += c.capacity;
  into.idle += c.idle;
  AddQueueTime(into.time, c.time);
}

}  // namespace

absl::StatusOr<InflationLedgerRecorder> InflationLedgerRecorder::Create(const Cluster& cluster,
                                                                        const Workload& workload) {
  LedgerSetup setup;
  std::vector<std::string> node_ids;
  int64_t gpus = 0;
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    const SimNode& sim_node = cluster.nodes[n];
    node_ids.push_back(fmt::format("n{}", n));
    Node node;
    node.id = node_ids.back();
    node.gpu_model = sim_node.gpu_model;
    for (int32_t g = 0; g < sim_node.gpu_count; ++g) node.gpus.push_back(Gpu{.index = g});
    gpus += sim_node.gpu_count;
    setup.nodes.push_back(std::move(node));
  }
  // No quotas in this protocol and nothing is reclaimed: a guarantee of the whole cluster makes
  // every busy second within guarantee.
  for (const char* name : kClasses) {
    setup.queues.push_back(
        Queue{.id = name, .quotas = {Quota{.guaranteed_milli = gpus * kMilliPerGpu}}});
  }
  absl::StatusOr<Ledger> ledger = Ledger::Create(setup);
  if (!ledger.ok()) return Internal(ledger.status());
  return InflationLedgerRecorder(*std::move(ledger), std::move(node_ids), workload);
}

absl::Status InflationLedgerRecorder::Placed(int64_t k, int32_t pod,
                                             const PodPlacement& placement) {
  if (placement.node < 0 || placement.gpus.empty()) return absl::OkStatus();
  const SimPod& p = workload_->pods[static_cast<size_t>(pod)];
  const std::string queue = InflationPodClass(p);
  if (queue.empty()) return absl::OkStatus();
  LedgerStart start;
  start.job = fmt::format("a{}", k);
  start.queue = queue;
  start.placements.push_back(ReplicaPlacement{
      .group = "main",
      .replica = 0,
      .node = node_ids_[static_cast<size_t>(placement.node)],
      .gpus = placement.gpus,
      .gpu_milli = p.request.gpu_milli < kMilliPerGpu ? p.request.gpu_milli : kMilliPerGpu});
  return Internal(ledger_.Start(k, start));
}

absl::StatusOr<InflationLedger> InflationLedgerRecorder::Finish(int64_t arrivals) {
  if (absl::Status status = ledger_.AdvanceTo(arrivals); !status.ok()) return Internal(status);
  LedgerReport report = ledger_.Report();
  InflationLedger out;
  out.arrivals = arrivals;
  out.pool = report.pool;
  out.models = std::move(report.models);
  for (const char* name : kClasses) {
    for (QueueLedger& q : report.queues) {
      if (q.queue == name) out.queues.push_back(std::move(q));
    }
  }
  return out;
}

void AddInflationLedger(InflationLedger& into, const InflationLedger& x) {
  into.arrivals += x.arrivals;
  AddCapacity(into.pool, x.pool);
  for (const ModelLedger& m : x.models) {
    auto it = std::find_if(into.models.begin(), into.models.end(),
                           [&](const ModelLedger& y) { return y.gpu_model == m.gpu_model; });
    if (it == into.models.end()) {
      into.models.push_back(m);
    } else {
      AddCapacity(it->usage, m.usage);
    }
  }
  for (const QueueLedger& q : x.queues) {
    auto it = std::find_if(into.queues.begin(), into.queues.end(),
                           [&](const QueueLedger& y) { return y.queue == q.queue; });
    if (it == into.queues.end()) {
      into.queues.push_back(q);
    } else {
      AddQueueTime(it->own, q.own);
      AddQueueTime(it->subtree, q.subtree);
    }
  }
}

}  // namespace internal
}  // namespace gpupool::sim
