// A small builder over FairShareInput so that each case reads like its comment, shared by the
// tests of ComputeFairShare (fair_share_test.cc, fair_share_property_test.cc).
#ifndef GPUPOOL_TESTS_CORE_FAIR_SHARE_HELPERS_H_
#define GPUPOOL_TESTS_CORE_FAIR_SHARE_HELPERS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "fair_share.h"

namespace gpupool::internal::fair_share_testing {

class Tree {
 public:
  Tree(int32_t model_count, std::vector<int64_t> capacity) {
    in_.model_count = model_count;
    in_.capacity_milli = std::move(capacity);
  }
  // Adds a queue under `parent` (kNone: a root) and returns its index.
  int32_t Add(int32_t parent = kNone) {
    const int32_t q = in_.queue_count++;
    const int32_t slots = in_.model_count + 1;
    in_.parent.push_back(parent);
    in_.guaranteed_milli.insert(in_.guaranteed_milli.end(), slots, 0);
    in_.limit_milli.insert(in_.limit_milli.end(), slots, kNoLimit);
    in_.weight.insert(in_.weight.end(), slots, 1);
    in_.can_borrow.push_back(1);
    in_.demand_milli.insert(in_.demand_milli.end(), in_.model_count, 0);
    return q;
  }
  // `slot` is a model index, or Any() for "*".
  int32_t Any() const { return in_.model_count; }
  Tree& Guarantee(int32_t q, int32_t slot, int64_t v) {
    in_.guaranteed_milli[Slot(q, slot)] = v;
    return *this;
  }
  Tree& Limit(int32_t q, int32_t slot, int64_t v) {
    in_.limit_milli[Slot(q, slot)] = v;
    return *this;
  }
  Tree& Weight(int32_t q, int32_t slot, int64_t v) {
    in_.weight[Slot(q, slot)] = v;
    return *this;
  }
  Tree& NoBorrow(int32_t q) {
    in_.can_borrow[q] = 0;
    return *this;
  }
  Tree& Demand(int32_t q, int32_t model, int64_t v) {
    in_.demand_milli[static_cast<size_t>(q) * in_.model_count + model] = v;
    return *this;
  }
  Tree& Decay(int64_t half_life_s, std::vector<int64_t> usage) {
    in_.half_life_s = half_life_s;
    in_.decayed_usage = std::move(usage);
    return *this;
  }
  const FairShareInput& input() const { return in_; }
  FairShareResult Run() const { return ComputeFairShare(in_); }

 private:
  size_t Slot(int32_t q, int32_t slot) const {
    return static_cast<size_t>(q) * (in_.model_count + 1) + slot;
  }
  FairShareInput in_;
};

}  // namespace gpupool::internal::fair_share_testing

#endif  // GPUPOOL_TESTS_CORE_FAIR_SHARE_HELPERS_H_
