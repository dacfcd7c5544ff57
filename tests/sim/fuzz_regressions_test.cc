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

// trace_reader: CRs inside a line (in the GPU models field, and as the last model after a '|')
// were accepted, and WriteTrace -> ParseTrace then dropped the ones that ended up at the end of
// the line. The format now refuses control characters inside a line.
TEST(TraceReaderFuzzRegression, CarriageReturnInsideALineIsRefused) {
  absl::StatusOr<Trace> trace = ParseTrace(
      "gpupool-trace,1\nnode,n0,G2,8,96000,393216\npod,p1,10,,250,2000,8192,G \r\r|3\r|\r",
      "t.trace");
  ASSERT_FALSE(trace.ok());
  EXPECT_THAT(std::string(trace.status().message()),
              ::testing::HasSubstr("t.trace:3: control character in the line"));
}

}  // namespace
}  // namespace gpupool::sim
