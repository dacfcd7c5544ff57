// JSON names of the enums of the public API, both ways.
#ifndef GPUPOOL_SRC_IO_ENUM_NAMES_H_
#define GPUPOOL_SRC_IO_ENUM_NAMES_H_

#include <optional>
#include <string>
#include <string_view>

#include "gpupool/decisions.h"
#include "gpupool/job.h"
#include "gpupool/node.h"
#include "gpupool/policy.h"
#include "gpupool/queue.h"

namespace gpupool::io::internal {

// Name of each value as it appears in JSON.
std::string_view NodeStateName(NodeState state);
std::string_view NodeStateCauseName(NodeStateCause cause);
std::string_view IsolationName(Isolation isolation);
std::string_view StrictnessName(Strictness strictness);
std::string_view ReplicaScopeName(ReplicaScope scope);
std::string_view JobStateName(JobState state);

// The value with that name; nullopt for an unknown name.
std::optional<NodeState> ParseNodeState(std::string_view name);
std::optional<NodeStateCause> ParseNodeStateCause(std::string_view name);
std::optional<NodeAction> ParseNodeAction(std::string_view name);
std::optional<Isolation> ParseIsolation(std::string_view name);
std::optional<Strictness> ParseStrictness(std::string_view name);
std::optional<ReplicaScope> ParseReplicaScope(std::string_view name);
std::optional<JobState> ParseJobState(std::string_view name);
// Names from PlacementStrategyName(), JobOrderName(), QueueOrderName(), VictimOrderName() and
// PendingReasonName() of the core.
std::optional<JobOrder> ParseJobOrder(std::string_view name);
std::optional<QueueOrder> ParseQueueOrder(std::string_view name);
std::optional<VictimOrder> ParseVictimOrder(std::string_view name);
std::optional<OverrunAction> ParseOverrunAction(std::string_view name);
std::optional<BudgetEnforcement> ParseBudgetEnforcement(std::string_view name);
std::optional<PlacementStrategy> ParsePlacementStrategy(std::string_view name);
std::optional<PendingReason> ParsePendingReason(std::string_view name);

// The accepted names of each enum, comma-separated in declaration order, for error messages:
// "ready, cordoned, draining, down".
std::string NodeStateNames();
std::string NodeStateCauseNames();
std::string NodeActionNames();
std::string IsolationNames();
std::string StrictnessNames();
std::string ReplicaScopeNames();
std::string JobStateNames();
std::string JobOrderNames();
std::string QueueOrderNames();
std::string VictimOrderNames();
std::string OverrunActionNames();
std::string BudgetEnforcementNames();
std::string PlacementStrategyNames();
std::string PendingReasonNames();
// HeadroomShapeName() of the core, both ways.
std::optional<HeadroomShape> ParseHeadroomShape(std::string_view name);
std::string HeadroomShapeNames();

}  // namespace gpupool::io::internal

#endif  // GPUPOOL_SRC_IO_ENUM_NAMES_H_
