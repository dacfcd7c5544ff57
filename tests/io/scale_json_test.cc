// The scale object of the policy format and the scale_advice of the decisions format: canonical
// bytes, round trips, money read exactly, and one reading error per kind of bad input.
#include <string>

#include "gpupool/io/json.h"
#include "gtest/gtest.h"

namespace gpupool::io {
namespace {

constexpr const char* kScalePolicy = R"({
  "scale": {
    "templates": [
      {"name": "h100x8", "node": {"gpu_model": "H100", "gpus": [{"index": 0, "island": 0}, {"index": 1}], "cpu_milli": 96000, "path": {"rack": "r9"}}, "max_count": 4, "cost_per_hour": 98.32},
      {"name": "cpu", "node": {"cpu_milli": 64000}, "max_count": 0, "cost_per_hour": 3}
    ],
    "max_simulations": 50
  }
})";

TEST(ScaleJsonTest, PolicyScaleReads) {
  absl::StatusOr<Policy> p = ParsePolicy(kScalePolicy);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(p->scale.has_value());
  EXPECT_EQ(p->scale->max_simulations, 50);
  ASSERT_EQ(p->scale->templates.size(), 2u);
  const NodeTemplate& t = p->scale->templates[0];
  EXPECT_EQ(t.name, "h100x8");
  EXPECT_EQ(t.node.id, "");
  EXPECT_EQ(t.node.gpu_model, "H100");
  ASSERT_EQ(t.node.gpus.size(), 2u);
  EXPECT_EQ(t.node.gpus[1].index, 1);
  EXPECT_EQ(t.node.cpu_milli, 96000);
  ASSERT_EQ(t.node.path.size(), 1u);
  EXPECT_EQ(t.node.path[0].value, "r9");
  EXPECT_EQ(t.max_count, 4);
  EXPECT_EQ(t.cost_per_hour_micro, 98'320'000);  // exactly, no floating point
  EXPECT_EQ(p->scale->templates[1].cost_per_hour_micro, 3'000'000);
}

TEST(ScaleJsonTest, NoScaleKeyNoScale) {
  absl::StatusOr<Policy> p = ParsePolicy("{}");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->scale.has_value());
  EXPECT_EQ(PolicyToJson(*p).find("scale"), std::string::npos);
}

TEST(ScaleJsonTest, PolicyScaleRoundTripsInCanonicalBytes) {
  absl::StatusOr<Policy> p = ParsePolicy(kScalePolicy);
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string json = PolicyToJson(*p);
  EXPECT_NE(json.find(R"("cost_per_hour": 98.320000)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("max_simulations": 50)"), std::string::npos) << json;
  absl::StatusOr<Policy> again = ParsePolicy(json);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << json;
  EXPECT_EQ(PolicyToJson(*again), json);
}

TEST(ScaleJsonTest, MoneyExactly) {
  struct Case {
    const char* value;
    int64_t micro;
  };
  for (const Case& c :
       {Case{"0", 0}, Case{"0.000001", 1}, Case{"2.5", 2'500'000},
        Case{"123456789012.999999", 123'456'789'012'999'999}, Case{"-1.25", -1'250'000}}) {
    SCOPED_TRACE(c.value);
    const std::string json =
        std::string(
            R"({"scale": {"templates": [{"name": "t", "node": {}, "max_count": 1, "cost_per_hour": )") +
        c.value + "}]}}";
    absl::StatusOr<Policy> p = ParsePolicy(json);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->scale->templates[0].cost_per_hour_micro, c.micro);
  }
}

TEST(ScaleJsonTest, ReadingErrors) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case kCases[] = {
      {R"({"scale": {"templates": [{"name": "t", "node": {"id": "n1"}, "max_count": 1}]}})",
       "scale.templates[0].node.id: a template node has no id (the host names the nodes it adds)"},
      {R"({"scale": {"templates": [{"name": "t", "node": {}, "max_count": 1, "cost_per_hour": 1.0000001}]}})",
       "scale.templates[0].cost_per_hour: expected a number with at most 6 digits after the point "
       "and no exponent"},
      {R"({"scale": {"templates": [{"name": "t", "node": {}, "max_count": 1, "cost_per_hour": 1e3}]}})",
       "scale.templates[0].cost_per_hour: expected a number with at most 6 digits after the point "
       "and no exponent"},
      {R"({"scale": {"templates": [{"name": "t", "node": {}, "max_count": 1, "cost_per_hour": "3"}]}})",
       "scale.templates[0].cost_per_hour: expected a number"},
      {R"({"scale": {"templates": [{"name": "t", "node": {}, "max_count": 1, "cost_per_hour": 1234567890123}]}})",
       "scale.templates[0].cost_per_hour: number out of range (at most 12 digits before the "
       "point)"},
      {R"({"scale": {"templates": [{"name": "t", "node": {}}]}})",
       "scale.templates[0]: missing required field \"max_count\""},
      {R"({"scale": {"templates": [{"node": {}, "max_count": 1}]}})",
       "scale.templates[0]: missing required field \"name\""},
      {R"({"scale": {"templates": [{"name": "t", "max_count": 1}]}})",
       "scale.templates[0]: missing required field \"node\""},
      {R"({"scale": {"templates": [{"name": "t", "node": {"gpus": [{"index": 0, "x": 1}]}, "max_count": 1}]}})",
       "scale.templates[0].node.gpus[0].x: unknown field"},
      {R"({"scale": {"template": []}})", "scale.template: unknown field"},
      {R"({"scale": []})", "scale: expected an object"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.json);
    absl::StatusOr<Policy> parsed = ParsePolicy(c.json);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), c.message);
  }
}

TEST(ScaleJsonTest, AdviceCanonicalBytesAndRoundTrip) {
  Decisions d;
  d.scale_advice.emplace();
  d.scale_advice->add = {ScaleAdd{"a100x8", 2}, ScaleAdd{"h100x8", 1}};
  d.scale_advice->release = {"n7", "n9"};
  d.scale_advice->covers = {"j1", "j2"};
  d.scale_advice->cost_per_hour_micro = 130'000'000;
  d.scale_advice->cheapest = true;
  d.scale_advice->simulations = 17;
  const std::string json = DecisionsToJson(d);
  const std::string expected_tail = R"(  "scale_advice": {
    "add": [
      {"template": "a100x8", "count": 2},
      {"template": "h100x8", "count": 1}
    ],
    "release": ["n7", "n9"],
    "covers": ["j1", "j2"],
    "cost_per_hour_micro": 130000000,
    "cheapest": true,
    "simulations": 17,
    "budget_exhausted": false
  }
}
)";
  ASSERT_GE(json.size(), expected_tail.size());
  EXPECT_EQ(json.substr(json.size() - expected_tail.size()), expected_tail) << json;
  absl::StatusOr<Decisions> parsed = ParseDecisions(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(DecisionsToJson(*parsed), json);
}

TEST(ScaleJsonTest, NoAdviceNoKey) {
  EXPECT_EQ(DecisionsToJson(Decisions{}).find("scale_advice"), std::string::npos);
  absl::StatusOr<Decisions> parsed = ParseDecisions(DecisionsToJson(Decisions{}));
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->scale_advice.has_value());
}

}  // namespace
}  // namespace gpupool::io
