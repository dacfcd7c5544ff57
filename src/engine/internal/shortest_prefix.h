// The shortest prefix of a ranked list that works, by binary search.
#ifndef GPUPOOL_INTERNAL_SHORTEST_PREFIX_H_
#define GPUPOOL_INTERNAL_SHORTEST_PREFIX_H_

#include <cstddef>

namespace gpupool::internal {

// Given works(hi) (checked by the caller) and a prefix of length 0 that does not work, returns
// the smallest k in (0, hi] with works(k), assuming that longer prefixes work whenever shorter
// ones do. Stops narrowing (returning the shortest length known to work) once more() is false,
// so that a work budget bounds the search. Calls works() about log2(hi) times.
template <typename Works, typename More>
size_t ShortestWorkingPrefix(size_t hi, Works works, More more) {
  size_t lo = 0;
  while (hi - lo > 1 && more()) {
    const size_t mid = lo + (hi - lo) / 2;
    if (works(mid)) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

}  // namespace gpupool::internal

#endif  // GPUPOOL_INTERNAL_SHORTEST_PREFIX_H_
