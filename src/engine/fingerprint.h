// A 64-bit fingerprint of a cycle's canonical input, so that a host can tell whether two
// decision files came from the same snapshot and policy. A 64-bit mix over a canonical, typed,
// length-prefixed encoding of the indexed snapshot (lists in id order), so list order in the
// input does not change it. Not cryptographic.
#ifndef GPUPOOL_FINGERPRINT_H_
#define GPUPOOL_FINGERPRINT_H_

#include <string>

#include "gpupool/policy.h"
#include "snapshot_index.h"

namespace gpupool::internal {

// 16 lowercase hex digits.
std::string Fingerprint(const SnapshotIndex& index, const Policy& policy);

}  // namespace gpupool::internal

#endif  // GPUPOOL_FINGERPRINT_H_
