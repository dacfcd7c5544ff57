// E1's fragmentation measure on hand-computed nodes.
#include "gpupool/scorers/fragmentation.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gpupool {
namespace {

ResourceRequest Req(int64_t gpu_milli, int64_t cpu_milli) {
  ResourceRequest r;
  r.gpu_milli = gpu_milli;
  r.cpu_milli = cpu_milli;
  return r;
}

// A G2 node with 10 cores free and GPUs free [1000, 1000, 300, 0]: 2300 idle milli.
class HandComputed : public ::testing::Test {
 protected:
  void SetUp() override {
    // Classes (count): A 1-GPU (2), B share 500 (1), C 4-GPU (1), D share 200 needing 20 cores
    // (1), E CPU-only 5 cores (1), F 1-GPU on T4 only (3).
    auto add = [&](ResourceRequest r, std::vector<std::string> m, int n) {
      for (int i = 0; i < n; ++i) {
        requests_.push_back(r);
        models_.push_back(m);
      }
    };
    add(Req(1000, 4000), {}, 2);
    add(Req(500, 2000), {}, 1);
    add(Req(4000, 8000), {}, 1);
    add(Req(200, 20000), {}, 1);
    add(Req(0, 5000), {}, 1);
    add(Req(1000, 4000), {"T4"}, 3);
    table_ = TaskClassTable::FromPods(requests_, models_);
  }
  std::vector<ResourceRequest> requests_;
  std::vector<std::vector<std::string>> models_;
  TaskClassTable table_;
  const std::vector<int64_t> free_ = {1000, 1000, 300, 0};
};

TEST_F(HandComputed, TableKeepsEveryClassMostPopularFirst) {
  ASSERT_EQ(table_.classes().size(), 6u);
  EXPECT_EQ(table_.TotalCount(), 9);
  EXPECT_EQ(table_.classes()[0].count, 3);  // the T4 class
  EXPECT_EQ(table_.classes()[0].gpu_models, std::vector<std::string>{"T4"});
}

TEST_F(HandComputed, PerClass) {
  auto frag = [&](ResourceRequest r, std::vector<std::string> m, CpuClassRule rule) {
    TaskClass c{r, m, 1};
    return ClassFragmentationMilli(c, ModelAllowed(m, "G2"), 10000, free_, rule);
  };
  const auto e1 = CpuClassRule::kFitsIsNotFragmented;
  // Fits; the GPUs below its 1000 need are fragmented for it: 300 + 0.
  EXPECT_EQ(frag(Req(1000, 4000), {}, e1), 300);
  EXPECT_EQ(frag(Req(500, 2000), {}, e1), 300);
  // Needs 4 GPUs with room, has 2: all idle.
  EXPECT_EQ(frag(Req(4000, 8000), {}, e1), 2300);
  // Lacks CPU: all idle.
  EXPECT_EQ(frag(Req(200, 20000), {}, e1), 2300);
  // CPU-only and fits: E1 counts nothing, FGD's code counts everything.
  EXPECT_EQ(frag(Req(0, 5000), {}, e1), 0);
  EXPECT_EQ(frag(Req(0, 5000), {}, CpuClassRule::kAlwaysFragmented), 2300);
  EXPECT_EQ(frag(Req(0, 50000), {}, e1), 2300);
  // Wrong model: all idle.
  EXPECT_EQ(frag(Req(1000, 4000), {"T4"}, e1), 2300);
  // A share of 300 fits the third GPU too: only the used-up GPU (0 free) is left.
  EXPECT_EQ(frag(Req(300, 1000), {}, e1), 0);
}

TEST_F(HandComputed, Weighted) {
  // 2 x 300 + 1 x 300 + 1 x 2300 + 1 x 2300 + 1 x 0 + 3 x 2300 = 12400.
  EXPECT_EQ(WeightedFragmentation(table_, "G2", 10000, free_, CpuClassRule::kFitsIsNotFragmented),
            12400);
  EXPECT_EQ(WeightedFragmentation(table_, "G2", 10000, free_, CpuClassRule::kAlwaysFragmented),
            14700);
  // On a T4 node the T4 class fits (frag 300) and nothing else changes: 12400 - 3 x 2000.
  EXPECT_EQ(WeightedFragmentation(table_, "T4", 10000, free_, CpuClassRule::kFitsIsNotFragmented),
            6400);
}

TEST_F(HandComputed, FullNodeHasNoFragmentation) {
  const std::vector<int64_t> full = {0, 0, 0, 0};
  EXPECT_EQ(WeightedFragmentation(table_, "G2", 0, full, CpuClassRule::kAlwaysFragmented), 0);
}

TEST(TaskClassTable, CoverageKeepsTheFewestPopularClasses) {
  std::vector<ResourceRequest> r;
  std::vector<std::vector<std::string>> m;
  for (int i = 0; i < 90; ++i) r.push_back(Req(1000, 1000));
  for (int i = 0; i < 6; ++i) r.push_back(Req(500, 1000));
  for (int i = 0; i < 4; ++i) r.push_back(Req(0, 1000));
  m.resize(r.size());
  // 90% < 95%, 96% >= 95%: two classes kept, renormalised over 96 pods.
  const TaskClassTable t = TaskClassTable::FromPods(r, m, 95);
  ASSERT_EQ(t.classes().size(), 2u);
  EXPECT_EQ(t.TotalCount(), 96);
  EXPECT_EQ(TaskClassTable::FromPods(r, m, 100).classes().size(), 3u);
}

}  // namespace
}  // namespace gpupool
