// Scale advice (Policy::scale, docs/operations.md "Scale advice"): which template nodes to add so
// that the pending jobs it covers start, and which idle nodes to release. Exact outcomes on small
// pools; then, on random snapshots, the two promises checked by scheduling again (sufficient:
// with the advised nodes every covered job starts; minimal per template: one node fewer of any
// template leaves one pending), and against a brute-force search over every mix (cheapest).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/generator.h"
#include "testing/seeds.h"

namespace gpupool {
namespace {

using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::FindPending;
using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeLimit;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeQueue;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::SnapshotBuilder;
using ::gpupool::testing::StartedJobs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kUnit = 1'000'000;  // one currency unit in micro-units

NodeTemplate Template(std::string name, std::string model, int32_t gpus, int32_t max_count,
                      int64_t cost_micro) {
  return NodeTemplate{std::move(name), MakeNode("", std::move(model), gpus), max_count, cost_micro};
}

// Best fit, priority FIFO, no queue order: the outcomes below depend on them.
Policy ScalePolicy(std::vector<NodeTemplate> templates) {
  Policy policy;
  policy.placement = PlacementStrategy::kBestFit;
  policy.job_order = JobOrder::kPriorityFifo;
  policy.queue_order = QueueOrder::kNone;
  policy.scale.emplace();
  policy.scale->templates = std::move(templates);
  return policy;
}

std::vector<std::pair<std::string, int32_t>> Adds(const ScaleAdvice& advice) {
  std::vector<std::pair<std::string, int32_t>> out;
  for (const ScaleAdd& add : advice.add) out.emplace_back(add.template_name, add.count);
  return out;
}

using Mix = std::vector<std::pair<std::string, int32_t>>;

// The snapshot with `mix` added as the host would: ids after every existing id, grouped by
// template in name order ("~<template>-<k>" after the largest id; k not zero-padded).
Snapshot WithNodes(Snapshot snapshot, const Policy& policy, const Mix& mix) {
  std::string largest;
  for (const Node& node : snapshot.nodes) largest = std::max(largest, node.id);
  for (const auto& [name, count] : mix) {
    const NodeTemplate* t = nullptr;
    for (const NodeTemplate& candidate : policy.scale->templates) {
      if (candidate.name == name) t = &candidate;
    }
    for (int32_t k = 1; k <= count; ++k) {
      Node node = t->node;
      node.id = fmt::format("{}~{}-{}", largest, name, k);
      snapshot.nodes.push_back(std::move(node));
    }
  }
  return snapshot;
}

Snapshot WithoutNodes(Snapshot snapshot, const std::vector<std::string>& ids) {
  std::erase_if(snapshot.nodes, [&](const Node& n) {
    return std::find(ids.begin(), ids.end(), n.id) != ids.end();
  });
  return snapshot;
}

bool StartsAll(const Decisions& decisions, const std::vector<std::string>& jobs) {
  const std::vector<std::string> started = StartedJobs(decisions);
  return std::all_of(jobs.begin(), jobs.end(), [&](const std::string& j) {
    return std::find(started.begin(), started.end(), j) != started.end();
  });
}

Decisions MustSchedule(const Snapshot& snapshot, const Policy& policy) {
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  EXPECT_TRUE(decisions.ok()) << decisions.status();
  return decisions.ok() ? *decisions : Decisions{};
}

// A full node of 4 A100s (4 one-GPU jobs running) and two pending 4-GPU jobs.
Snapshot FullPoolTwoWaiting() {
  SnapshotBuilder b;
  b.Model("A100").Node(MakeNode("n1", "A100", 4)).Queue("q");
  for (int i = 0; i < 4; ++i) {
    b.Job(MakeRunningJob("r" + std::to_string(i), "q", GpuRequest(1000), {Placement("n1", {i})}));
  }
  b.Job(MakePendingJob("j1", "q", GpuRequest(4000)));
  b.Job(MakePendingJob("j2", "q", GpuRequest(4000)));
  return b.Build();
}

TEST(ScaleAdviceTest, NoScaleObjectNoAdvice) {
  Policy policy = ScalePolicy({});
  policy.scale.reset();
  const Decisions d = MustSchedule(FullPoolTwoWaiting(), policy);
  EXPECT_FALSE(d.scale_advice.has_value());
}

// Two jobs of 4 GPUs wait. One 8-GPU node (10/h) or two 4-GPU nodes (4/h each, 8/h) would start
// both: the two small ones are cheaper.
TEST(ScaleAdviceTest, CheapestMixOfTwoTemplates) {
  const Policy policy = ScalePolicy(
      {Template("big", "A100", 8, 3, 10 * kUnit), Template("small", "A100", 4, 3, 4 * kUnit)});
  const Decisions d = MustSchedule(FullPoolTwoWaiting(), policy);
  ASSERT_TRUE(d.scale_advice.has_value());
  const ScaleAdvice& a = *d.scale_advice;
  EXPECT_EQ(Adds(a), (Mix{{"small", 2}}));
  EXPECT_THAT(a.covers, ElementsAre("j1", "j2"));
  EXPECT_EQ(a.cost_per_hour_micro, 8 * kUnit);
  EXPECT_TRUE(a.cheapest);
  EXPECT_FALSE(a.budget_exhausted);
  EXPECT_THAT(a.release, IsEmpty());  // n1 runs work
}

// At most one small node: one big node (10/h) beats one small plus one big (14/h).
TEST(ScaleAdviceTest, MaxCountBoundsATemplate) {
  const Policy policy = ScalePolicy(
      {Template("big", "A100", 8, 3, 10 * kUnit), Template("small", "A100", 4, 1, 4 * kUnit)});
  const Decisions d = MustSchedule(FullPoolTwoWaiting(), policy);
  EXPECT_EQ(Adds(*d.scale_advice), (Mix{{"big", 1}}));
  EXPECT_EQ(d.scale_advice->cost_per_hour_micro, 10 * kUnit);
}

// Equal prices: fewer nodes first (one big instead of two small).
TEST(ScaleAdviceTest, EqualPriceFewerNodes) {
  const Policy policy = ScalePolicy(
      {Template("big", "A100", 8, 3, 8 * kUnit), Template("small", "A100", 4, 3, 4 * kUnit)});
  const Decisions d = MustSchedule(FullPoolTwoWaiting(), policy);
  EXPECT_EQ(Adds(*d.scale_advice), (Mix{{"big", 1}}));
}

// Not covered: a job held by its queue's limit (a node cannot lift it) and a job that wants a
// model no template has. Covered: the job that wants H100, which the template has.
TEST(ScaleAdviceTest, CoversOnlyJobsSomeTemplateCanStart) {
  Queue limited = MakeQueue("limited");
  limited.quotas.push_back(MakeLimit("*", 1000));
  Job h100 = MakePendingJob("h", "q", GpuRequest(2000));
  h100.groups[0].gpu_models = {"H100"};
  Job b200 = MakePendingJob("b", "q", GpuRequest(1000));
  b200.groups[0].gpu_models = {"B200"};
  const Snapshot s = SnapshotBuilder()
                         .Model("A100")
                         .Model("H100")
                         .Model("B200")
                         .Node(MakeNode("n1", "A100", 4))
                         .Queue("q")
                         .Queue(limited)
                         .Job(MakePendingJob("lim", "limited", GpuRequest(2000)))
                         .Job(h100)
                         .Job(b200)
                         .Build();
  const Policy policy = ScalePolicy({Template("h100x8", "H100", 8, 4, 30 * kUnit)});
  const Decisions d = MustSchedule(s, policy);
  ASSERT_NE(FindPending(d, "lim"), nullptr);
  EXPECT_EQ(FindPending(d, "lim")->reason, PendingReason::kQueueLimit);
  EXPECT_EQ(FindPending(d, "h")->reason, PendingReason::kNoAllowedGpuModel);
  EXPECT_EQ(Adds(*d.scale_advice), (Mix{{"h100x8", 1}}));
  EXPECT_THAT(d.scale_advice->covers, ElementsAre("h"));
  // n1 is idle and nothing starts on it ("lim" is held by its limit either way): it can go.
  EXPECT_THAT(d.scale_advice->release, ElementsAre("n1"));
}

// Idle ready nodes go unless a job this cycle starts there; the pending 2-GPU job starts on n2
// (first in topology order among equals), so n3 is released and n2 kept. n4 is cordoned: not a
// candidate. n1 runs work.
TEST(ScaleAdviceTest, ReleasesIdleNodesNoJobNeeds) {
  Node cordoned = MakeNode("n4", "A100", 4);
  cordoned.state = NodeState::kCordoned;
  const Snapshot s =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 4))
          .Node(MakeNode("n2", "A100", 4))
          .Node(MakeNode("n3", "A100", 4))
          .Node(cordoned)
          .Queue("q")
          .Job(MakeRunningJob("r", "q", GpuRequest(4000), {Placement("n1", {0, 1, 2, 3})}))
          .Job(MakePendingJob("j", "q", GpuRequest(2000)))
          .Build();
  const Decisions d = MustSchedule(s, ScalePolicy({}));
  ASSERT_TRUE(d.scale_advice.has_value());
  EXPECT_THAT(d.scale_advice->add, IsEmpty());
  EXPECT_THAT(d.scale_advice->covers, IsEmpty());
  EXPECT_THAT(d.scale_advice->release, ElementsAre("n3"));
  EXPECT_EQ(d.scale_advice->cost_per_hour_micro, 0);
}

