// Saturating integer arithmetic for quantities that must never wrap: sums and products of
// milli-GPUs and seconds that, for hostile input, could leave int64.
#ifndef GPUPOOL_INTERNAL_SATURATING_H_
#define GPUPOOL_INTERNAL_SATURATING_H_

#include <cstdint>
#include <limits>

namespace gpupool::internal {

// a + b for non-negative a and b, capped at the int64 maximum.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::numeric_limits<int64_t>::max();
  return sum;
}

// a x b for non-negative a and b, capped at the int64 maximum.
inline int64_t SaturatingMultiply(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::numeric_limits<int64_t>::max();
  return product;
}

}  // namespace gpupool::internal

#endif  // GPUPOOL_INTERNAL_SATURATING_H_
