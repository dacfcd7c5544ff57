#include "io/enum_names.h"

#include <array>
#include <utility>

namespace gpupool::io::internal {
namespace {

// Each table lists every value of its enum in declaration order with its JSON name. The tables
// are the single source of both directions, so a name cannot be written that is not read back.

constexpr std::pair<NodeState, std::string_view> kNodeStates[] = {
    {NodeState::kReady, "ready"},
    {NodeState::kCordoned, "cordoned"},
    {NodeState::kDraining, "draining"},
    {NodeState::kDown, "down"},
};
constexpr std::pair<NodeStateCause, std::string_view> kNodeStateCauses[] = {
    {NodeStateCause::kHost, "host"},
    {NodeStateCause::kHealth, "health"},
    {NodeStateCause::kDiagnostic, "diagnostic"},
    {NodeStateCause::kMaintenance, "maintenance"},
};
constexpr NodeAction kNodeActions[] = {
    NodeAction::kCordon,
    NodeAction::kDrain,
    NodeAction::kUncordon,
    NodeAction::kDiagnose,
};
constexpr std::pair<Isolation, std::string_view> kIsolations[] = {
    {Isolation::kNone, "none"},
    {Isolation::kExclusiveGpu, "exclusive-gpu"},
    {Isolation::kExclusiveNode, "exclusive-node"},
};
constexpr std::pair<Strictness, std::string_view> kStrictnesses[] = {
    {Strictness::kRequired, "required"},
    {Strictness::kPreferred, "preferred"},
};
constexpr std::pair<ReplicaScope, std::string_view> kReplicaScopes[] = {
    {ReplicaScope::kNode, "node"},
    {ReplicaScope::kIsland, "island"},
};
constexpr std::pair<JobState, std::string_view> kJobStates[] = {
    {JobState::kPending, "pending"},
    {JobState::kRunning, "running"},
};
constexpr JobOrder kJobOrders[] = {
    JobOrder::kPriorityFifo,
    JobOrder::kLeastAttainedService,
    JobOrder::kShortestRemaining,
};
constexpr QueueOrder kQueueOrders[] = {
    QueueOrder::kNone,
    QueueOrder::kFairShare,
};
constexpr VictimOrder kVictimOrders[] = {
    VictimOrder::kCheapestFirst,
    VictimOrder::kLowestPriorityFirst,
};
constexpr OverrunAction kOverrunActions[] = {
    OverrunAction::kWait,
    OverrunAction::kPreempt,
};
constexpr BudgetEnforcement kBudgetEnforcements[] = {BudgetEnforcement::kEnforce,
                                                     BudgetEnforcement::kReportOnly};
constexpr PlacementStrategy kPlacementStrategies[] = {
    PlacementStrategy::kBestFit,
    PlacementStrategy::kFirstFit,
    PlacementStrategy::kSpread,
    PlacementStrategy::kExpectedWaste,
};
constexpr PendingReason kPendingReasons[] = {
    PendingReason::kNoAllowedGpuModel, PendingReason::kNodeRestrictions,
    PendingReason::kNeverFits,         PendingReason::kInsufficientCapacity,
    PendingReason::kFragmentation,     PendingReason::kTopology,
    PendingReason::kQueueLimit,        PendingReason::kBudgetExhausted,
    PendingReason::kMaintenance,       PendingReason::kHeadroom,
};
constexpr HeadroomShape kHeadroomShapes[] = {
    HeadroomShape::kGpus,
    HeadroomShape::kNodes,
    HeadroomShape::kIslands,
};

template <typename E, size_t N>
std::string_view NameOf(const std::pair<E, std::string_view> (&table)[N], E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "unknown";  // Only for values outside the enum (a cast integer).
}

template <typename E, size_t N>
std::optional<E> ValueOf(const std::pair<E, std::string_view> (&table)[N], std::string_view name) {
  for (const auto& [v, n] : table) {
    if (n == name) return v;
  }
  return std::nullopt;
}

template <typename E, size_t N>
std::string NamesOf(const std::pair<E, std::string_view> (&table)[N]) {
  std::string out;
  for (const auto& [v, name] : table) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

template <typename E, size_t N, typename NameFn>
std::optional<E> ValueOfFn(const E (&values)[N], NameFn name_fn, std::string_view name) {
  for (E v : values) {
    if (std::string_view(name_fn(v)) == name) return v;
  }
  return std::nullopt;
}

template <typename E, size_t N, typename NameFn>
std::string NamesOfFn(const E (&values)[N], NameFn name_fn) {
  std::string out;
  for (E v : values) {
    if (!out.empty()) out += ", ";
    out += name_fn(v);
  }
  return out;
}

}  // namespace

std::string_view NodeStateName(NodeState state) { return NameOf(kNodeStates, state); }
std::string_view NodeStateCauseName(NodeStateCause cause) {
  return NameOf(kNodeStateCauses, cause);
}
std::string_view IsolationName(Isolation isolation) { return NameOf(kIsolations, isolation); }
std::string_view StrictnessName(Strictness strictness) { return NameOf(kStrictnesses, strictness); }
std::string_view ReplicaScopeName(ReplicaScope scope) { return NameOf(kReplicaScopes, scope); }
std::string_view JobStateName(JobState state) { return NameOf(kJobStates, state); }

std::optional<NodeState> ParseNodeState(std::string_view name) {
  return ValueOf(kNodeStates, name);
}
std::optional<NodeStateCause> ParseNodeStateCause(std::string_view name) {
  return ValueOf(kNodeStateCauses, name);
}
std::optional<NodeAction> ParseNodeAction(std::string_view name) {
  return ValueOfFn(kNodeActions, NodeActionName, name);
}
std::optional<Isolation> ParseIsolation(std::string_view name) {
  return ValueOf(kIsolations, name);
}
std::optional<Strictness> ParseStrictness(std::string_view name) {
  return ValueOf(kStrictnesses, name);
}
std::optional<ReplicaScope> ParseReplicaScope(std::string_view name) {
  return ValueOf(kReplicaScopes, name);
}
std::optional<JobState> ParseJobState(std::string_view name) { return ValueOf(kJobStates, name); }
std::optional<JobOrder> ParseJobOrder(std::string_view name) {
  return ValueOfFn(kJobOrders, JobOrderName, name);
}
std::optional<QueueOrder> ParseQueueOrder(std::string_view name) {
  return ValueOfFn(kQueueOrders, QueueOrderName, name);
}
std::optional<VictimOrder> ParseVictimOrder(std::string_view name) {
  return ValueOfFn(kVictimOrders, VictimOrderName, name);
}
std::optional<OverrunAction> ParseOverrunAction(std::string_view name) {
  return ValueOfFn(kOverrunActions, OverrunActionName, name);
}
std::optional<BudgetEnforcement> ParseBudgetEnforcement(std::string_view name) {
  return ValueOfFn(kBudgetEnforcements, BudgetEnforcementName, name);
}
std::optional<PlacementStrategy> ParsePlacementStrategy(std::string_view name) {
  return ValueOfFn(kPlacementStrategies, PlacementStrategyName, name);
}
std::optional<PendingReason> ParsePendingReason(std::string_view name) {
  return ValueOfFn(kPendingReasons, PendingReasonName, name);
}

std::string NodeStateNames() { return NamesOf(kNodeStates); }
std::string NodeStateCauseNames() { return NamesOf(kNodeStateCauses); }
std::string NodeActionNames() { return NamesOfFn(kNodeActions, NodeActionName); }
std::string IsolationNames() { return NamesOf(kIsolations); }
std::string StrictnessNames() { return NamesOf(kStrictnesses); }
std::string ReplicaScopeNames() { return NamesOf(kReplicaScopes); }
std::string JobStateNames() { return NamesOf(kJobStates); }
std::string JobOrderNames() { return NamesOfFn(kJobOrders, JobOrderName); }
std::string QueueOrderNames() { return NamesOfFn(kQueueOrders, QueueOrderName); }
std::string VictimOrderNames() { return NamesOfFn(kVictimOrders, VictimOrderName); }
std::string OverrunActionNames() { return NamesOfFn(kOverrunActions, OverrunActionName); }
std::string BudgetEnforcementNames() {
  return NamesOfFn(kBudgetEnforcements, BudgetEnforcementName);
}
std::string PlacementStrategyNames() {
  return NamesOfFn(kPlacementStrategies, PlacementStrategyName);
}
std::string PendingReasonNames() { return NamesOfFn(kPendingReasons, PendingReasonName); }
std::optional<HeadroomShape> ParseHeadroomShape(std::string_view name) {
  return ValueOfFn(kHeadroomShapes, HeadroomShapeName, name);
}
std::string HeadroomShapeNames() { return NamesOfFn(kHeadroomShapes, HeadroomShapeName); }

}  // namespace gpupool::io::internal