// Nothing waits and nothing runs: every node can go (one simulation, all at once).
TEST(ScaleAdviceTest, EmptyPoolReleasesEverything) {
  const Snapshot s = SnapshotBuilder()
                         .Model("A100")
                         .Node(MakeNode("a", "A100", 8))
                         .Node(MakeNode("b", "A100", 8))
                         .Build();
  const Decisions d = MustSchedule(s, ScalePolicy({Template("t", "A100", 8, 2, kUnit)}));
  EXPECT_THAT(d.scale_advice->release, ElementsAre("a", "b"));
  EXPECT_THAT(d.scale_advice->add, IsEmpty());
  EXPECT_EQ(d.scale_advice->simulations, 1);
}

// A headroom rule keeps the nodes it counts out of `release`: with an H100 rule, the idle H100
// nodes (and the spot H100 node aside, which no rule counts) stay; the idle A100 node goes.
TEST(ScaleAdviceTest, HeadroomNodesAreNotReleased) {
  Node spot = MakeNode("h3", "H100", 4);
  spot.spot = true;
  const Snapshot s = SnapshotBuilder()
                         .Model("A100")
                         .Model("H100")
                         .Node(MakeNode("a1", "A100", 4))
                         .Node(MakeNode("h1", "H100", 4))
                         .Node(MakeNode("h2", "H100", 4))
                         .Node(spot)
                         .Build();
  Policy policy = ScalePolicy({});
  const Decisions without = MustSchedule(s, policy);
  EXPECT_THAT(without.scale_advice->release, ElementsAre("a1", "h1", "h2", "h3"));
  policy.headroom = {HeadroomRule{"H100", 2, HeadroomShape::kGpus, 100, false}};
  const Decisions with = MustSchedule(s, policy);
  // Kept: h1 and h2 (counted by the rule); released: a1 and the spot node h3.
  EXPECT_THAT(with.scale_advice->release, ElementsAre("a1", "h3"));
}

