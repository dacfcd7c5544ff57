// The budgets file of the job-level replay (`gpupool simulate --protocol replay --budgets FILE`,
// docs/accounting.md "Budgets in the replay"): a GPU-hour budget per virtual cluster per period.
//
//   {
//     "period_days": 7,
//     "queues": [
//       {"queue": "6214e9", "gpu_hours": 8000},
//       {"queue": "b436b2", "gpu_hours": 20000}
//     ]
//   }
//
// Reading is strict like every reader of gpupool (unknown or duplicate keys, wrong types,
// fractions are InvalidArgument naming the JSON path); the values are checked too:
// period_days in [1, 366], queue names non-empty and given once, gpu_hours in [0, 305,419]
// (2^40 milli-GPU-seconds, the snapshot's limit). Whether the names are virtual clusters of the
// replayed jobs is RunReplay()'s check.
#ifndef GPUPOOL_SIM_REPLAY_BUDGETS_H_
#define GPUPOOL_SIM_REPLAY_BUDGETS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/sim/replay.h"

namespace gpupool::sim {

struct ReplayBudgetFile {
  // ReplayOptions::budget_period_s: period_days x 86,400 (7 days when the file does not say).
  int64_t period_s = 7 * 86400;
  // One entry per queue with a budget, in file order, budget_milli_gpu_seconds set to
  // gpu_hours x 3,600,000 (labels left empty).
  std::vector<ReplayQueue> queues;
};

// Parses a budgets document. InvalidArgument naming the JSON path on any error.
absl::StatusOr<ReplayBudgetFile> ParseReplayBudgets(std::string_view json);

// Reads and parses the budgets file at `path` (NotFound when it cannot be read; other errors
// with the file name in front).
absl::StatusOr<ReplayBudgetFile> ReadReplayBudgetsFile(const std::string& path);

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_REPLAY_BUDGETS_H_
