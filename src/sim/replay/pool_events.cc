// The replay's pool events (pool_events.h).
#include "sim/replay/pool_events.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace gpupool::sim::internal {
namespace {

constexpr int64_t kMaxRate = 100'000;                // 100 per 1,000 unit-days
constexpr int64_t kMaxRepairS = 8760 * 3600;         // a year
constexpr int64_t kUnitDaysS = 1'000'000LL * 86400;  // seconds in 1,000,000 unit-days
// A rack's mean GPUs out of service may be at most this (see ValidateFailures).
constexpr int64_t kMaxRackGpusUnderRepair = 4;

// The high 64 bits of a x b (the 128-bit product from 32-bit halves, as gpupool/sim/rng.h).
uint64_t MulHigh(uint64_t a, uint64_t b) {
  const uint64_t a_lo = a & 0xffffffffULL, a_hi = a >> 32;
  const uint64_t b_lo = b & 0xffffffffULL, b_hi = b >> 32;
  const uint64_t lo_lo = a_lo * b_lo;
  const uint64_t hi_lo = a_hi * b_lo;
  const uint64_t lo_hi = a_lo * b_hi;
  const uint64_t middle = (lo_lo >> 32) + (hi_lo & 0xffffffffULL) + lo_hi;
  return a_hi * b_hi + (hi_lo >> 32) + (middle >> 32);
}

bool IsRepair(PoolEventKind kind) {
  return kind == PoolEventKind::kNodeRepaired || kind == PoolEventKind::kGpuRepaired;
}

}  // namespace

PoolHealth::PoolHealth(const ReplayPool& pool)
    : gpus_per_node_(pool.gpus_per_node),
      down_(static_cast<size_t>(pool.nodes), false),
      failed_(static_cast<size_t>(pool.TotalGpus()), false),
      failed_on_node_(static_cast<size_t>(pool.nodes), 0) {}

int64_t PoolHealth::Unusable(int32_t node) const {
  return NodeDown(node) ? gpus_per_node_ : failed_on_node_[static_cast<size_t>(node)];
}

bool PoolHealth::FailGpu(int32_t node, int32_t gpu) {
  if (NodeDown(node) || GpuFailed(node, gpu)) return false;
  failed_[Index(node, gpu)] = true;
  ++failed_on_node_[static_cast<size_t>(node)];
  ++unusable_gpus_;
  return true;
}

bool PoolHealth::RepairGpu(int32_t node, int32_t gpu) {
  if (!GpuFailed(node, gpu)) return false;
  const int64_t before = Unusable(node);
  failed_[Index(node, gpu)] = false;
  --failed_on_node_[static_cast<size_t>(node)];
  unusable_gpus_ += Unusable(node) - before;
  return true;
}

bool PoolHealth::FailNode(int32_t node) {
  if (NodeDown(node)) return false;
  const int64_t before = Unusable(node);
  down_[static_cast<size_t>(node)] = true;
  ++nodes_down_;
  unusable_gpus_ += Unusable(node) - before;
  return true;
}

bool PoolHealth::RepairNode(int32_t node) {
  if (!NodeDown(node)) return false;
  const int64_t before = Unusable(node);
  down_[static_cast<size_t>(node)] = false;
  --nodes_down_;
  unusable_gpus_ += Unusable(node) - before;
  return true;
}

absl::Status ValidateFailures(const ReplayOptions& options, int64_t start) {
  const ReplayFailures& f = options.failures;
  const ReplayPool& pool = options.pool;
  if (f.gpu_per_million_gpu_days < 0 || f.gpu_per_million_gpu_days > kMaxRate) {
    return absl::InvalidArgumentError(fmt::format(
        "failures.gpu_per_million_gpu_days: must be in [0, {}] (100 per 1,000 GPU-days), got {}",
        kMaxRate, f.gpu_per_million_gpu_days));
  }
  if (f.node_per_million_node_days < 0 || f.node_per_million_node_days > kMaxRate) {
    return absl::InvalidArgumentError(
        fmt::format("failures.node_per_million_node_days: must be in [0, {}] (100 per 1,000 "
                    "node-days), got {}",
                    kMaxRate, f.node_per_million_node_days));
  }
  if (f.repair_s <= 0 || f.repair_s > kMaxRepairS) {
    return absl::InvalidArgumentError(fmt::format(
        "failures.repair_s: must be in [1, {}] (8,760 hours), got {}", kMaxRepairS, f.repair_s));
  }
  for (size_t k = 0; k < f.injected.size(); ++k) {
    const ReplayInjectedFailure& inj = f.injected[k];
    if (inj.time < start) {
      return absl::InvalidArgumentError(fmt::format(
          "failures.injected[{}].time: {} is before the first arrival {}", k, inj.time, start));
    }
    if (inj.node < 0 || inj.node >= pool.nodes) {
      return absl::InvalidArgumentError(
          fmt::format("failures.injected[{}].node: {} is not a node of the pool (0..{})", k,
                      inj.node, pool.nodes - 1));
    }
    if (inj.gpu < -1 || inj.gpu >= pool.gpus_per_node) {
      return absl::InvalidArgumentError(fmt::format(
          "failures.injected[{}].gpu: {} is not a GPU of a node (0..{}, or -1 for the node)", k,
          inj.gpu, pool.gpus_per_node - 1));
    }
  }
  if (!f.enabled()) return absl::OkStatus();
  if (options.checkpoint_interval_s <= 0) {
    return absl::InvalidArgumentError(
        "failures: need checkpoint_interval_s > 0 (without checkpoints a failed job starts "
        "again from nothing, and a long one might never complete)");
  }
  // A rack's mean GPUs out of service: rack GPUs x (GPU rate + node rate) x repair days. Above
  // 4, a job as wide as a rack would seldom find one whole (e^-4 of the time).
  const int64_t rack_gpus = int64_t{std::min(pool.nodes_per_rack, pool.nodes)} * pool.gpus_per_node;
  const int64_t rates = f.gpu_per_million_gpu_days + f.node_per_million_node_days;
  // rack_gpus < 2^41 and rates < 2^17, so their product fits; x repair_s > limit is compared as
  // product > limit / repair_s (exact for integers), which cannot overflow.
  if (rack_gpus * rates > kMaxRackGpusUnderRepair * kUnitDaysS / f.repair_s) {
    return absl::InvalidArgumentError(fmt::format(
        "failures: a rack of {} GPUs would have {:.2f} GPUs under repair on average (rack GPUs x "
        "(GPU + node failure rates) x repair days), more than {}: lower the rates or the repair "
        "time",
        rack_gpus,
        static_cast<double>(rack_gpus) * static_cast<double>(rates) *
            static_cast<double>(f.repair_s) / static_cast<double>(kUnitDaysS),
        kMaxRackGpusUnderRepair));
  }
  return absl::OkStatus();
}

