// The budget burn-down of the replay's cost page (docs/accounting.md, "HTML: the cost page"):
// for one run with GPU-hour budgets (ReplayResult::budgets), the budget each queue has left in
// its period over time, and a table of what each used period by period.
//
// Not API: a part of the cost section (cost_page.cc).
#ifndef GPUPOOL_SRC_SIM_REPLAY_BURN_DOWN_H_
#define GPUPOOL_SRC_SIM_REPLAY_BURN_DOWN_H_

#include <cstddef>
#include <map>
#include <string>

#include "gpupool/sim/replay_report.h"

namespace gpupool::sim::internal {

// The <h3> "Budget burn-down" and what follows: a sentence saying no budget is set when the run
// has none; else the chart (remaining budget in % of the period's budget against days, one line
// per queue, the period starts marked, the 0% line red) and the table. `color` gives the chart
// colour slot of a queue (the cost page's team order); queues not in it are grey.
std::string BurnDownSection(const ReplayRun& run, const std::map<std::string, size_t>& color);

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_BURN_DOWN_H_
