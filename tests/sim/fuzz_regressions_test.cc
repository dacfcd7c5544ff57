// Regression tests for what the fuzz targets of tests/fuzz found in the simulator's readers, one
// test per finding, named after what broke (tests/fuzz/README.md lists the findings).
#include <string>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gpupool/sim/workload.h"
#include "gtest/gtest.h"

namespace gpupool::sim {
namespace {

using ::testing::ElementsAre;

// trace_reader: a pod line ending in several '\r' before its '\n' kept all but one of them in its
// last field (the GPU models), so WriteTrace -> ParseTrace lost one more '\r' on every round trip.
TEST(TraceReaderFuzzRegression, CarriageReturnsBeforeTheNewlineEndTheLine) {
  absl::StatusOr<Trace> trace = ParseTrace(
      "gpupool-trace,1\r\nnode,n0,G2,8,96000,393216\r\r\npod,p0,0,3600,1000,4000,184,G2|T4\r\r\r\n",
      "t.trace");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->workload.pods.size(), 1u);
  EXPECT_THAT(trace->workload.pods[0].gpu_models, ElementsAre("G2", "T4"));
  EXPECT_EQ(trace->cluster.nodes[0].memory_mib, 393216);

  const std::string written = WriteTrace(*trace);
  EXPECT_EQ(written,
            "gpupool-trace,1\nnode,n0,G2,8,96000,393216\npod,p0,0,3600,1000,4000,184,G2|T4\n");
  absl::StatusOr<Trace> reread = ParseTrace(written, "t.trace");
  ASSERT_TRUE(reread.ok()) << reread.status();
  EXPECT_EQ(WriteTrace(*reread), written);
}

}  // namespace
}  // namespace gpupool::sim
