// The random numbers of generator.h: SplitMix64, Rng (xoshiro256**) and WeightedPicker. The
// generators themselves are in generator_random_snapshot.cc, generator_multi_queue.cc and
// generator_scenarios.cc.
#include "testing/generator.h"

#include <algorithm>
#include <cstdint>
#include <span>

#include "internal/hash.h"

namespace gpupool::testing {

// ---------------------------------------------------------------------------------------------
// Random numbers.

uint64_t SplitMix64(uint64_t& state) { return internal::SplitMix64Next(state); }

Rng::Rng(uint64_t seed) {
  uint64_t state = seed;
  for (uint64_t& word : s_) word = SplitMix64(state);
}

namespace {
uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

uint64_t Rng::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

int64_t Rng::UniformInt(int64_t lo, int64_t hi) {
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (range == 0) return static_cast<int64_t>(Next());  // the whole int64 range
  // Rejection sampling: only draws below the largest multiple of `range` are used, so every
  // value is equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  uint64_t draw;
  do {
    draw = Next();
  } while (draw >= limit);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + draw % range);
}

bool Rng::Percent(int64_t percent) { return UniformInt(0, 99) < percent; }

size_t Rng::PickWeighted(std::span<const int64_t> weights) {
  int64_t total = 0;
  for (int64_t w : weights) total += w;
  int64_t draw = UniformInt(0, total - 1);
  for (size_t i = 0; i < weights.size(); ++i) {
    if (draw < weights[i]) return i;
    draw -= weights[i];
  }
  return weights.size() - 1;  // unreachable with a positive sum
}

WeightedPicker::WeightedPicker(std::span<const int64_t> weights) {
  prefix_.reserve(weights.size());
  int64_t total = 0;
  for (int64_t w : weights) {
    total += w;
    prefix_.push_back(total);
  }
}

size_t WeightedPicker::Pick(Rng& rng) const {
  const int64_t draw = rng.UniformInt(0, prefix_.back() - 1);
  return static_cast<size_t>(std::upper_bound(prefix_.begin(), prefix_.end(), draw) -
                             prefix_.begin());
}

}  // namespace gpupool::testing
