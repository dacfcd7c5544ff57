// The cost section of the replay's HTML report (docs/accounting.md, "HTML: the cost page"): what
// a manager reads. For one run (the "default" policy when present, else the first): GPU-hours
// and cost per team and day (stacked), the chargeback per team, lost work by cause; for every
// run: pooled against dedicated (GPUs needed, utilization, money); and the budget burn-down,
// or a sentence saying no budgets are set.
//
// Money in the charts is per day, derived from the ledger's hourly series at the run's prices;
// the tables are the chargeback's exact integers (ComputeChargeback, ComparePooling).
//
// Not API: a part of ReplayHtmlReport() (report.cc).
#ifndef GPUPOOL_SRC_SIM_REPLAY_COST_PAGE_H_
#define GPUPOOL_SRC_SIM_REPLAY_COST_PAGE_H_

#include <string>
#include <vector>

#include "gpupool/chargeback.h"
#include "gpupool/sim/replay_report.h"

namespace gpupool::sim::internal {

// The section (an <h2> and what follows), or a paragraph with the error when the prices do not
// fit the ledger.
std::string CostSection(const std::vector<ReplayRun>& runs, const Prices& prices);

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_COST_PAGE_H_
