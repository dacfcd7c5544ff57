// The prices reader and the accounting JSON writer (gpupool/io/accounting.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "gpupool/io/accounting.h"

namespace gpupool::io {
namespace {

TEST(PricesReaderTest, ReadsEveryKey) {
  absl::StatusOr<Prices> p = ParsePrices(R"({
    "currency": "USD",
    "gpu_models": [{"gpu_model": "V100", "micros_per_gpu_hour": 2480000}],
    "default_micros_per_gpu_hour": 1000000,
    "queues": [{"queue": "vc1", "cost_center": "research",
                "borrowed_micros_per_gpu_hour": [{"gpu_model": "V100", "micros_per_gpu_hour": 5}]},
               {"queue": "vc2"}],
    "preemption_paid_by": "preemptor",
    "pool_cost_center": "infra"
  })");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->currency, "USD");
  ASSERT_EQ(p->gpu_models.size(), 1u);
  EXPECT_EQ(p->gpu_models[0].gpu_model, "V100");
  EXPECT_EQ(p->gpu_models[0].micros_per_gpu_hour, 2'480'000);
  EXPECT_EQ(p->default_micros_per_gpu_hour, 1'000'000);
  ASSERT_EQ(p->queues.size(), 2u);
  EXPECT_EQ(p->queues[0].cost_center, "research");
  EXPECT_EQ(p->queues[0].borrowed_micros_per_gpu_hour[0].micros_per_gpu_hour, 5);
  EXPECT_FALSE(p->queues[1].cost_center.has_value());
  EXPECT_EQ(p->preemption_paid_by, PreemptionPayer::kPreemptor);
  EXPECT_EQ(p->pool_cost_center, "infra");
}

TEST(PricesReaderTest, EmptyDocumentKeepsDefaults) {
  absl::StatusOr<Prices> p = ParsePrices("{}");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->preemption_paid_by, PreemptionPayer::kVictim);
  EXPECT_EQ(p->pool_cost_center, "pool");
  EXPECT_FALSE(p->default_micros_per_gpu_hour.has_value());
}

TEST(PricesReaderTest, BadDocumentsNameThePath) {
  auto message = [](std::string_view json) {
    return std::string(ParsePrices(json).status().message());
  };
  EXPECT_THAT(message(R"({"curency": "USD"})"), testing::HasSubstr("curency: unknown field"));
  EXPECT_THAT(message(R"({"gpu_models": [{"gpu_model": "A", "micros_per_gpu_hour": 1.5}]})"),
              testing::HasSubstr("gpu_models[0].micros_per_gpu_hour"));
  EXPECT_THAT(message(R"({"gpu_models": [{"micros_per_gpu_hour": 1}]})"),
              testing::HasSubstr("gpu_models[0]: missing required field \"gpu_model\""));
  EXPECT_THAT(message(R"({"queues": [{"cost_center": "x"}]})"),
              testing::HasSubstr("queues[0]: missing required field \"queue\""));
  EXPECT_THAT(message(R"({"preemption_paid_by": "nobody"})"),
              testing::HasSubstr("preemption_paid_by: unknown value \"nobody\""));
  EXPECT_THAT(message(R"({"currency": "a", "currency": "b"})"),
              testing::HasSubstr("currency: duplicate field"));
  EXPECT_THAT(message(R"({"queues": [{"queue": "q", "borrowed_micros_per_gpu_hour": {}}]})"),
              testing::HasSubstr("queues[0].borrowed_micros_per_gpu_hour: expected an array"));
  EXPECT_THAT(message("{"), testing::HasSubstr("invalid JSON"));
  EXPECT_EQ(ReadPricesFile("/nonexistent/prices.json").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(AccountingJsonTest, LedgerAndPoolingKeys) {
  LedgerSetup setup;
  Node node{.id = "n1", .gpu_model = "A"};
  node.gpus = {Gpu{.index = 0}, Gpu{.index = 1}};
  setup.nodes = {node};
  setup.queues = {Queue{.id = "q"}};
  absl::StatusOr<Ledger> l = Ledger::Create(setup);
  ASSERT_TRUE(l.ok());
  ASSERT_TRUE(
      l->Start(0,
               {.job = "j",
                .queue = "q",
                .placements = {ReplicaPlacement{
                    .group = "main", .replica = 0, .node = "n1", .gpus = {0}, .gpu_milli = 1000}}})
          .ok());
  ASSERT_TRUE(l->Finish(30, "j").ok());
  ASSERT_TRUE(l->AdvanceTo(90).ok());
  const LedgerReport report = l->Report();
  Prices prices;
  prices.default_micros_per_gpu_hour = 3'600'000;
  absl::StatusOr<Chargeback> c = ComputeChargeback(report, prices);
  absl::StatusOr<PoolingReport> p = ComparePooling(report, prices);
  ASSERT_TRUE(c.ok() && p.ok());
  const std::string json = AccountingToJson(report, *c, *p);
  // 2 GPUs x 90 s of capacity, one busy for 30 s: utilization 1/6; a dedicated pool of 1 GPU
  // for 90 s: 1/3.
  EXPECT_THAT(json, testing::HasSubstr("\"capacity_milli_gpu_s\": 180000,"));
  EXPECT_THAT(json, testing::HasSubstr("\"busy_milli_gpu_s\": 30000,"));
  EXPECT_THAT(json, testing::HasSubstr("\"idle_milli_gpu_s\": 150000,"));
  EXPECT_THAT(json, testing::HasSubstr("\"pooled_utilization\": 0.166667,"));
  EXPECT_THAT(json, testing::HasSubstr("\"dedicated_utilization\": 0.333333,"));
  EXPECT_THAT(json, testing::HasSubstr("\"dedicated_gpus\": 1,"));
  EXPECT_THAT(json, testing::HasSubstr("\"cost_center\": \"q\","));
  EXPECT_THAT(json, testing::HasSubstr("\"cost_micros\": 30000"));
  EXPECT_THAT(json,
              testing::HasSubstr(
                  "{\"queue\": \"q\", \"gpu_model\": \"A\", \"peak_milli\": 1000, \"gpus\": 1, "
                  "\"busy_milli_gpu_s\": 30000}"));
  EXPECT_EQ(json.back(), '\n');
}

}  // namespace
}  // namespace gpupool::io
