// ValidateSnapshot: one case per kind of bad input, each an edit of the rich valid snapshot
// (validate_helpers.h), asserting the exact status code and the exact message, and the same error
// whatever the order of the input's lists.
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gpupool/validate.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "tests/core/validate_helpers.h"

namespace gpupool {
namespace {

using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeCpuNode;
using ::gpupool::testing::MakeGroup;
using ::gpupool::testing::MakeLimit;
using ::gpupool::testing::MakeModel;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeQueue;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::ShuffleSnapshot;
using ::gpupool::validate_testing::JobById;
using ::gpupool::validate_testing::kInconsistent;
using ::gpupool::validate_testing::kInvalid;
using ::gpupool::validate_testing::ModelByName;
using ::gpupool::validate_testing::NodeById;
using ::gpupool::validate_testing::QueueById;
using ::gpupool::validate_testing::RichSnapshot;

struct BadCase {
  std::string name;
  std::function<void(Snapshot&)> mutate;
  absl::StatusCode code;
  std::string message;
};

std::ostream& operator<<(std::ostream& os, const BadCase& c) { return os << c.name; }

constexpr int64_t kTooLarge = kMaxQuantity + 1;

std::vector<BadCase> BadCases() {
  return {
      // --- now and topology ---
      {"NowNegative", [](Snapshot& s) { s.now = -1; }, kInvalid, "now: must be >= 0"},
      {"LevelEmpty",
       [](Snapshot& s) {
         s.topology.levels = {"block", ""};
       },
       kInvalid, "topology.levels[1]: must not be empty"},
      {"LevelReservedNode",
       [](Snapshot& s) {
         s.topology.levels = {"block", "node"};
       },
       kInvalid, "topology.levels[1]: \"node\" is reserved"},
      {"LevelReservedIsland",
       [](Snapshot& s) {
         s.topology.levels = {"island", "rack"};
       },
       kInvalid, "topology.levels[0]: \"island\" is reserved"},
      {"LevelReservedGpu",
       [](Snapshot& s) {
         s.topology.levels = {"block", "rack", "gpu"};
       },
       kInvalid, "topology.levels[2]: \"gpu\" is reserved"},
      {"LevelDuplicate",
       [](Snapshot& s) {
         s.topology.levels = {"block", "rack", "block"};
       },
       kInvalid, "topology.levels[2]: duplicate level \"block\""},

      // --- GPU models ---
      {"ModelNameEmpty", [](Snapshot& s) { s.gpu_models.push_back(MakeModel("")); }, kInvalid,
       "gpu_models[].name: must not be empty"},
      {"ModelNameStar", [](Snapshot& s) { s.gpu_models.push_back(MakeModel("*")); }, kInvalid,
       "gpu_models[*].name: \"*\" is reserved for all models"},
      {"ModelDuplicate", [](Snapshot& s) { s.gpu_models.push_back(MakeModel("H100", 1)); },
       kInvalid, "gpu_models[H100].name: duplicate name"},
      {"ModelMemoryZero", [](Snapshot& s) { ModelByName(s, "L4").memory_mib = 0; }, kInvalid,
       "gpu_models[L4].memory_mib: must be > 0"},
      {"ModelMemoryNegative", [](Snapshot& s) { ModelByName(s, "L4").memory_mib = -5; }, kInvalid,
       "gpu_models[L4].memory_mib: must be > 0"},
      {"ModelMemoryTooLarge", [](Snapshot& s) { ModelByName(s, "L4").memory_mib = kTooLarge; },
       kInvalid, "gpu_models[L4].memory_mib: 1099511627777 is above the maximum 1099511627776"},
      {"SpeedClassEmpty",
       [](Snapshot& s) {
         ModelByName(s, "H100").speeds.push_back({"", 1000});
       },
       kInvalid, "gpu_models[H100].speeds[].workload_class: must not be empty"},
      {"SpeedClassDuplicate",
       [](Snapshot& s) {
         ModelByName(s, "H100").speeds.push_back({"train", 1000});
       },
       kInvalid, "gpu_models[H100].speeds[train]: duplicate workload class"},
      {"SpeedClassDuplicateOneNegative",
       [](Snapshot& s) {
         ModelByName(s, "H100").speeds.push_back({"train", -5});
       },
       kInvalid, "gpu_models[H100].speeds[train]: duplicate workload class"},
      {"SpeedNegative", [](Snapshot& s) { ModelByName(s, "H100").speeds[1].speed_milli = -1; },
       kInvalid, "gpu_models[H100].speeds[infer].speed_milli: must be >= 0"},

      // --- queues ---
      {"QueueIdEmpty", [](Snapshot& s) { s.queues.push_back(MakeQueue("")); }, kInvalid,
       "queues[].id: must not be empty"},
      {"QueueDuplicate", [](Snapshot& s) { s.queues.push_back(MakeQueue("team-a")); }, kInvalid,
       "queues[team-a].id: duplicate id"},
      {"QueueParentUnknown", [](Snapshot& s) { QueueById(s, "team-a").parent = "nope"; },
       kInconsistent, "queues[team-a].parent: unknown queue \"nope\""},
      {"QueueCycle", [](Snapshot& s) { QueueById(s, "org").parent = "team-a"; }, kInconsistent,
       "queues[org].parent: cycle org -> team-a -> org"},
      {"QueueCycleReachedFromOutside",
       [](Snapshot& s) {
         // a -> team-b -> c -> team-b: the walk from "a" enters the cycle, which is reported
         // from its smallest id.
         s.queues.push_back(MakeQueue("a", "team-b"));
         s.queues.push_back(MakeQueue("c", "team-b"));
         QueueById(s, "team-b").parent = "c";
       },
       kInconsistent, "queues[c].parent: cycle c -> team-b -> c"},
      {"QueueSelfParent", [](Snapshot& s) { QueueById(s, "team-b").parent = "team-b"; },
       kInconsistent, "queues[team-b].parent: cycle team-b -> team-b"},
      {"QueueIsolationBadEnum",
       [](Snapshot& s) { QueueById(s, "team-a").isolation = static_cast<Isolation>(7); }, kInvalid,
       "queues[team-a].isolation: unknown value 7"},
      {"QuotaModelEmpty", [](Snapshot& s) { QueueById(s, "org").quotas[0].gpu_model = ""; },
       kInvalid, "queues[org].quotas[].gpu_model: must not be empty"},
      {"QuotaModelDuplicate",
       [](Snapshot& s) { QueueById(s, "org").quotas.push_back(MakeLimit("A100", 1000)); }, kInvalid,
       "queues[org].quotas[A100]: duplicate GPU model"},
      {"QuotaModelUnknown",
       [](Snapshot& s) { QueueById(s, "team-a").quotas.push_back(MakeLimit("B200", 1000)); },
       kInconsistent, "queues[team-a].quotas[B200].gpu_model: unknown GPU model \"B200\""},
      {"QuotaGuaranteedAboveLimit",
       [](Snapshot& s) { QueueById(s, "org").quotas[1].guaranteed_milli = 20000; }, kInvalid,
       "queues[org].quotas[A100].guaranteed_milli: 20000 is above limit_milli 16000"},
      {"QuotaGuaranteedNegative",
       [](Snapshot& s) { QueueById(s, "org").quotas[1].guaranteed_milli = -1; }, kInvalid,
       "queues[org].quotas[A100].guaranteed_milli: must be >= 0"},
      {"QuotaLimitNegative", [](Snapshot& s) { QueueById(s, "org").quotas[0].limit_milli = -1; },
       kInvalid, "queues[org].quotas[*].limit_milli: must be >= 0"},
      {"QuotaLimitTooLarge",
       [](Snapshot& s) { QueueById(s, "org").quotas[0].limit_milli = kTooLarge; }, kInvalid,
       "queues[org].quotas[*].limit_milli: 1099511627777 is above the maximum 1099511627776"},
      {"QuotaWeightNegative",
       [](Snapshot& s) { QueueById(s, "org").quotas[1].over_quota_weight = -1; }, kInvalid,
       "queues[org].quotas[A100].over_quota_weight: must be >= 0"},
      {"QueueBudgetNegative",
       [](Snapshot& s) { QueueById(s, "team-b").budget_milli_gpu_seconds = -1; }, kInvalid,
       "queues[team-b].budget_milli_gpu_seconds: must be >= 0"},
      {"QueueLabelKeyEmpty",
       [](Snapshot& s) {
         QueueById(s, "team-b").labels.push_back({"", "x"});
       },
       kInvalid, "queues[team-b].labels[]: key must not be empty"},
      {"QueueLabelKeyDuplicate",
       [](Snapshot& s) {
         QueueById(s, "team-b").labels.push_back({"cost_center", "research"});
       },
       kInvalid, "queues[team-b].labels[cost_center]: duplicate key"},
      // Of two labels with one key, the one listed first must not decide the error.
      {"QueueLabelKeyDuplicateOneEmptyValue",
       [](Snapshot& s) {
         QueueById(s, "team-b").labels.push_back({"cost_center", ""});
       },
       kInvalid, "queues[team-b].labels[cost_center]: duplicate key"},
      {"QueueLabelKeyTooLong",
       [](Snapshot& s) {
         QueueById(s, "team-b").labels.push_back({std::string(64, 'k'), "x"});
       },
       kInvalid,
       "queues[team-b].labels[" + std::string(63, 'k') +
           "...]: key is 64 bytes long, more than 63"},
      {"QueueLabelKeyControlCharacter",
       [](Snapshot& s) {
         QueueById(s, "team-b").labels.push_back({"cost\ncenter", "x"});
       },
       kInvalid, "queues[team-b].labels[cost?center]: key must not hold control characters"},
      {"QueueLabelValueEmpty", [](Snapshot& s) { QueueById(s, "team-b").labels[1].value = ""; },
       kInvalid, "queues[team-b].labels[tier].value: must not be empty"},
      {"QueueLabelValueTooLong",
       [](Snapshot& s) { QueueById(s, "team-b").labels[0].value = std::string(254, 'v'); },
       kInvalid, "queues[team-b].labels[cost_center].value: 254 bytes long, more than 253"},
      {"QueueLabelValueControlCharacter",
       [](Snapshot& s) { QueueById(s, "team-b").labels[0].value = "ads\x7f"; }, kInvalid,
       "queues[team-b].labels[cost_center].value: must not hold control characters"},
      {"QueueDecayedUsageNegative",
       [](Snapshot& s) { QueueById(s, "team-b").decayed_usage_milli_gpu_seconds = -1; }, kInvalid,
       "queues[team-b].decayed_usage_milli_gpu_seconds: must be >= 0"},

      // --- nodes ---
      {"NodeIdEmpty", [](Snapshot& s) { s.nodes.push_back(MakeCpuNode("")); }, kInvalid,
       "nodes[].id: must not be empty"},
      {"NodeDuplicate", [](Snapshot& s) { s.nodes.push_back(MakeCpuNode("n2")); }, kInvalid,
       "nodes[n2].id: duplicate id"},
      {"NodeStateBadEnum", [](Snapshot& s) { NodeById(s, "n3").state = static_cast<NodeState>(9); },
       kInvalid, "nodes[n3].state: unknown value 9"},
      {"NodeModelUnknown", [](Snapshot& s) { NodeById(s, "n2").gpu_model = "B200"; }, kInconsistent,
       "nodes[n2].gpu_model: unknown GPU model \"B200\""},
      {"NodeGpusWithoutModel", [](Snapshot& s) { NodeById(s, "n4").gpu_model = ""; }, kInvalid,
       "nodes[n4].gpu_model: must name a GPU model when the node has GPUs"},
      {"CpuNodeModelUnknown", [](Snapshot& s) { NodeById(s, "n3").gpu_model = "B200"; },
       kInconsistent, "nodes[n3].gpu_model: unknown GPU model \"B200\""},
      {"GpuIndexNegative", [](Snapshot& s) { NodeById(s, "n4").gpus[0].index = -1; }, kInvalid,
       "nodes[n4].gpus[-1].index: must be in [0, 1024)"},
      {"GpuIndexTooLarge", [](Snapshot& s) { NodeById(s, "n4").gpus[1].index = 1024; }, kInvalid,
       "nodes[n4].gpus[1024].index: must be in [0, 1024)"},
      {"GpuIndexDuplicate", [](Snapshot& s) { NodeById(s, "n1").gpus[4].index = 3; }, kInvalid,
       "nodes[n1].gpus[3].index: duplicate index"},
      // Of two GPUs with one index, the one listed first must not decide the error.
      {"GpuIndexDuplicateOneWithBadIsland",
       [](Snapshot& s) {
         NodeById(s, "n1").gpus[4].index = 3;
         NodeById(s, "n1").gpus[4].island = -1;
       },
       kInvalid, "nodes[n1].gpus[3].index: duplicate index"},
      {"GpuIslandNegative", [](Snapshot& s) { NodeById(s, "n1").gpus[3].island = -1; }, kInvalid,
       "nodes[n1].gpus[3].island: must be >= 0"},
      {"NodeCpuNegative", [](Snapshot& s) { NodeById(s, "n3").cpu_milli = -1; }, kInvalid,
       "nodes[n3].cpu_milli: must be >= 0"},
      // --- operations facts (docs/operations.md) ---
      {"GpuXidErrorsNegative", [](Snapshot& s) { NodeById(s, "n1").gpus[2].xid_errors = -1; },
       kInvalid, "nodes[n1].gpus[2].xid_errors: must be >= 0"},
      {"GpuEccErrorsTooLarge",
       [](Snapshot& s) { NodeById(s, "n1").gpus[2].ecc_errors = kTooLarge; }, kInvalid,
       "nodes[n1].gpus[2].ecc_errors: 1099511627777 is above the maximum 1099511627776"},
      {"GpuErrorsSinceNegative", [](Snapshot& s) { NodeById(s, "n1").gpus[0].errors_since = -5; },
       kInvalid, "nodes[n1].gpus[0].errors_since: must be >= 0"},
      {"MaintenanceStartNegative",
       [](Snapshot& s) {
         NodeById(s, "n2").maintenance = {{-1, 100}};
       },
       kInvalid, "nodes[n2].maintenance[0].start: must be >= 0"},
      {"MaintenanceEndNotAfterStart",
       [](Snapshot& s) {
         NodeById(s, "n2").maintenance = {{100, 100}};
       },
       kInvalid, "nodes[n2].maintenance[0].end: 100 is not after the window's start 100"},
      {"MaintenanceWindowsOverlap",
       [](Snapshot& s) {
         NodeById(s, "n2").maintenance = {{100, 300}, {200, 400}};
       },
       kInvalid,
       "nodes[n2].maintenance[1].start: 200 is before the end 300 of the window before it "
       "(windows must be in ascending order, without overlap)"},
      {"MaintenanceWindowsUnsorted",
       [](Snapshot& s) {
         NodeById(s, "n2").maintenance = {{500, 600}, {100, 200}};
       },
       kInvalid,
       "nodes[n2].maintenance[1].start: 100 is before the end 600 of the window before it "
       "(windows must be in ascending order, without overlap)"},
      {"LastDiagnosticTimeNegative",
       [](Snapshot& s) {
         NodeById(s, "n2").last_diagnostic = DiagnosticRun{-1, true};
       },
       kInvalid, "nodes[n2].last_diagnostic.time: must be >= 0"},
      {"StateCauseUnknown",
       [](Snapshot& s) {
         NodeById(s, "n2").state = NodeState::kCordoned;
         NodeById(s, "n2").state_cause = static_cast<NodeStateCause>(9);
       },
       kInvalid, "nodes[n2].state_cause: unknown value 9"},
      {"StateCauseOnAReadyNode",
       [](Snapshot& s) {
         NodeById(s, "n2").state = NodeState::kReady;
         NodeById(s, "n2").state_cause = NodeStateCause::kHealth;
       },
       kInconsistent,
       "nodes[n2].state_cause: \"health\" but the node is ready (only a node the engine "
       "cordoned or drained has a cause)"},
      {"NodeMemoryTooLarge", [](Snapshot& s) { NodeById(s, "n3").memory_mib = kTooLarge; },
       kInvalid, "nodes[n3].memory_mib: 1099511627777 is above the maximum 1099511627776"},
      {"PathLevelUnknown",
       [](Snapshot& s) {
         NodeById(s, "n1").path.push_back({"zone", "z1"});
       },
       kInconsistent, "nodes[n1].path[zone].level: unknown topology level \"zone\""},
      {"PathLevelDuplicate",
       [](Snapshot& s) {
         NodeById(s, "n1").path.push_back({"rack", "r9"});
       },
       kInvalid, "nodes[n1].path[rack]: duplicate level"},
      {"PathLevelEmpty",
       [](Snapshot& s) {
         NodeById(s, "n1").path.push_back({"", "x"});
       },
       kInvalid, "nodes[n1].path[].level: must not be empty"},
      {"PathValueEmpty", [](Snapshot& s) { NodeById(s, "n2").path[1].value = ""; }, kInvalid,
       "nodes[n2].path[rack].value: must not be empty"},
      {"LabelKeyEmpty",
       [](Snapshot& s) {
         NodeById(s, "n1").labels.push_back({"", "x"});
       },
       kInvalid, "nodes[n1].labels[]: key must not be empty"},
      {"LabelKeyDuplicate",
       [](Snapshot& s) {
         NodeById(s, "n1").labels.push_back({"kind", "hgx"});
       },
       kInvalid, "nodes[n1].labels[kind]: duplicate key"},
      {"OwnerQueueUnknown", [](Snapshot& s) { NodeById(s, "n4").owner_queues.push_back("zz"); },
       kInconsistent, "nodes[n4].owner_queues: unknown queue \"zz\""},
      {"OwnerQueueEmpty", [](Snapshot& s) { NodeById(s, "n4").owner_queues.push_back(""); },
       kInvalid, "nodes[n4].owner_queues: must not hold an empty id"},
      {"OwnerQueueTwice",
       [](Snapshot& s) {
         NodeById(s, "n4").owner_queues.push_back("team-a");
         NodeById(s, "n4").owner_queues.push_back("team-a");
       },
       kInvalid, "nodes[n4].owner_queues: queue \"team-a\" named twice"},
      {"ReclaimingNotSpot", [](Snapshot& s) { NodeById(s, "n3").reclaiming = true; }, kInvalid,
       "nodes[n3].reclaiming: only a spot node is reclaimed (set spot)"},
      {"ReclaimDeadlineNotReclaiming",
       [](Snapshot& s) {
         NodeById(s, "n3").spot = true;
         NodeById(s, "n3").reclaim_deadline = 100;
       },
       kInvalid, "nodes[n3].reclaim_deadline: set only on a node that is reclaiming"},
      {"ReclaimDeadlineNegative",
       [](Snapshot& s) {
         Node& n = NodeById(s, "n3");
         n.spot = true;
         n.reclaiming = true;
         n.reclaim_deadline = -5;
       },
       kInvalid, "nodes[n3].reclaim_deadline: must be >= 0"},

      // --- jobs ---
      {"JobIdEmpty", [](Snapshot& s) { s.jobs.push_back(MakePendingJob("", "org", {})); }, kInvalid,
       "jobs[].id: must not be empty"},
      {"JobDuplicate", [](Snapshot& s) { s.jobs.push_back(MakePendingJob("j4", "org", {})); },
       kInvalid, "jobs[j4].id: duplicate id"},
      {"JobQueueEmpty", [](Snapshot& s) { JobById(s, "j1").queue = ""; }, kInvalid,
       "jobs[j1].queue: must not be empty"},
      {"JobQueueUnknown", [](Snapshot& s) { JobById(s, "j1").queue = "q9"; }, kInconsistent,
       "jobs[j1].queue: unknown queue \"q9\""},
      {"JobSubmitTimeNegative", [](Snapshot& s) { JobById(s, "j1").submit_time = -1; }, kInvalid,
       "jobs[j1].submit_time: must be >= 0"},
      {"JobNoGroups", [](Snapshot& s) { JobById(s, "j1").groups.clear(); }, kInvalid,
       "jobs[j1].groups: must not be empty"},
      {"GroupNameEmpty", [](Snapshot& s) { JobById(s, "j3").groups[1].name = ""; }, kInvalid,
       "jobs[j3].groups[].name: must not be empty"},
      {"GroupNameDuplicate", [](Snapshot& s) { JobById(s, "j3").groups[1].name = "worker"; },
       kInvalid, "jobs[j3].groups[worker].name: duplicate name"},
      {"ReplicasZero", [](Snapshot& s) { JobById(s, "j1").groups[0].replicas = 0; }, kInvalid,
       "jobs[j1].groups[main].replicas: must be >= 1"},
      {"MinReplicasZero", [](Snapshot& s) { JobById(s, "j1").groups[0].min_replicas = 0; },
       kInvalid, "jobs[j1].groups[main].min_replicas: must be >= 1"},
      {"MinReplicasAboveReplicas", [](Snapshot& s) { JobById(s, "j1").groups[0].min_replicas = 3; },
       kInvalid, "jobs[j1].groups[main].min_replicas: 3 is above replicas 2"},
      {"GpuMilliNotWholeGpus",
       [](Snapshot& s) { JobById(s, "j1").groups[0].request.gpu_milli = 1500; }, kInvalid,
       "jobs[j1].groups[main].request.gpu_milli: 1500 is above 1000 and not a multiple of 1000"},
      {"GpuMilliNegative", [](Snapshot& s) { JobById(s, "j1").groups[0].request.gpu_milli = -1; },
       kInvalid, "jobs[j1].groups[main].request.gpu_milli: must be >= 0"},
      {"GpuMilliTooManyGpus",
       [](Snapshot& s) { JobById(s, "j1").groups[0].request.gpu_milli = 1025000; }, kInvalid,
       "jobs[j1].groups[main].request.gpu_milli: 1025000 asks for more than 1024 GPUs"},
      {"GpuMemoryNegative",
       [](Snapshot& s) { JobById(s, "j1").groups[0].request.gpu_memory_mib = -1; }, kInvalid,
       "jobs[j1].groups[main].request.gpu_memory_mib: must be >= 0"},
      {"CpuTooLarge", [](Snapshot& s) { JobById(s, "j1").groups[0].request.cpu_milli = kTooLarge; },
       kInvalid,
       "jobs[j1].groups[main].request.cpu_milli: 1099511627777 is above the maximum "
       "1099511627776"},
      {"MemoryNegative", [](Snapshot& s) { JobById(s, "j1").groups[0].request.memory_mib = -1; },
       kInvalid, "jobs[j1].groups[main].request.memory_mib: must be >= 0"},
      {"JobTotalCpuOverflows",
       [](Snapshot& s) { JobById(s, "j1").groups[0].request.cpu_milli = kMaxQuantity; }, kInvalid,
       "jobs[j1].groups[main].request.cpu_milli: the job's total is above the maximum "
       "1099511627776"},
      {"JobTooManyReplicas",
       [](Snapshot& s) {
         Job& j = JobById(s, "j5");
         j.groups[0].replicas = 1 << 19;
         j.groups.push_back(MakeGroup("more", GpuRequest(0), (1 << 19) + 1));
       },
       kInvalid,
       "jobs[j5].groups[more].replicas: the job's replicas total 1048577, above the maximum "
       "1048576"},
      {"GpuModelsStar", [](Snapshot& s) { JobById(s, "j1").groups[0].gpu_models = {"*"}; },
       kInvalid,
       "jobs[j1].groups[main].gpu_models: \"*\" is not a model (leave the list empty to accept "
       "any)"},
      {"GpuModelsEmptyName",
       [](Snapshot& s) {
         JobById(s, "j1").groups[0].gpu_models = {"A100", ""};
       },
       kInvalid, "jobs[j1].groups[main].gpu_models: must not hold an empty name"},
      {"GpuModelsDuplicate",
       [](Snapshot& s) {
         JobById(s, "j1").groups[0].gpu_models = {"A100", "L4", "A100"};
       },
       kInvalid, "jobs[j1].groups[main].gpu_models: duplicate model \"A100\""},
      {"GangLevelUnknown",
       [](Snapshot& s) { JobById(s, "j4").groups[0].topology.gang_level = "zone"; }, kInconsistent,
       "jobs[j4].groups[main].topology.gang_level: unknown topology level \"zone\""},
      {"GangLevelReservedIsland",
       [](Snapshot& s) { JobById(s, "j4").groups[0].topology.gang_level = "island"; },
       kInconsistent,
       "jobs[j4].groups[main].topology.gang_level: unknown topology level \"island\""},
      {"GangLevelEmpty", [](Snapshot& s) { JobById(s, "j4").groups[0].topology.gang_level = ""; },
       kInvalid, "jobs[j4].groups[main].topology.gang_level: must not be empty"},
      {"ReplicaScopeBadEnum",
       [](Snapshot& s) {
         JobById(s, "j4").groups[0].topology.replica_scope = static_cast<ReplicaScope>(5);
       },
       kInvalid, "jobs[j4].groups[main].topology.replica_scope: unknown value 5"},
      {"GangStrictnessBadEnum",
       [](Snapshot& s) {
         JobById(s, "j4").groups[0].topology.gang_strictness = static_cast<Strictness>(-1);
       },
       kInvalid, "jobs[j4].groups[main].topology.gang_strictness: unknown value -1"},
      {"MaxReplicasPerNodeZero",
       [](Snapshot& s) { JobById(s, "j4").groups[0].topology.max_replicas_per_node = 0; }, kInvalid,
       "jobs[j4].groups[main].topology.max_replicas_per_node: must be >= 1, got 0"},
      {"MaxReplicasPerNodeNegative",
       [](Snapshot& s) { JobById(s, "j4").groups[0].topology.max_replicas_per_node = -2; },
       kInvalid, "jobs[j4].groups[main].topology.max_replicas_per_node: must be >= 1, got -2"},
      // j5 is a gang of 3 replicas on one node (gang_level "node", required).
      {"MaxReplicasPerNodeBelowANodeGang",
       [](Snapshot& s) { JobById(s, "j5").groups[0].topology.max_replicas_per_node = 2; }, kInvalid,
       "jobs[j5].groups[main].topology.max_replicas_per_node: 2 is below the group's 3 required "
       "replicas, which gang_level \"node\" (required) puts on one node"},
      {"CheckpointIntervalNegative",
       [](Snapshot& s) { JobById(s, "j1").checkpointing.interval_s = -1; }, kInvalid,
       "jobs[j1].checkpointing.interval_s: must be >= 0"},
      {"LastCheckpointNegative",
       [](Snapshot& s) { JobById(s, "j1").checkpointing.last_checkpoint_time = -1; }, kInvalid,
       "jobs[j1].checkpointing.last_checkpoint_time: must be >= 0"},
      {"CheckpointCostNegative",
       [](Snapshot& s) { JobById(s, "j1").checkpointing.checkpoint_cost_s = -1; }, kInvalid,
       "jobs[j1].checkpointing.checkpoint_cost_s: must be >= 0"},
      {"RestoreTimeNegative",
       [](Snapshot& s) { JobById(s, "j1").checkpointing.restore_time_s = -1; }, kInvalid,
       "jobs[j1].checkpointing.restore_time_s: must be >= 0"},
      {"MinRuntimeNegative", [](Snapshot& s) { JobById(s, "j5").min_runtime_s = -1; }, kInvalid,
       "jobs[j5].min_runtime_s: must be >= 0"},
      {"RuntimeEstimateNegative", [](Snapshot& s) { JobById(s, "j1").runtime_estimate_s = -1; },
       kInvalid, "jobs[j1].runtime_estimate_s: must be >= 0"},
      {"AttainedServiceNegative", [](Snapshot& s) { JobById(s, "j3").attained_service_s = -1; },
       kInvalid, "jobs[j3].attained_service_s: must be >= 0"},
      {"JobStateBadEnum", [](Snapshot& s) { JobById(s, "j1").state = static_cast<JobState>(4); },
       kInvalid, "jobs[j1].state: unknown value 4"},

      // --- pending and running state ---
      {"PendingWithPlacements",
       [](Snapshot& s) { JobById(s, "j1").placements = {Placement("n1", {7})}; }, kInconsistent,
       "jobs[j1].placements: a pending job must have none"},
      {"PendingWithStartTime", [](Snapshot& s) { JobById(s, "j1").start_time = 5; }, kInconsistent,
       "jobs[j1].start_time: a pending job must have none"},
      {"RunningWithoutStartTime", [](Snapshot& s) { JobById(s, "j2").start_time.reset(); },
       kInconsistent, "jobs[j2].start_time: a running job must have one"},
      {"RunningStartTimeNegative", [](Snapshot& s) { JobById(s, "j2").start_time = -3; }, kInvalid,
       "jobs[j2].start_time: must be >= 0"},
      {"PlacementUnknownGroup", [](Snapshot& s) { JobById(s, "j2").placements[1].group = "x"; },
       kInconsistent, "jobs[j2].placements[x/1].group: unknown group \"x\""},
      {"PlacementReplicaOutOfRange",
       [](Snapshot& s) { JobById(s, "j2").placements[1].replica = 2; }, kInvalid,
       "jobs[j2].placements[main/2].replica: must be in [0, 2)"},
      {"PlacementReplicaNegative", [](Snapshot& s) { JobById(s, "j2").placements[1].replica = -1; },
       kInvalid, "jobs[j2].placements[main/-1].replica: must be in [0, 2)"},
      {"PlacementReplicaDuplicate", [](Snapshot& s) { JobById(s, "j2").placements[1].replica = 0; },
       kInvalid, "jobs[j2].placements[main/0]: duplicate replica"},
      {"PlacementDuplicateReplicaOneOnUnknownNode",
       [](Snapshot& s) {
         JobById(s, "j2").placements[1].replica = 0;
         JobById(s, "j2").placements[1].node = "n9";
       },
       kInvalid, "jobs[j2].placements[main/0]: duplicate replica"},
      {"RunningBelowMinReplicas", [](Snapshot& s) { JobById(s, "j2").placements.pop_back(); },
       kInconsistent, "jobs[j2].groups[main]: running with 1 replicas, needs between 2 and 2"},
      {"RunningGroupWithoutReplicas", [](Snapshot& s) { JobById(s, "j3").placements.pop_back(); },
       kInconsistent, "jobs[j3].groups[ps]: running with 0 replicas, needs between 1 and 1"},
      {"PlacementUnknownNode", [](Snapshot& s) { JobById(s, "j2").placements[1].node = "n9"; },
       kInconsistent, "jobs[j2].placements[main/1].node: unknown node \"n9\""},
      {"PlacementGpuNotOnNode",
       [](Snapshot& s) {
         JobById(s, "j2").placements[1].gpus = {2, 9};
       },
       kInconsistent, "jobs[j2].placements[main/1].gpus: node n1 has no GPU 9"},
      {"PlacementGpuOnCpuNode", [](Snapshot& s) { JobById(s, "j3").placements[0].node = "n3"; },
       kInconsistent, "jobs[j3].placements[worker/0].gpus: node n3 has no GPU 0"},
      {"PlacementTooFewGpus", [](Snapshot& s) { JobById(s, "j2").placements[1].gpus = {2}; },
       kInconsistent, "jobs[j2].placements[main/1].gpus: 1 GPUs given, the group asks for 2"},
      {"PlacementGpusForCpuOnlyReplica",
       [](Snapshot& s) { JobById(s, "j3").placements[1].gpus = {0}; }, kInconsistent,
       "jobs[j3].placements[ps/0].gpus: 1 GPUs given, the group asks for 0"},
      {"PlacementDuplicateGpu",
       [](Snapshot& s) {
         JobById(s, "j2").placements[1].gpus = {2, 2};
       },
       kInvalid, "jobs[j2].placements[main/1].gpus: duplicate GPU 2"},
      {"PlacementMilliMismatch",
       [](Snapshot& s) { JobById(s, "j3").placements[0].gpu_milli = 250; }, kInconsistent,
       "jobs[j3].placements[worker/0].gpu_milli: 250 differs from the group's 500 per GPU"},
      {"PlacementMilliNegative",
       [](Snapshot& s) { JobById(s, "j3").placements[0].gpu_milli = -500; }, kInvalid,
       "jobs[j3].placements[worker/0].gpu_milli: must be >= 0"},
      {"RunningOnModelNotAccepted",
       [](Snapshot& s) {
         JobById(s, "j2").groups[0].gpu_models = {"H100", "L4"};
       },
       kInconsistent,
       "jobs[j2].placements[main/0].node: node n1 has GPU model \"A100\", which the group does "
       "not accept"},

      // --- over-commitment ---
      {"GpuOverCommitted",
       [](Snapshot& s) {
         // j6 takes 600 of GPU 0 on n2, where j3's worker already has 500.
         s.jobs.push_back(
             MakeRunningJob("j6", "team-a", GpuRequest(600), {Placement("n2", {0})}, 0));
       },
       kInconsistent,
       "nodes[n2].gpus[0]: over-committed: running jobs use 1100 milli-GPUs of 1000 (jobs: j3 500, "
       "j6 "
       "600)"},
      {"WholeGpuOverCommitted",
       [](Snapshot& s) {
         s.jobs.push_back(
             MakeRunningJob("j6", "team-a", GpuRequest(1000), {Placement("n1", {3})}, 0));
       },
       kInconsistent,
       "nodes[n1].gpus[3]: over-committed: running jobs use 2000 milli-GPUs of 1000 (jobs: j2 "
       "1000, "
       "j6 1000)"},
      {"RunningShareNeedsMoreGpuMemoryThanTheGpuHas",
       [](Snapshot& s) { JobById(s, "j3").groups[0].request.gpu_memory_mib = 90000; },
       kInconsistent,
       "jobs[j3].placements[worker/0].node: the group needs 90000 MiB per GPU, node n2 has 81920 "
       "MiB GPUs"},
      {"GpuMemoryOverCommitted",
       [](Snapshot& s) {
         // j6 shares GPU 0 of n2 with j3's worker: 500 + 250 milli fit, 20000 + 70000 MiB do not.
         s.jobs.push_back(MakeRunningJob("j6", "team-a", GpuRequest(250, 0, 0, 70000),
                                         {Placement("n2", {0})}, 0));
       },
       kInconsistent,
       "nodes[n2].gpus[0]: GPU memory over-committed: running jobs use 90000 MiB of "
       "81920 (jobs: j3 20000, j6 70000)"},
      {"CpuOverCommitted",
       [](Snapshot& s) { JobById(s, "j2").groups[0].request.cpu_milli = 40000; }, kInconsistent,
       "nodes[n1].cpu_milli: over-committed: running jobs use 80000 of 64000"},
      {"MemoryOverCommitted",
       [](Snapshot& s) {
         s.jobs.push_back(
             MakeRunningJob("j6", "team-a", GpuRequest(0, 0, 520000), {Placement("n3", {})}, 0));
       },
       kInconsistent, "nodes[n3].memory_mib: over-committed: running jobs use 528192 of 524288"},
  };
}

class ValidateBadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ValidateBadInputTest, RefusedWithExactCodeAndMessage) {
  const BadCase& c = GetParam();
  Snapshot snapshot = RichSnapshot();
  c.mutate(snapshot);
  absl::Status status = ValidateSnapshot(snapshot);
  EXPECT_EQ(status.code(), c.code) << status;
  EXPECT_EQ(std::string(status.message()), c.message);
}

TEST_P(ValidateBadInputTest, SameErrorWhateverTheListOrder) {
  const BadCase& c = GetParam();
  Snapshot snapshot = RichSnapshot();
  c.mutate(snapshot);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(::testing::Message() << "shuffle seed " << seed);
    Snapshot shuffled = snapshot;
    ShuffleSnapshot(shuffled, seed);
    absl::Status status = ValidateSnapshot(shuffled);
    EXPECT_EQ(status.code(), c.code);
    EXPECT_EQ(std::string(status.message()), c.message);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, ValidateBadInputTest, ::testing::ValuesIn(BadCases()),
                         [](const ::testing::TestParamInfo<BadCase>& param_info) {
                           return param_info.param.name;
                         });

}  // namespace
}  // namespace gpupool
