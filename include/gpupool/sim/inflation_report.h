// Outputs of an inflation run (gpupool/sim/inflation.h, docs/simulator.md): JSON, CSV curves, a
// text summary table and a self-contained HTML report. All are deterministic functions of the
// results (no times, no host names), so the same run gives the same bytes.
#ifndef GPUPOOL_SIM_INFLATION_REPORT_H_
#define GPUPOOL_SIM_INFLATION_REPORT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpupool/sim/inflation.h"

namespace gpupool::sim {

// What the run was, for the headers of the outputs.
struct InflationRunInfo {
  std::string protocol = "inflation";
  std::string nodes;  // file or "builtin"
  std::string pods;   // file or "synthetic"
  double ratio = 1.3;
  int64_t node_count = 0;
  int64_t gpu_count = 0;
};

// The FGD paper's published mean allocation ratio at 130% (a fraction) for a pod list and policy
// (docs/simulator.md), when known: `pods` is matched by its openb list name (default, cpu050, ...)
// anywhere in the file name.
std::optional<double> PublishedAllocAt130(std::string_view pods, std::string_view policy);

// JSON: for one policy an object with policy, seeds, alloc_ratio_at_100, alloc_ratio_at_130,
// unallocated_gpus_at_130, frag_ratio_at_90 (means; fractions except GPU counts), their
// *_stddev, per_seed (the same keys per seed, with the seed's ledger capacity, busy and idle)
// and the ledger summed over seeds (pool, models, request classes; docs/simulator.md); for
// several, {"runs": [those objects]}.
std::string InflationJson(const InflationRunInfo& info, const std::vector<PolicyResult>& results);

// CSV of the curves: policy,seed,arrived_percent,arrived_gpu_milli,used_gpu_milli,alloc_ratio,
// frag_ratio; one row per policy, seed and percent.
std::string InflationCurvesCsv(const std::vector<PolicyResult>& results);

// A plain-text table: one row per policy with the means (and spread) of the four metrics, and
// the published FGD-paper number when the pod list is one of openb's.
std::string InflationSummaryTable(const InflationRunInfo& info,
                                  const std::vector<PolicyResult>& results);

// One self-contained HTML page (inline SVG and CSS, no scripts or network): allocation ratio and
// fragmentation ratio against arrived load, mean over seeds, one line per policy; and the table.
std::string InflationHtmlReport(const InflationRunInfo& info,
                                const std::vector<PolicyResult>& results);

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_INFLATION_REPORT_H_
