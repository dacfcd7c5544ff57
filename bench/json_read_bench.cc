// EVALUATION.md E3: the time to read a snapshot from JSON, apart from scheduling it.
//
//   build/bench/bench/json_read_bench
//
// The S2 snapshot (scale 1.0 by default) is generated and serialised once with
// io::SnapshotToJson; the timed loop parses it with io::ParseSnapshot. bytes_per_second is the
// read speed (the E3 goal is 200 MB/s or more); the counter json_mib is the document's size.
// Writing the same snapshot and validating it are measured separately, as in-process baselines.
#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "benchmark/benchmark.h"
#include "gpupool/io/json.h"
#include "gpupool/schedule.h"
#include "testing/generator.h"

namespace gpupool {
namespace {

constexpr uint64_t kSeed = 42;

struct Fixture {
  Snapshot snapshot;
  std::string json;
};

// One fixture per scale in percent, built on first use.
const Fixture& CachedFixture(int64_t scale_percent) {
  static auto* fixtures = new std::map<int64_t, Fixture>();
  auto [it, inserted] = fixtures->try_emplace(scale_percent);
  if (inserted) {
    it->second.snapshot =
        testing::GenerateScenarioS2(kSeed, static_cast<double>(scale_percent) / 100.0);
    it->second.json = io::SnapshotToJson(it->second.snapshot);
  }
  return it->second;
}

void SetSizeCounters(benchmark::State& state, const Fixture& fixture) {
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(fixture.json.size()));
  state.counters["json_mib"] = static_cast<double>(fixture.json.size()) / (1024.0 * 1024.0);
  state.counters["jobs"] = static_cast<double>(fixture.snapshot.jobs.size());
  state.counters["nodes"] = static_cast<double>(fixture.snapshot.nodes.size());
}

void BM_ParseSnapshotS2(benchmark::State& state) {
  const Fixture& fixture = CachedFixture(state.range(0));
  for (auto _ : state) {
    absl::StatusOr<Snapshot> snapshot = io::ParseSnapshot(fixture.json);
    if (!snapshot.ok()) {
      state.SkipWithError(std::string(snapshot.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(snapshot);
  }
  SetSizeCounters(state, fixture);
}

void BM_WriteSnapshotS2(benchmark::State& state) {
  const Fixture& fixture = CachedFixture(state.range(0));
  for (auto _ : state) {
    std::string json = io::SnapshotToJson(fixture.snapshot);
    benchmark::DoNotOptimize(json);
  }
  SetSizeCounters(state, fixture);
}

void BM_ValidateSnapshotS2(benchmark::State& state) {
  const Fixture& fixture = CachedFixture(state.range(0));
  for (auto _ : state) {
    absl::Status status = ValidateSnapshot(fixture.snapshot);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(status);
  }
  SetSizeCounters(state, fixture);
}

#define GPUPOOL_S2_BENCHMARK(fn)      \
  BENCHMARK(fn)                       \
      ->ArgName("scale%")             \
      ->Arg(10)                       \
      ->Arg(100)                      \
      ->Unit(benchmark::kMillisecond) \
      ->Repetitions(5)                \
      ->ReportAggregatesOnly(true)

GPUPOOL_S2_BENCHMARK(BM_ParseSnapshotS2);
GPUPOOL_S2_BENCHMARK(BM_ValidateSnapshotS2);
GPUPOOL_S2_BENCHMARK(BM_WriteSnapshotS2);

}  // namespace
}  // namespace gpupool

BENCHMARK_MAIN();