// A budget of one simulation: only the ceiling is simulated, min(max_count 5, 2 replicas) = 2
// small nodes. Sufficient, but neither minimal nor proven cheapest: the advice says so.
TEST(ScaleAdviceTest, BudgetOfOneSimulationGivesTheCeiling) {
  Policy policy = ScalePolicy({Template("small", "A100", 4, 5, 4 * kUnit)});
  policy.scale->max_simulations = 1;
  const Decisions d = MustSchedule(FullPoolTwoWaiting(), policy);
  EXPECT_EQ(Adds(*d.scale_advice), (Mix{{"small", 2}}));
  EXPECT_TRUE(d.scale_advice->budget_exhausted);
  EXPECT_FALSE(d.scale_advice->cheapest);
  EXPECT_EQ(d.scale_advice->simulations, 1);
}

// The advice changes no other decision: the cycle with and without a scale object decides the
// same (the fingerprint aside, which covers the policy).
TEST(ScaleAdviceTest, OtherDecisionsUnchanged) {
  Policy with = ScalePolicy({Template("small", "A100", 4, 3, 4 * kUnit)});
  Policy without = with;
  without.scale.reset();
  Decisions a = MustSchedule(FullPoolTwoWaiting(), with);
  Decisions b = MustSchedule(FullPoolTwoWaiting(), without);
  a.input_fingerprint.clear();
  b.input_fingerprint.clear();
  EXPECT_EQ(DecisionsToText(a), DecisionsToText(b));
}

