// A self-contained HTML report of one or more replays of the same trace (docs/replay.md, "HTML
// report"): the metrics, the JCT and queueing-delay distributions, and per queue the GPUs it
// held against its entitlement over time. Inline SVG and CSS only: no scripts, no network, no
// clock; the same results give the same bytes.
#ifndef GPUPOOL_SIM_REPLAY_REPORT_H_
#define GPUPOOL_SIM_REPLAY_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gpupool/chargeback.h"
#include "gpupool/sim/replay.h"

namespace gpupool::sim {

// One replay shown in the report, under `label` (usually the policy name).
struct ReplayRun {
  std::string label;
  ReplayResult result;
};

// What was replayed, for the page header. Empty fields are left out.
struct ReplayReportInfo {
  // The trace, e.g. its file name.
  std::string trace;
  // The window, e.g. "jobs submitted from 2017-11-01 for 14 days".
  std::string window;
  ReplayPool pool;
  // Prices for the cost section (docs/accounting.md); by default every GPU costs 0.
  Prices prices{.default_micros_per_gpu_hour = 0};
};

// The page: the metrics table (one row per run), the CDFs of JCT and queueing delay (log time
// axis, one line per run), one small chart per queue (mean GPUs held per run as solid lines, its
// entitlement per run as dashed lines, its guarantee dotted, against days since the first
// bucket; queues in the order of the first run's metrics) and the per-queue table (received,
// entitled, ratio, mean JCT per run). Runs should replay the same jobs; queues are matched by
// name. Chart lines are means over groups of whole buckets, at most about one point per pixel.
std::string ReplayHtmlReport(const std::vector<ReplayRun>& runs, const ReplayReportInfo& info);

// One run, labelled with its policy name.
std::string ReplayHtmlReport(const ReplayResult& result, const ReplayReportInfo& info);

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_REPLAY_REPORT_H_