PoolEvents::PoolEvents(const ReplayOptions& options, int64_t start)
    : gpus_per_node_(options.pool.gpus_per_node),
      gpu_{.rng = Rng(0), .units = 0, .rate = 0},
      node_{.rng = Rng(0), .units = 0, .rate = 0} {
  const ReplayFailures& f = options.failures;
  // One stream per process, both from the seed, so that turning node failures on or off leaves
  // the GPU failures where they were.
  Rng seeds(f.seed);
  gpu_.rng = Rng(seeds.Next());
  node_.rng = Rng(seeds.Next());
  gpu_.units = options.pool.TotalGpus();
  gpu_.rate = f.gpu_per_million_gpu_days;
  node_.units = options.pool.nodes;
  node_.rate = f.node_per_million_node_days;
  for (Process* p : {&gpu_, &node_}) {
    if (p->rate > 0 && p->units > 0) p->next = start + Gap(*p);
  }
  for (const ReplayInjectedFailure& inj : f.injected) {
    scheduled_.insert(
        PoolEvent{.time = inj.time,
                  .kind = inj.gpu < 0 ? PoolEventKind::kNodeFails : PoolEventKind::kGpuFails,
                  .node = inj.node,
                  .gpu = inj.gpu < 0 ? -1 : inj.gpu});
  }
}

int64_t PoolEvents::Gap(Process& p) {
  // Exp(1) = K + F by von Neumann's method: draw U1, U2, ... while they go down; N is the index
  // of the first one above its predecessor. N even (probability e^-U1): F = U1; otherwise K + 1
  // and again. Only comparisons of uniforms: exact, and the same everywhere.
  uint64_t k = 0;
  uint64_t f = 0;
  for (;;) {
    const uint64_t u1 = p.rng.Next();
    uint64_t prev = u1;
    int64_t n = 1;
    for (;;) {
      const uint64_t u = p.rng.Next();
      ++n;
      if (u > prev) break;
      prev = u;
    }
    if (n % 2 == 0) {
      f = u1;
      break;
    }
    ++k;
  }
  // Mean gap = kUnitDaysS / (units x rate) seconds; gap = floor((K + F / 2^64) x mean). K is
  // capped far above anything drawn in practice (P(K > 2^20) = e^-(2^20)) to keep K x kUnitDaysS
  // in range.
  k = std::min<uint64_t>(k, uint64_t{1} << 20);
  const auto a = static_cast<uint64_t>(kUnitDaysS);
  const uint64_t scaled = k * a + MulHigh(f, a);
  return static_cast<int64_t>(scaled / static_cast<uint64_t>(p.units * p.rate));
}

void PoolEvents::DrawUntil(int64_t t) {
  while (gpu_.next <= t) {
    const auto g = static_cast<int64_t>(gpu_.rng.Uniform(static_cast<uint64_t>(gpu_.units)));
    scheduled_.insert(PoolEvent{.time = gpu_.next,
                                .kind = PoolEventKind::kGpuFails,
                                .node = static_cast<int32_t>(g / gpus_per_node_),
                                .gpu = static_cast<int32_t>(g % gpus_per_node_)});
    gpu_.next += Gap(gpu_);
  }
  while (node_.next <= t) {
    const auto n = static_cast<int32_t>(node_.rng.Uniform(static_cast<uint64_t>(node_.units)));
    scheduled_.insert(
        PoolEvent{.time = node_.next, .kind = PoolEventKind::kNodeFails, .node = n, .gpu = -1});
    node_.next += Gap(node_);
  }
}

std::optional<int64_t> PoolEvents::NextTime() const {
  int64_t t = std::min(gpu_.next, node_.next);
  if (!scheduled_.empty()) t = std::min(t, scheduled_.begin()->time);
  if (t == std::numeric_limits<int64_t>::max()) return std::nullopt;
  return t;
}

bool PoolEvents::RepairPending() const { return repairs_ > 0; }

void PoolEvents::Add(const PoolEvent& event) {
  if (scheduled_.insert(event).second && IsRepair(event.kind)) ++repairs_;
}

std::optional<PoolEvent> PoolEvents::PopAt(int64_t t) {
  DrawUntil(t);
  if (scheduled_.empty() || scheduled_.begin()->time != t) return std::nullopt;
  const PoolEvent event = *scheduled_.begin();
  scheduled_.erase(scheduled_.begin());
  if (IsRepair(event.kind)) --repairs_;
  return event;
}

}  // namespace gpupool::sim::internal
