// Helpers shared by the fuzz targets of tests/fuzz (see README.md there).
//
// The scheduling targets read one input as
//
//   SNAPSHOT-JSON [ '\0' POLICY-BYTES ]
//
// The snapshot is parsed with io::ParseSnapshot(); the bytes after the first NUL (if any) set
// every knob of the Policy through PolicyFromBytes(), so the fuzzer explores policies as well as
// snapshots, and a plain snapshot file is a valid seed (it runs under the default policy).
#ifndef GPUPOOL_TESTS_FUZZ_FUZZ_COMMON_H_
#define GPUPOOL_TESTS_FUZZ_FUZZ_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "gpupool/snapshot.h"

// Aborts (a finding for libFuzzer) when a property the fuzz target checks does not hold.
#define FUZZ_CHECK(condition, what)                                                      \
  do {                                                                                   \
    if (!(condition)) {                                                                  \
      std::fprintf(stderr, "%s:%d: fuzz property failed: %s (%s)\n", __FILE__, __LINE__, \
                   #condition, std::string(what).c_str());                               \
      std::abort();                                                                      \
    }                                                                                    \
  } while (false)

namespace gpupool::fuzz {

// The two parts of a scheduling input: the snapshot JSON and the policy bytes after the NUL.
struct ScheduleInput {
  std::string_view snapshot_json;
  std::string_view policy_bytes;
};
ScheduleInput SplitScheduleInput(const uint8_t* data, size_t size);

// Reads the policy bytes front to back; past the end every read gives 0 (so an empty tail gives
// the default Policy apart from the fields whose zero differs from the default).
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  uint8_t Byte();
  // A value chosen to hit boundaries: small, a multiple of a minute, a raw 64-bit value, or a
  // small negative one, depending on a tag byte.
  int64_t Int64();
  bool Bool() { return (Byte() & 1) != 0; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// Every knob of Policy from the bytes: placement, job and queue order, LAS thresholds (possibly
// unsorted or negative), starvation bound, fair-share half-life, every preemption option and
// every budget, and a built-in placement scorer by name (built for `snapshot`'s requests).
Policy PolicyFromBytes(std::string_view bytes, const Snapshot& snapshot);

// The properties every successful Schedule() must have, checked with FUZZ_CHECK:
//   - applying the decisions (ApplyDecisions) succeeds and gives a snapshot that
//     ValidateSnapshot() accepts (nothing over-committed, placements consistent);
//   - no GPU carries more than 1000 milli-GPUs of running work afterwards (checked directly);
//   - the decisions survive DecisionsToJson -> ParseDecisions -> DecisionsToJson unchanged.
void CheckDecisions(const Snapshot& snapshot, const Decisions& decisions);

}  // namespace gpupool::fuzz

#endif  // GPUPOOL_TESTS_FUZZ_FUZZ_COMMON_H_
