// The pod event loop (gpupool/sim/pod_events.h).
#include "gpupool/sim/pod_events.h"

#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace gpupool::sim {

// A min-heap of events by (time, kind, sequence). Completions come before arrivals at equal times
// so that a pod finishing at t frees its room for one arriving at t. New kinds (preemption,
// checkpoint, failure, repair) get a kind value and a case in the loop.

absl::StatusOr<std::vector<PodPlacement>> RunPodEvents(const Workload& workload,
                                                       const std::vector<int32_t>& arrivals,
                                                       const std::vector<int64_t>& times,
                                                       PodPlacer& placer,
                                                       const PodEventObserver& observer) {
  if (arrivals.size() != times.size()) {
    return absl::InvalidArgumentError("RunPodEvents: arrivals and times differ in length");
  }
  auto later = [](const PodEvent& a, const PodEvent& b) {
    return std::tie(a.time, a.kind, a.sequence) > std::tie(b.time, b.kind, b.sequence);
  };
  std::priority_queue<PodEvent, std::vector<PodEvent>, decltype(later)> queue(later);
  int64_t sequence = 0;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    queue.push(PodEvent{times[i], PodEventKind::kArrival, static_cast<int32_t>(i), sequence++});
  }
  std::vector<PodPlacement> placements(arrivals.size());
  while (!queue.empty()) {
    const PodEvent event = queue.top();
    queue.pop();
    const int32_t pod = arrivals[event.pod];
    switch (event.kind) {
      case PodEventKind::kArrival: {
        absl::StatusOr<PodPlacement> placed = placer.Place(pod);
        if (!placed.ok()) return placed.status();
        placements[event.pod] = *std::move(placed);
        const auto& duration = workload.pods[pod].duration_s;
        if (placements[event.pod].node >= 0 && duration.has_value()) {
          queue.push(
              PodEvent{event.time + *duration, PodEventKind::kCompletion, event.pod, sequence++});
        }
        if (observer.on_arrival) observer.on_arrival(event, placements[event.pod]);
        break;
      }
      case PodEventKind::kCompletion:
        placer.Release(pod, placements[event.pod]);
        if (observer.on_completion) observer.on_completion(event);
        break;
    }
  }
  return placements;
}

}  // namespace gpupool::sim