// --- Validation: one test per kind of bad input. ---

absl::Status Validate(const Policy& policy) {
  return Schedule(FullPoolTwoWaiting(), policy).status();
}

TEST(ScaleValidationTest, UnknownGpuModelInATemplateNode) {
  const absl::Status status =
      Validate(ScalePolicy({Template("a", "A100", 4, 1, kUnit), Template("b", "A100", 4, 1, kUnit),
                            Template("c", "H200", 4, 1, kUnit)}));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "policy.scale.templates[2].node.gpu_model: unknown GPU model \"H200\"");
}

TEST(ScaleValidationTest, BadNodeFieldNamedUnderTheTemplate) {
  NodeTemplate t = Template("a", "A100", 2, 1, kUnit);
  t.node.gpus[1].index = 0;  // two GPUs with index 0
  const absl::Status status = Validate(
      ScalePolicy({Template("x", "A100", 4, 1, kUnit), Template("y", "A100", 4, 1, kUnit), t}));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(status.message()),
      ::testing::StartsWith("policy.scale.templates[2].node.gpus[0].index: duplicate index"));
}

TEST(ScaleValidationTest, UnknownTopologyLevelInATemplateNode) {
  NodeTemplate t = Template("a", "A100", 4, 1, kUnit);
  t.node.path = {{"rack", "r1"}};
  const absl::Status status = Validate(ScalePolicy({t}));
  EXPECT_THAT(std::string(status.message()),
              ::testing::StartsWith("policy.scale.templates[0].node.path"));
}

TEST(ScaleValidationTest, NegativeMaxCount) {
  const absl::Status status = Validate(ScalePolicy({Template("a", "A100", 4, -1, kUnit)}));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "policy.scale.templates[0].max_count: must be >= 0");
}

TEST(ScaleValidationTest, NegativeCost) {
  const absl::Status status = Validate(ScalePolicy({Template("a", "A100", 4, 1, -1)}));
  EXPECT_EQ(status.message(), "policy.scale.templates[0].cost_per_hour: must be >= 0");
}

TEST(ScaleValidationTest, DuplicateTemplateName) {
  const absl::Status status = Validate(
      ScalePolicy({Template("a", "A100", 4, 1, kUnit), Template("a", "A100", 8, 1, kUnit)}));
  EXPECT_EQ(status.message(), "policy.scale.templates[1].name: duplicate template name \"a\"");
}

TEST(ScaleValidationTest, EmptyTemplateName) {
  const absl::Status status = Validate(ScalePolicy({Template("", "A100", 4, 1, kUnit)}));
  EXPECT_EQ(status.message(), "policy.scale.templates[0].name: must not be empty");
}

TEST(ScaleValidationTest, NodeWithIdGiven) {
  NodeTemplate t = Template("a", "A100", 4, 1, kUnit);
  t.node.id = "n9";
  const absl::Status status = Validate(ScalePolicy({t}));
  EXPECT_EQ(status.message(),
            "policy.scale.templates[0].node.id: must be empty (the host names the nodes it adds)");
}

