#include "maintenance.h"

#include <algorithm>

#include "internal/saturating.h"

namespace gpupool::internal {

std::optional<int64_t> RemainingEstimate(const Job& job) {
  if (!job.runtime_estimate_s.has_value()) return std::nullopt;
  if (job.state == JobState::kPending) return *job.runtime_estimate_s;
  return std::max<int64_t>(0, *job.runtime_estimate_s - job.attained_service_s);
}

std::optional<int64_t> ExpectedEnd(const Job& job, int64_t now) {
  const std::optional<int64_t> remaining = RemainingEstimate(job);
  if (!remaining) return std::nullopt;
  return SaturatingAdd(now, *remaining);
}

const MaintenanceWindow* ActiveWindow(const Node& node, int64_t now) {
  for (const MaintenanceWindow& window : node.maintenance) {
    if (window.start > now) return nullptr;  // ascending: none later is in progress
    if (now < window.end) return &window;
  }
  return nullptr;
}

const MaintenanceWindow* NextWindow(const Node& node, int64_t now) {
  for (const MaintenanceWindow& window : node.maintenance) {
    if (window.start > now) return &window;
  }
  return nullptr;
}

const MaintenanceWindow* WindowInTheWay(const Node& node, int64_t now,
                                        std::optional<int64_t> remaining) {
  for (const MaintenanceWindow& window : node.maintenance) {
    if (window.end <= now) continue;          // over
    if (window.start <= now) return &window;  // in progress
    // Ascending: this is the first window ahead; the job must end by its start.
    if (!remaining || SaturatingAdd(now, *remaining) > window.start) return &window;
    return nullptr;
  }
  return nullptr;
}

WindowGate::WindowGate(const SnapshotIndex& index, const Policy& policy)
    : index_(index), policy_(policy) {
  const int64_t now = index.snapshot().now;
  for (int32_t n = 0; n < index.node_count(); ++n) {
    const std::vector<MaintenanceWindow>& windows = index.node(n).maintenance;
    if (!windows.empty() && windows.back().end > now) nodes_with_windows_.push_back(n);
  }
  active_ = !nodes_with_windows_.empty();
}

const MaintenanceWindow* WindowGate::Blocking(int32_t j, int32_t n) const {
  if (!active_ || ignoring_) return nullptr;
  const Node& node = index_.node(n);
  if (node.maintenance.empty()) return nullptr;
  const Job& job = *index_.job(j).job;
  const int64_t now = index_.snapshot().now;
  std::optional<int64_t> remaining = RemainingEstimate(job);
  if (!remaining && policy_.maintenance.start_without_estimate) {
    // Allowed to start; it is stopped at the window's start. Only a window in progress blocks.
    const MaintenanceWindow* active = ActiveWindow(node, now);
    return active;
  }
  return WindowInTheWay(node, now, remaining);
}

bool WindowGate::BlocksAnywhere(int32_t j) const {
  if (!active_ || ignoring_) return false;
  return std::any_of(nodes_with_windows_.begin(), nodes_with_windows_.end(),
                     [&](int32_t n) { return Blocking(j, n) != nullptr; });
}

}  // namespace gpupool::internal
