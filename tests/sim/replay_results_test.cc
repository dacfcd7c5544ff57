// The measurements of docs/replay.md, disabled by default (minutes of CPU). Run with (one line)
//   GPUPOOL_REPLAY_POLICIES=fifo,las GPUPOOL_REPLAY_WINDOW=2017-10-01:14
//   build/replay/tests/sim_replay_results_test --gtest_also_run_disabled_tests
// GPUPOOL_REPLAY_WINDOW "all" replays the whole trace. Prints each policy's JSON (replay times
// are measured outside the test, e.g. with /usr/bin/time on the CLI).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gpupool/sim/replay.h"
#include "gtest/gtest.h"

namespace gpupool::sim {
namespace {

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

TEST(PhillyResults, DISABLED_Measure) {
  std::string path = Env("GPUPOOL_DATA_DIR", "");
  path = path.empty() ? std::string(GPUPOOL_SOURCE_DIR) + "/../shared/data/philly/philly.csv"
                      : path + "/philly/philly.csv";
  if (!std::ifstream(path).good()) GTEST_SKIP() << path << " not found; skipped";
  auto all = ReadPhillyCsv(path);
  ASSERT_TRUE(all.ok()) << all.status();
  const std::string window = Env("GPUPOOL_REPLAY_WINDOW", "2017-10-01:14");
  std::vector<TraceJob> jobs = *all;
  if (window != "all") {
    const size_t colon = window.find(':');
    auto start = ParseUtcTime(window.substr(0, colon));
    ASSERT_TRUE(start.ok()) << start.status();
    jobs = SelectWindow(*all, *start, std::stoll(window.substr(colon + 1)));
  }
  std::stringstream policies(Env("GPUPOOL_REPLAY_POLICIES", "fifo,las,las-free,default"));
  std::string name;
  while (std::getline(policies, name, ',')) {
    // "default/reclaim+no-turns" and the like: a named policy with knobs changed ("+" between
    // them), to measure why the defaults are what they are.
    const size_t slash = name.find('/');
    auto options = MakeReplayOptions(name.substr(0, slash));
    ASSERT_TRUE(options.ok()) << options.status();
    std::stringstream variants(slash == std::string::npos ? "" : name.substr(slash + 1));
    std::string variant;
    while (std::getline(variants, variant, '+')) {
      if (variant == "no-reclaim") {
        options->policy.preemption.reclaim_across_queues = false;
      } else if (variant == "no-starvation-bound") {
        options->policy.starvation_bound_s = 0;
        options->starved_min_run_s = 0;  // no job is served for starving
        options->starved_min_run_within_share = false;
      } else if (variant == "no-turns") {
        options->policy.queue_order = QueueOrder::kNone;
      } else if (variant == "no-preemption") {
        options->policy.preemption.enabled = false;
        // No victims: no cycles at their checkpoints, no job to keep from eviction.
        options->wake_up_at_checkpoints_s = 0;
        options->starved_min_run_s = 0;
        options->starved_min_run_within_share = false;
        options->max_victim_lost_within_share_s.reset();
      } else if (variant == "preemption") {
        options->policy.preemption.enabled = true;
      } else if (variant == "reclaim") {
        options->policy.preemption.enabled = true;
        options->policy.preemption.reclaim_across_queues = true;
      } else {
        FAIL() << "unknown variant " << variant;
      }
    }
    options->policy.name = name;
    auto r = RunReplay(*options, jobs);
    ASSERT_TRUE(r.ok()) << r.status();
    std::cout << "window " << window << " policy " << name << " jobs " << jobs.size() << "\n"
              << ReplayMetricsToJson(r->metrics) << std::flush;
  }
}

}  // namespace
}  // namespace gpupool::sim
