// The openb CSV readers and gpupool's trace format, including malformed rows.
#include <string>

#include "gmock/gmock.h"
#include "gpupool/sim/workload.h"
#include "gtest/gtest.h"

namespace gpupool::sim {
namespace {

using ::testing::HasSubstr;

constexpr char kPodHeader[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

TEST(OpenbNodes, ParsesRows) {
  absl::StatusOr<Cluster> c = ParseOpenbNodes(
      "sn,cpu_milli,memory_mib,gpu,model\n"
      "n0,64000,262144,2,P100\n"
      "n1,96000,393216,8,G2\r\n",
      "nodes.csv");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->nodes.size(), 2u);
  EXPECT_EQ(c->nodes[1].id, "n1");
  EXPECT_EQ(c->nodes[1].gpu_model, "G2");
  EXPECT_EQ(c->nodes[1].gpu_count, 8);
  EXPECT_EQ(c->nodes[0].cpu_milli, 64000);
  EXPECT_EQ(c->nodes[0].memory_mib, 262144);
  EXPECT_EQ(c->TotalGpuMilli(), 10000);
}

TEST(OpenbNodes, MalformedRowNamesFileLineAndColumn) {
  absl::StatusOr<Cluster> c = ParseOpenbNodes(
      "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,lots,1,1,T4\n", "nodes.csv");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(), "nodes.csv:3: cpu_milli: expected an integer, got \"lots\"");
}

TEST(OpenbNodes, RejectsWrongHeaderAndColumnCount) {
  EXPECT_THAT(ParseOpenbNodes("a,b\n", "x.csv").status().message(), HasSubstr("x.csv:1: header"));
  EXPECT_EQ(
      ParseOpenbNodes("sn,cpu_milli,memory_mib,gpu,model\nn0,1,2\n", "x.csv").status().message(),
      "x.csv:2: expected 5 columns, got 3");
  EXPECT_EQ(
      ParseOpenbNodes("sn,cpu_milli,memory_mib,gpu,model\nn0,1,2,2,\n", "x.csv").status().message(),
      "x.csv:2: model: expected a GPU model, got \"\"");
}

TEST(OpenbPods, ParsesClassesAndSpecs) {
  absl::StatusOr<Workload> w = ParseOpenbPods(std::string(kPodHeader) +
                                                  "p0,12000,16384,1,1000,,LS,Running,0,1,0\n"
                                                  "p1,6000,12288,1,460,,LS,Running,5,9,5\n"
                                                  "p2,8000,30000,0,0,,BE,Running,7,9,7\n"
                                                  "p3,88000,327680,8,1000,G2|V100M32,LS,R,9,,9\n",
                                              "pods.csv");
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->pods.size(), 4u);
  EXPECT_EQ(w->pods[0].request.gpu_milli, 1000);
  EXPECT_EQ(w->pods[1].request.gpu_milli, 460);  // a GPU-sharing pod
  EXPECT_EQ(w->pods[1].arrival_s, 5);
  EXPECT_EQ(w->pods[2].request.gpu_milli, 0);  // CPU-only
  EXPECT_EQ(w->pods[3].request.gpu_milli, 8000);
  EXPECT_EQ(w->pods[3].request.cpu_milli, 88000);
  EXPECT_EQ(w->pods[3].gpu_models, (std::vector<std::string>{"G2", "V100M32"}));
  EXPECT_EQ(w->TotalGpuMilli(), 9460);
}

TEST(OpenbPods, AcceptsTheFiveColumnLists) {
  // openb_pod_list_multigpu*.csv carry only the first five columns.
  absl::StatusOr<Workload> w = ParseOpenbPods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,12000,16384,2,1000\n", "m.csv");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->pods[0].request.gpu_milli, 2000);
}

TEST(OpenbPods, MalformedRowNamesFileLineAndColumn) {
  std::string text = kPodHeader;
  for (int i = 2; i < 17; ++i) text += "p,1000,1024,1,1000,,LS,Running,0,1,0\n";
  text += "p16,1000,1024,x,1000,,LS,Running,0,1,0\n";  // line 17
  absl::StatusOr<Workload> w = ParseOpenbPods(text, "openb_pod_list_default.csv");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(w.status().message(),
            "openb_pod_list_default.csv:17: num_gpu: expected an integer, got \"x\"");
}

