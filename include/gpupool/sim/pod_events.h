// The pod-level discrete-event loop: pods arrive at given times, are placed by a PodPlacer
// (gpupool/sim/placer.h) or fail, and release what they hold when they complete. The inflation
// protocol (gpupool/sim/inflation.h) runs on it. Pods never wait or retry and nothing is
// preempted: for jobs that queue, get preempted and restart, see the job-level replay
// (gpupool/sim/replay.h).
//
// Deterministic: events are taken in a total order (time, kind, insertion), and nothing else is
// read.
#ifndef GPUPOOL_SIM_POD_EVENTS_H_
#define GPUPOOL_SIM_POD_EVENTS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/sim/placer.h"
#include "gpupool/sim/workload.h"

namespace gpupool::sim {

// Kinds of event, in the order they are processed at equal times. Preemption, checkpoint,
// failure and repair events slot in here; each kind has its handler in the event loop.
enum class PodEventKind {
  kCompletion = 0,
  kArrival = 1,
};

struct PodEvent {
  int64_t time = 0;
  PodEventKind kind = PodEventKind::kArrival;
  int32_t pod = 0;
  // Insertion order: the last tie breaker, so the order of events is total.
  int64_t sequence = 0;
};

// Observes the run after every event.
struct PodEventObserver {
  // After a pod arrived and was placed (placement.node >= 0) or failed.
  std::function<void(const PodEvent&, const PodPlacement&)> on_arrival;
  std::function<void(const PodEvent&)> on_completion;
};

// Runs arrivals (pod indices with times) through `placer`: each pod arrives at its time, is
// placed or fails (never retried), and if `workload.pods[pod].duration_s` is set, completes that
// long after it started. Returns the placements, in arrival order. InvalidArgument when
// `arrivals` and `times` differ in length; the placer's error if it fails. Cost: one Place() per
// arrival and one Release() per completion, plus a heap operation each.
absl::StatusOr<std::vector<PodPlacement>> RunPodEvents(const Workload& workload,
                                                       const std::vector<int32_t>& arrivals,
                                                       const std::vector<int64_t>& times,
                                                       PodPlacer& placer,
                                                       const PodEventObserver& observer);

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_POD_EVENTS_H_
