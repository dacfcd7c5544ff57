// How many seeds a seeded property test runs. The regular suite runs a fixed number; the long run
// (ctest label "long", see tests/CMakeLists.txt and README.md, "The long property run") sets
// GPUPOOL_PROPERTY_SEEDS to run many more with the same code and the same checks. Tests read the
// environment; the library never does.
#ifndef GPUPOOL_TESTS_TESTING_SEEDS_H_
#define GPUPOOL_TESTS_TESTING_SEEDS_H_

#include <cstdint>
#include <cstdlib>

namespace gpupool::testing {

// GPUPOOL_PROPERTY_SEEDS when it is set to a positive integer, else `regular`.
inline uint64_t PropertySeeds(uint64_t regular) {
  const char* text = std::getenv("GPUPOOL_PROPERTY_SEEDS");
  if (text == nullptr || *text == '\0') return regular;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(text, &end, 10);
  return (*end == '\0' && n > 0) ? static_cast<uint64_t>(n) : regular;
}

}  // namespace gpupool::testing

#endif  // GPUPOOL_TESTS_TESTING_SEEDS_H_
