// The simulator's random number generator: xoshiro256** (Blackman and Vigna) seeded through
// SplitMix64, with an unbiased bounded draw (Lemire's multiply-and-reject).
//
// Defined here rather than taken from <random>'s distributions, whose results differ between
// standard libraries: a seed gives the same sequence with every compiler, standard library and
// platform. Portable C++20: the 128-bit product the bounded draw needs is computed from 32-bit
// halves, not with a compiler extension. Not thread-safe (one generator per run); cheap to copy.
#ifndef GPUPOOL_SIM_RNG_H_
#define GPUPOOL_SIM_RNG_H_

#include <cstdint>

namespace gpupool::sim {

class Rng {
 public:
  // The state is four SplitMix64 outputs of `seed`; every seed, 0 included, is valid.
  explicit Rng(uint64_t seed) {
    uint64_t x = seed;
    for (uint64_t& s : state_) s = SplitMix(x);
  }

  // The next 64 random bits.
  uint64_t Next() {
    const uint64_t result = Rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = Rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, n) for n > 0: the high word of Next() x n, redrawn while the low word falls
  // in the biased band (fewer than n of the 2^64 values), so there is no modulo bias.
  uint64_t Uniform(uint64_t n) {
    uint64_t high = 0;
    uint64_t low = MulWide(Next(), n, high);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) low = MulWide(Next(), n, high);
    }
    return high;
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // The full 128-bit product a x b: returns its low 64 bits and sets `high` to its high 64.
  static uint64_t MulWide(uint64_t a, uint64_t b, uint64_t& high) {
    const uint64_t a_lo = a & 0xffffffffULL, a_hi = a >> 32;
    const uint64_t b_lo = b & 0xffffffffULL, b_hi = b >> 32;
    const uint64_t lo_lo = a_lo * b_lo;
    const uint64_t hi_lo = a_hi * b_lo;
    const uint64_t lo_hi = a_lo * b_hi;
    const uint64_t hi_hi = a_hi * b_hi;
    // The middle column, with the carries of its three 32-bit terms (none overflows 64 bits).
    const uint64_t middle = (lo_lo >> 32) + (hi_lo & 0xffffffffULL) + lo_hi;
    high = hi_hi + (hi_lo >> 32) + (middle >> 32);
    return (middle << 32) | (lo_lo & 0xffffffffULL);
  }

  uint64_t state_[4];
};

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_RNG_H_