TEST(OpenbPods, RejectsInconsistentGpuRequests) {
  const std::string h = kPodHeader;
  EXPECT_THAT(ParseOpenbPods(h + "p,1,1,2,500,,LS,R,0,1,0\n", "p.csv").status().message(),
              HasSubstr("p.csv:2: gpu_milli: a pod of several GPUs must take whole GPUs"));
  EXPECT_EQ(ParseOpenbPods(h + "p,1,1,1,1500,,LS,R,0,1,0\n", "p.csv").status().message(),
            "p.csv:2: gpu_milli: expected a per-GPU share in 1..1000, got \"1500\"");
  EXPECT_EQ(ParseOpenbPods(h + "p,-5,1,1,100,,LS,R,0,1,0\n", "p.csv").status().message(),
            "p.csv:2: cpu_milli: expected a non-negative integer, got \"-5\"");
  EXPECT_EQ(ParseOpenbPods("name,cpu_milli\n", "p.csv").status().message(),
            "p.csv:1: header: missing column \"memory_mib\"");
}

TEST(OpenbFiles, MissingFileIsNotFound) {
  EXPECT_EQ(ReadOpenbPods("/nonexistent/pods.csv").status().code(), absl::StatusCode::kNotFound);
}

TEST(Trace, RoundTrips) {
  Trace t;
  t.cluster.nodes.push_back(SimNode{"a", "H100", 8, 96000, 1 << 20});
  t.cluster.nodes.push_back(SimNode{"cpu", "", 0, 64000, 1 << 18});
  SimPod p;
  p.id = "j1";
  p.request.gpu_milli = 250;
  p.request.cpu_milli = 4000;
  p.request.memory_mib = 8192;
  p.gpu_models = {"H100", "A100"};
  p.arrival_s = 10;
  p.duration_s = 3600;
  t.workload.pods.push_back(p);
  p.id = "j2";
  p.duration_s.reset();
  p.gpu_models.clear();
  t.workload.pods.push_back(p);
  const std::string text = WriteTrace(t);
  absl::StatusOr<Trace> back = ParseTrace(text, "t.trace");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(WriteTrace(*back), text);
  EXPECT_EQ(back->workload.pods[0].duration_s, 3600);
  EXPECT_FALSE(back->workload.pods[1].duration_s.has_value());
}

TEST(Trace, MalformedRecords) {
  EXPECT_EQ(ParseTrace("node,a,G2,8,1,1\n", "t.trace").status().message(),
            "t.trace:1: header: expected \"gpupool-trace,1\", got \"node,a,G2,8,1,1\"");
  EXPECT_EQ(ParseTrace("# c\ngpupool-trace,1\npod,p,0,,1500,1,1,\n", "t.trace").status().message(),
            "t.trace:3: gpu_milli: expected below 1000 or whole GPUs, got \"1500\"");
  EXPECT_EQ(ParseTrace("gpupool-trace,1\nrack,r1\n", "t.trace").status().message(),
            "t.trace:2: record: expected \"node\" or \"pod\", got \"rack\"");
}

TEST(Builtin, ClusterMatchesOpenbPublishedCounts) {
  const Cluster c = BuiltinCluster();
  EXPECT_EQ(c.nodes.size(), 1213u);
  EXPECT_EQ(c.TotalGpuMilli(), 6212 * 1000);
}

TEST(Builtin, SyntheticWorkloadFollowsTheMix) {
  const Workload w = SyntheticWorkload(8152, 7);
  ASSERT_EQ(w.pods.size(), 8152u);
  int cpu_only = 0, share = 0, one = 0;
  for (const SimPod& p : w.pods) {
    cpu_only += p.request.gpu_milli == 0;
    share += p.request.gpu_milli > 0 && p.request.gpu_milli < 1000;
    one += p.request.gpu_milli == 1000;
  }
  // 13.3%, 37.8% and 48.0% of pods, within sampling noise.
  EXPECT_NEAR(cpu_only / 8152.0, 0.133, 0.015);
  EXPECT_NEAR(share / 8152.0, 0.378, 0.02);
  EXPECT_NEAR(one / 8152.0, 0.480, 0.02);
  EXPECT_EQ(WriteTrace({BuiltinCluster(), SyntheticWorkload(100, 7)}),
            WriteTrace({BuiltinCluster(), SyntheticWorkload(100, 7)}));
}

}  // namespace
}  // namespace gpupool::sim
