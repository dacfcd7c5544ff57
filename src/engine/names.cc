// Stable names of enums that appear in output.
#include "gpupool/decisions.h"
#include "gpupool/policy.h"

namespace gpupool {

const char* PlacementStrategyName(PlacementStrategy strategy) {
  switch (strategy) {
    case PlacementStrategy::kBestFit:
      return "best-fit";
    case PlacementStrategy::kFirstFit:
      return "first-fit";
    case PlacementStrategy::kSpread:
      return "spread";
    case PlacementStrategy::kExpectedWaste:
      return "expected-waste";
  }
  return "unknown";
}

const char* JobOrderName(JobOrder order) {
  switch (order) {
    case JobOrder::kPriorityFifo:
      return "priority-fifo";
    case JobOrder::kLeastAttainedService:
      return "las";
    case JobOrder::kShortestRemaining:
      return "shortest-remaining";
  }
  return "unknown";
}

const char* QueueOrderName(QueueOrder order) {
  switch (order) {
    case QueueOrder::kNone:
      return "none";
    case QueueOrder::kFairShare:
      return "fair-share";
  }
  return "unknown";
}

const char* VictimOrderName(VictimOrder order) {
  switch (order) {
    case VictimOrder::kCheapestFirst:
      return "cheapest-first";
    case VictimOrder::kLowestPriorityFirst:
      return "lowest-priority-first";
  }
  return "unknown";
}

const char* OverrunActionName(OverrunAction action) {
  switch (action) {
    case OverrunAction::kWait:
      return "wait";
    case OverrunAction::kPreempt:
      return "preempt";
  }
  return "unknown";
}

const char* BudgetEnforcementName(BudgetEnforcement enforcement) {
  switch (enforcement) {
    case BudgetEnforcement::kEnforce:
      return "enforce";
    case BudgetEnforcement::kReportOnly:
      return "report-only";
  }
  return "unknown";
}

const char* HeadroomShapeName(HeadroomShape shape) {
  switch (shape) {
    case HeadroomShape::kGpus:
      return "gpus";
    case HeadroomShape::kNodes:
      return "nodes";
    case HeadroomShape::kIslands:
      return "islands";
  }
  return "unknown";
}

const char* PendingReasonName(PendingReason reason) {
  switch (reason) {
    case PendingReason::kNoAllowedGpuModel:
      return "no-allowed-gpu-model";
    case PendingReason::kNodeRestrictions:
      return "node-restrictions";
    case PendingReason::kNeverFits:
      return "never-fits";
    case PendingReason::kInsufficientCapacity:
      return "insufficient-capacity";
    case PendingReason::kFragmentation:
      return "fragmentation";
    case PendingReason::kTopology:
      return "topology";
    case PendingReason::kQueueLimit:
      return "queue-limit";
    case PendingReason::kMaintenance:
      return "maintenance";
    case PendingReason::kBudgetExhausted:
      return "budget-exhausted";
    case PendingReason::kHeadroom:
      return "headroom";
  }
  return "unknown";
}

const char* NodeActionName(NodeAction action) {
  switch (action) {
    case NodeAction::kCordon:
      return "cordon";
    case NodeAction::kDrain:
      return "drain";
    case NodeAction::kUncordon:
      return "uncordon";
    case NodeAction::kDiagnose:
      return "diagnose";
  }
  return "unknown";
}

}  // namespace gpupool
