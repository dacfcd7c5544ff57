// The engine's one 64-bit mixer, for hashes that must be the same on every platform and in every
// process (fingerprints, cache keys whose collisions are checked): splitmix64 (Steele, Lea and
// Flood, "Fast splittable pseudorandom number generators", 2014). Not cryptographic.
#ifndef GPUPOOL_INTERNAL_HASH_H_
#define GPUPOOL_INTERNAL_HASH_H_

#include <cstdint>

namespace gpupool::internal {

// splitmix64's output function on `x`: add the golden-ratio increment, then its finaliser. A
// bijection on 64-bit words whose every output bit depends on every input bit.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Folds the word `v` into the running hash `h`.
inline uint64_t HashCombine(uint64_t h, uint64_t v) { return Mix64(h ^ v); }

// splitmix64 as a generator: the next output of the sequence whose state is `state` (advanced).
inline uint64_t SplitMix64Next(uint64_t& state) {
  const uint64_t x = state;
  state += 0x9e3779b97f4a7c15ULL;
  return Mix64(x);
}

}  // namespace gpupool::internal

#endif  // GPUPOOL_INTERNAL_HASH_H_
