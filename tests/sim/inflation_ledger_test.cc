// The inflation protocol's GPU-time ledger (InflationLedger, docs/simulator.md "The ledger"): the
// worked example of the docs by hand, and on seeded random workloads under several policies the
// identities, exactly, against an oracle computed from the placements, in the run and in the
// JSON.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpupool/sim/inflation.h"
#include "gpupool/sim/inflation_report.h"
#include "gpupool/sim/rng.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace gpupool::sim {
namespace {

SimPod Pod(const char* id, int64_t gpu_milli) {
  SimPod p;
  p.id = id;
  p.request.gpu_milli = gpu_milli;
  p.request.cpu_milli = 1000;
  p.request.memory_mib = 100;
  return p;
}

const QueueLedger& Class(const InflationLedger& l, const std::string& name) {
  for (const QueueLedger& q : l.queues) {
    if (q.queue == name) return q;
  }
  ADD_FAILURE() << "no class " << name;
  return l.queues.front();
}

// docs/simulator.md: one node of 2 GPUs; A (500), B (1 GPU), C (2 GPUs), D (500) arrive at
// 0, 1, 2, 3. A takes half of GPU 0, B GPU 1, C fails, D the other half of GPU 0.
TEST(InflationLedger, WorkedExampleByHand) {
  Cluster cluster;
  cluster.nodes.push_back(SimNode{"n0", "G", 2, 64000, 100000});
  Workload w;
  w.pods = {Pod("A", 500), Pod("B", 1000), Pod("C", 2000), Pod("D", 500)};
  InflationOptions options;
  options.arrivals = std::vector<int32_t>{0, 1, 2, 3};
  options.keep_placements = true;
  absl::StatusOr<PolicyResult> r = RunInflation(cluster, w, "best-fit", options);
  ASSERT_TRUE(r.ok()) << r.status();
  const SeedResult& s = r->per_seed[0];
  EXPECT_EQ(s.placements, (std::vector<int32_t>{0, 0, -1, 0}));
  const InflationLedger& l = s.ledger;
  EXPECT_EQ(l.arrivals, 4);
  EXPECT_EQ(l.pool.gpus, 2);
  EXPECT_EQ(l.pool.capacity, 8'000);
  EXPECT_EQ(l.pool.time.work.busy, 500 * 4 + 1000 * 3 + 500 * 1);
  EXPECT_EQ(l.pool.idle, 2'500);
  EXPECT_EQ(l.pool.time.work.productive, 5'500);
  EXPECT_EQ(l.pool.time.work.lost_to_preemption + l.pool.time.work.lost_to_failure +
                l.pool.time.work.restore,
            0);
  EXPECT_EQ(l.pool.time.within_guarantee, 5'500);
  EXPECT_EQ(l.pool.time.borrowed, 0);
  ASSERT_EQ(l.queues.size(), 3u);
  EXPECT_EQ(l.queues[0].queue, "sharing");
  EXPECT_EQ(l.queues[1].queue, "one-gpu");
  EXPECT_EQ(l.queues[2].queue, "multi-gpu");
  EXPECT_EQ(Class(l, "sharing").own.work.busy, 2'500);
  EXPECT_EQ(Class(l, "one-gpu").own.work.busy, 3'000);
  EXPECT_EQ(Class(l, "multi-gpu").own.work.busy, 0);
  ASSERT_EQ(l.models.size(), 1u);
  EXPECT_EQ(l.models[0].gpu_model, "G");
  EXPECT_EQ(l.models[0].usage.capacity, 8'000);
  // One seed: the policy's ledger is the seed's.
  EXPECT_EQ(r->ledger.pool.time.work.busy, 5'500);
  EXPECT_EQ(r->ledger.pool.capacity, 8'000);
  // The JSON: utilization_ppm is the mean of the allocation ratios 0.25, 0.75, 0.75, 1.
  const std::string json = InflationJson(InflationRunInfo{}, {*r});
  EXPECT_NE(json.find("\"utilization_ppm\": 687500"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"queue\": \"sharing\", \"busy_milli_gpu_s\": 2500,"), std::string::npos);
}

// Checks the identities of one ledger; returns nothing, fails the test where one breaks.
void CheckIdentities(const InflationLedger& l) {
  const WorkTime& w = l.pool.time.work;
  EXPECT_EQ(l.pool.capacity, w.busy + l.pool.idle);
  EXPECT_EQ(w.busy, w.productive + w.lost_to_preemption + w.lost_to_failure + w.restore);
  EXPECT_EQ(w.busy, l.pool.time.within_guarantee + l.pool.time.borrowed);
  int64_t models_busy = 0, models_capacity = 0, classes_busy = 0;
  for (const ModelLedger& m : l.models) {
    EXPECT_EQ(m.usage.capacity, m.usage.time.work.busy + m.usage.idle) << m.gpu_model;
    EXPECT_GE(m.usage.idle, 0) << m.gpu_model;
    models_busy += m.usage.time.work.busy;
    models_capacity += m.usage.capacity;
  }
  for (const QueueLedger& q : l.queues) {
    EXPECT_EQ(q.own.work.busy, q.own.within_guarantee + q.own.borrowed) << q.queue;
    EXPECT_EQ(q.own, q.subtree) << q.queue;
    classes_busy += q.own.work.busy;
  }
  EXPECT_EQ(models_busy, w.busy);
  EXPECT_EQ(models_capacity, l.pool.capacity);
  EXPECT_EQ(classes_busy, w.busy);
}

TEST(InflationLedger, IdentitiesAndPlacementsOracleOnRandomWorkloads) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Rng rng(seed);
    Cluster cluster;
    for (int n = 0; n < 6; ++n) {
      const int32_t gpus = static_cast<int32_t>(1 + rng.Uniform(8));
      cluster.nodes.push_back(SimNode{"n" + std::to_string(n), n % 2 == 0 ? "A" : "B", gpus,
                                      static_cast<int64_t>(8000 + rng.Uniform(64000)), 100000});
    }
    Workload w;
    for (int p = 0; p < 40; ++p) {
      const int64_t milli = std::vector<int64_t>{0, 250, 500, 1000, 2000, 4000}[rng.Uniform(6)];
      SimPod pod = Pod("p", milli);
      pod.request.cpu_milli = static_cast<int64_t>(500 + rng.Uniform(4000));
      if (rng.Uniform(4) == 0) pod.gpu_models = {"B"};
      w.pods.push_back(pod);
    }
    for (const char* policy : {"best-fit", "fgd", "random"}) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " policy " << policy);
      InflationOptions options;
      options.seeds = {seed, seed + 100};
      options.keep_placements = true;
      absl::StatusOr<PolicyResult> r = RunInflation(cluster, w, policy, options);
      ASSERT_TRUE(r.ok()) << r.status();
      InflationLedger sum;
      int64_t busy = 0, capacity = 0, idle = 0, arrivals = 0;
      for (const SeedResult& s : r->per_seed) {
        CheckIdentities(s.ledger);
        // The oracle: each placed pod's GPU milli from its arrival to the end.
        const auto n = static_cast<int64_t>(s.placements.size());
        ASSERT_EQ(s.ledger.arrivals, n);
        const std::vector<int32_t> order =
            InflateWorkload(w, cluster.TotalGpuMilli(), options.ratio, s.seed);
        ASSERT_EQ(static_cast<int64_t>(order.size()), n);
        std::map<std::string, int64_t> by_class;
        int64_t expected = 0;
        for (int64_t k = 0; k < n; ++k) {
          if (s.placements[static_cast<size_t>(k)] < 0) continue;
          const SimPod& pod = w.pods[static_cast<size_t>(order[static_cast<size_t>(k)])];
          expected += pod.request.gpu_milli * (n - k);
          if (pod.request.gpu_milli > 0) {
            by_class[InflationPodClass(pod)] += pod.request.gpu_milli * (n - k);
          }
        }
        EXPECT_EQ(s.ledger.pool.time.work.busy, expected);
        for (const QueueLedger& q : s.ledger.queues) EXPECT_EQ(q.own.work.busy, by_class[q.queue]);
        EXPECT_EQ(s.ledger.pool.capacity, cluster.TotalGpuMilli() * n);
        busy += s.ledger.pool.time.work.busy;
        capacity += s.ledger.pool.capacity;
        idle += s.ledger.pool.idle;
        arrivals += n;
      }
      CheckIdentities(r->ledger);
      EXPECT_EQ(r->ledger.pool.time.work.busy, busy);
      EXPECT_EQ(r->ledger.pool.capacity, capacity);
      EXPECT_EQ(r->ledger.pool.idle, idle);
      EXPECT_EQ(r->ledger.arrivals, arrivals);

      // The JSON carries the same integers, and the per-seed figures sum to the ledger's.
      const std::string json = InflationJson(InflationRunInfo{}, {*r});
      simdjson::dom::parser parser;
      simdjson::dom::element root;
      ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
      int64_t seeds_busy = 0, seeds_capacity = 0;
      for (simdjson::dom::element s : root["per_seed"].get_array()) {
        seeds_busy += int64_t(s["busy_milli_gpu_s"]);
        seeds_capacity += int64_t(s["capacity_milli_gpu_s"]);
        EXPECT_EQ(int64_t(s["capacity_milli_gpu_s"]),
                  int64_t(s["busy_milli_gpu_s"]) + int64_t(s["idle_milli_gpu_s"]));
      }
      simdjson::dom::element ledger = root["ledger"];
      EXPECT_EQ(int64_t(ledger["busy_milli_gpu_s"]), seeds_busy);
      EXPECT_EQ(int64_t(ledger["capacity_milli_gpu_s"]), seeds_capacity);
      EXPECT_EQ(int64_t(ledger["capacity_milli_gpu_s"]),
                int64_t(ledger["busy_milli_gpu_s"]) + int64_t(ledger["idle_milli_gpu_s"]));
      int64_t json_classes = 0;
      for (simdjson::dom::element q : ledger["queues"].get_array()) {
        json_classes += int64_t(q["busy_milli_gpu_s"]);
      }
      EXPECT_EQ(json_classes, seeds_busy);
    }
  }
}

}  // namespace
}  // namespace gpupool::sim
