// The simulator's generator (gpupool/sim/rng.h): its bounded draw computes the 128-bit product
// from 32-bit halves (no compiler extension in an installed header); it must give exactly what
// the 128-bit product gives, or every seeded result of the simulators would move.
#include "gpupool/sim/rng.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace gpupool::sim {
namespace {

#if defined(__SIZEOF_INT128__)
// Lemire's draw written with the compiler's 128-bit integers: the reference.
uint64_t ReferenceUniform(Rng& rng, uint64_t n) {
  __extension__ typedef unsigned __int128 Wide;
  Wide m = static_cast<Wide>(rng.Next()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<Wide>(rng.Next()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

TEST(Rng, UniformMatchesThe128BitReference) {
  // Small bounds, bounds near powers of two, and bounds near 2^64 (where rejections happen).
  const std::vector<uint64_t> bounds = {1,
                                        2,
                                        3,
                                        7,
                                        1000,
                                        (uint64_t{1} << 32) - 1,
                                        uint64_t{1} << 32,
                                        (uint64_t{1} << 32) + 1,
                                        (uint64_t{1} << 63) + 12345,
                                        ~uint64_t{0} - 1,
                                        ~uint64_t{0}};
  for (uint64_t seed : {0ULL, 1ULL, 42ULL, 0xdeadbeefULL}) {
    Rng ours(seed);
    Rng reference(seed);
    for (int i = 0; i < 20000; ++i) {
      const uint64_t n = bounds[static_cast<size_t>(i) % bounds.size()];
      const uint64_t a = ours.Uniform(n);
      ASSERT_EQ(a, ReferenceUniform(reference, n)) << "seed " << seed << " draw " << i;
      ASSERT_LT(a, n);
    }
  }
}
#endif

}  // namespace
}  // namespace gpupool::sim
