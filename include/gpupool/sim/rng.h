// The simulator's random number generator: xoshiro256** seeded through SplitMix64, with an
// unbiased bounded draw. Defined here (not std::*_distribution) so that a seed gives the same
// sequence with every compiler and standard library.
#ifndef GPUPOOL_SIM_RNG_H_
#define GPUPOOL_SIM_RNG_H_

#include <cstdint>

namespace gpupool::sim {

class Rng {
 public:
  __extension__ typedef unsigned __int128 Wide;

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

  // Uniform in [0, n) for n > 0 (Lemire's multiply-and-reject: no modulo bias).
  uint64_t Uniform(uint64_t n) {
    Wide m = static_cast<Wide>(Next()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<Wide>(Next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t state_[4];
};

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_RNG_H_