TEST(ScaleValidationTest, TemplateNodeNotReady) {
  NodeTemplate t = Template("a", "A100", 4, 1, kUnit);
  t.node.state = NodeState::kCordoned;
  const absl::Status status = Validate(ScalePolicy({t}));
  EXPECT_THAT(std::string(status.message()),
              ::testing::StartsWith("policy.scale.templates[0].node.state: must be ready"));
}

TEST(ScaleValidationTest, NegativeMaxSimulations) {
  Policy policy = ScalePolicy({});
  policy.scale->max_simulations = -1;
  EXPECT_EQ(Validate(policy).message(), "policy.scale.max_simulations: must be >= 0");
}

// --- Properties on random snapshots. ---

// Up to 3 templates made from the snapshot's own nodes (ready, healthy, no id), max_count 1-3,
// prices 1-9 units. Names t0, t1, t2 (none a prefix of another).
std::vector<NodeTemplate> RandomTemplates(const Snapshot& s, uint64_t seed) {
  testing::Rng rng(seed);
  std::vector<NodeTemplate> out;
  if (s.nodes.empty()) return out;
  const int64_t count = rng.UniformInt(1, 3);
  for (int64_t i = 0; i < count; ++i) {
    Node node =
        s.nodes[static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(s.nodes.size()) - 1))];
    node.id.clear();
    node.state = NodeState::kReady;
    for (Gpu& gpu : node.gpus) gpu.healthy = true;
    if (rng.Percent(50)) node.owner_queues.clear();
    out.push_back(NodeTemplate{fmt::format("t{}", i), std::move(node),
                               static_cast<int32_t>(rng.UniformInt(1, 3)),
                               rng.UniformInt(1, 9) * kUnit});
  }
  return out;
}

Mix MixOf(const ScaleAdvice& advice) { return Adds(advice); }

// Sufficient and minimal per template, with host ids; the release keeps the same outcome; the
// other decisions are those of the cycle without a scale object.
TEST(ScaleAdvicePropertyTest, SufficientMinimalAndReleaseKeepsOutcome) {
  const uint64_t seeds = testing::PropertySeeds(300);
  int advised = 0, released = 0;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    const Snapshot s = testing::GenerateRandomSnapshot(seed);
    Policy policy = ScalePolicy(RandomTemplates(s, seed * 7919));
    policy.scale->max_simulations = 0;
    absl::StatusOr<Decisions> d = Schedule(s, policy);
    ASSERT_TRUE(d.ok()) << d.status();
    ASSERT_TRUE(d->scale_advice.has_value());
    const ScaleAdvice& a = *d->scale_advice;
    const Mix mix = MixOf(a);
    if (!mix.empty()) ++advised;
    released += a.release.empty() ? 0 : 1;

    const Decisions with = MustSchedule(WithNodes(s, policy, mix), policy);
    ASSERT_TRUE(StartsAll(with, a.covers)) << "not sufficient";
    for (size_t i = 0; i < mix.size(); ++i) {
      Mix fewer = mix;
      --fewer[i].second;
      const Decisions less = MustSchedule(WithNodes(s, policy, fewer), policy);
      EXPECT_FALSE(StartsAll(less, a.covers)) << "not minimal in " << mix[i].first;
    }
    if (!a.release.empty()) {
      const Decisions after =
          MustSchedule(WithoutNodes(WithNodes(s, policy, mix), a.release), policy);
      EXPECT_EQ(StartedJobs(after), StartedJobs(with)) << "release delays a job";
    }
    Policy without = policy;
    without.scale.reset();
    Decisions plain = MustSchedule(s, without);
    Decisions advisedd = *d;
    plain.input_fingerprint.clear();
    advisedd.input_fingerprint.clear();
    EXPECT_EQ(DecisionsToText(advisedd), DecisionsToText(plain));
  }
  // The generator gives both kinds of advice often enough for the checks to bite.
  EXPECT_GT(advised, static_cast<int>(seeds) / 10);
  EXPECT_GT(released, static_cast<int>(seeds) / 10);
}

