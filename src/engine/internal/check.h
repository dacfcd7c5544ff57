// GPUPOOL_CHECK: aborts with a message when an internal invariant is broken (a bug in gpupool,
// never bad input, which gets a Status). Debian's abseil 20220623 has no absl/log, hence ours.
#ifndef GPUPOOL_INTERNAL_CHECK_H_
#define GPUPOOL_INTERNAL_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define GPUPOOL_CHECK(condition)                                                             \
  do {                                                                                       \
    if (!(condition)) {                                                                      \
      std::fprintf(stderr, "%s:%d: gpupool internal check failed: %s\n", __FILE__, __LINE__, \
                   #condition);                                                              \
      std::abort();                                                                          \
    }                                                                                        \
  } while (false)

// Returns from the enclosing function when `expr` (an absl::Status) is not OK.
#define GPUPOOL_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status gpupool_status_ = (expr);           \
    if (!gpupool_status_.ok()) return gpupool_status_; \
  } while (false)

#endif  // GPUPOOL_INTERNAL_CHECK_H_
