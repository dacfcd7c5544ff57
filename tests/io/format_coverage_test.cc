// A guard: the JSON format must cover every field of the public structs. When a struct of
// snapshot.h, decisions.h or policy.h gains (or loses) a field, its size changes and this test
// fails, naming the struct. Then add the field to the reader and writer in src/io/ (and to
// docs/*-format.md), and update the size here. Sizes are those of x86-64 with libstdc++; other
// platforms skip the test.
#include <cstddef>

#include "gpupool/gpupool.h"
#include "gtest/gtest.h"

namespace gpupool::io {
namespace {

struct Expected {
  const char* name;
  size_t actual;
  size_t expected;
};

TEST(FormatCoverageTest, EveryStructHasTheFieldsTheFormatKnows) {
#if defined(__x86_64__) && defined(__GLIBCXX__)
  const Expected kStructs[] = {
      {"Snapshot", sizeof(Snapshot), 128},
      {"Topology", sizeof(Topology), 24},
      {"TopologyLabel", sizeof(TopologyLabel), 64},
      {"GpuModel", sizeof(GpuModel), 64},
      {"WorkloadSpeed", sizeof(WorkloadSpeed), 40},
      {"Node", sizeof(Node), 256},
      {"Gpu", sizeof(Gpu), 48},
      {"MaintenanceWindow", sizeof(MaintenanceWindow), 16},
      {"DiagnosticRun", sizeof(DiagnosticRun), 16},
      {"Queue", sizeof(Queue), 160},
      {"Quota", sizeof(Quota), 64},
      {"Job", sizeof(Job), 256},
      {"TaskGroup", sizeof(TaskGroup), 168},
      {"ResourceRequest", sizeof(ResourceRequest), 32},
      {"TopologyConstraint", sizeof(TopologyConstraint), 64},
      {"Checkpointing", sizeof(Checkpointing), 40},
      {"ReplicaPlacement", sizeof(ReplicaPlacement), 104},
      {"StartDecision", sizeof(StartDecision), 64},
      {"Decisions", sizeof(Decisions), 536},
      {"NodeActionDecision", sizeof(NodeActionDecision), 80},
      {"HeadroomReport", sizeof(HeadroomReport), 128},
      {"PreemptDecision", sizeof(PreemptDecision), 104},
      {"MigrateDecision", sizeof(MigrateDecision), 120},
      {"ResizeDecision", sizeof(ResizeDecision), 112},
      {"ReserveDecision", sizeof(ReserveDecision), 64},
      {"PendingDecision", sizeof(PendingDecision), 200},
      {"QueueShare", sizeof(QueueShare), 104},
      {"Counters", sizeof(Counters), 104},
      {"Policy", sizeof(Policy), 432},
      {"HealthOptions", sizeof(HealthOptions), 48},
      {"MaintenanceOptions", sizeof(MaintenanceOptions), 16},
      {"Budgets", sizeof(Budgets), 24},
      {"PreemptionOptions", sizeof(PreemptionOptions), 88},
      {"FairShareOptions", sizeof(FairShareOptions), 16},
      {"BackfillOptions", sizeof(BackfillOptions), 32},
      {"ConsolidationOptions", sizeof(ConsolidationOptions), 32},
      {"ScaleOptions", sizeof(ScaleOptions), 32},
      {"NodeTemplate", sizeof(NodeTemplate), 304},
      {"ScaleAdvice", sizeof(ScaleAdvice), 104},
      {"ScaleAdd", sizeof(ScaleAdd), 40},
      {"HeadroomRule", sizeof(HeadroomRule), 56},
      {"SpotOptions", sizeof(SpotOptions), 8},
  };
  for (const Expected& s : kStructs) {
    EXPECT_EQ(s.actual, s.expected)
        << "gpupool::" << s.name << " changed size: a field was added or removed. Update the "
        << "JSON reader and writer in src/io/, the docs, and this table.";
  }
#else
  GTEST_SKIP() << "struct sizes are recorded for x86-64 with libstdc++ only";
#endif
}

}  // namespace
}  // namespace gpupool::io