// Brute force: every mix up to max_count, scheduled with host ids. The covered jobs are exactly
// the candidates (pending, not queue-limit or budget-exhausted) that start at the ceiling
// min(max_count, their replicas); the advice is the first sufficient mix in the order (price,
// node count, counts in template-name order), and says it is the cheapest.
TEST(ScaleAdvicePropertyTest, CheapestAgainstBruteForce) {
  const uint64_t seeds = testing::PropertySeeds(150);
  int checked = 0;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    const Snapshot s = testing::GenerateRandomSnapshot(seed);
    Policy policy = ScalePolicy(RandomTemplates(s, seed * 104729));
    policy.scale->max_simulations = 0;
    const Decisions d = MustSchedule(s, policy);
    const ScaleAdvice& a = *d.scale_advice;
    ASSERT_FALSE(a.budget_exhausted);

    std::vector<NodeTemplate> templates = policy.scale->templates;
    std::sort(templates.begin(), templates.end(),
              [](const NodeTemplate& x, const NodeTemplate& y) { return x.name < y.name; });
    std::map<std::string, const Job*> jobs;
    for (const Job& job : s.jobs) jobs[job.id] = &job;
    std::vector<std::string> candidates;
    int64_t replicas = 0;
    for (const PendingDecision& p : d.pending) {
      if (p.reason == PendingReason::kQueueLimit || p.reason == PendingReason::kBudgetExhausted) {
        continue;
      }
      candidates.push_back(p.job);
      for (const TaskGroup& g : jobs[p.job]->groups) replicas += g.replicas;
    }
    std::vector<int32_t> ceiling;
    for (const NodeTemplate& t : templates) {
      ceiling.push_back(static_cast<int32_t>(std::min<int64_t>(t.max_count, replicas)));
    }
    const auto to_mix = [&](const std::vector<int32_t>& v) {
      Mix m;
      for (size_t t = 0; t < v.size(); ++t) {
        if (v[t] > 0) m.emplace_back(templates[t].name, v[t]);
      }
      return m;
    };
    std::vector<std::string> covered;
    if (!candidates.empty()) {
      const Decisions at = MustSchedule(WithNodes(s, policy, to_mix(ceiling)), policy);
      for (const std::string& j : candidates) {
        if (StartsAll(at, {j})) covered.push_back(j);
      }
    }
    EXPECT_EQ(a.covers, covered);
    if (covered.empty()) {
      EXPECT_THAT(a.add, IsEmpty());
      continue;
    }
    // Every mix, in (price, nodes, counts) order; the first sufficient one is the answer.
    std::vector<std::vector<int32_t>> all{{}};
    for (int32_t c : ceiling) {
      std::vector<std::vector<int32_t>> next;
      for (const auto& v : all) {
        for (int32_t x = 0; x <= c; ++x) {
          next.push_back(v);
          next.back().push_back(x);
        }
      }
      all = std::move(next);
    }
    const auto key = [&](const std::vector<int32_t>& v) {
      int64_t cost = 0, nodes = 0;
      for (size_t t = 0; t < v.size(); ++t) {
        cost += v[t] * templates[t].cost_per_hour_micro;
        nodes += v[t];
      }
      return std::make_tuple(cost, nodes, v);
    };
    std::sort(all.begin(), all.end(),
              [&](const auto& x, const auto& y) { return key(x) < key(y); });
    Mix cheapest;
    bool found = false;
    for (const auto& v : all) {
      if (StartsAll(MustSchedule(WithNodes(s, policy, to_mix(v)), policy), covered)) {
        cheapest = to_mix(v);
        found = true;
        break;
      }
    }
    ASSERT_TRUE(found);
    EXPECT_TRUE(a.cheapest);
    EXPECT_EQ(MixOf(a), cheapest);
    ++checked;
  }
  EXPECT_GT(checked, static_cast<int>(seeds) / 10);
}

}  // namespace
}  // namespace gpupool
