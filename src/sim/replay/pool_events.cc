// The replay's pool events (pool_events.h).
#include "sim/replay/pool_events.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

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

constexpr int64_t kDayS = 86400;
constexpr int64_t kMaxMaintenanceEveryS = 3650 * kDayS;
constexpr int64_t kMaxNoticeS = 366 * kDayS;
constexpr int64_t kMaxReclaimRate = 1'000'000;  // one per spot node-day
constexpr int64_t kMaxNodes = 1000;             // ids "n000".."n999"
constexpr int64_t kMaxCostPerHourMicro = int64_t{1} << 40;

// Floor of a / b for b > 0.
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The first rolling window of node `node` starts here (replay.h).
int64_t FirstRollingStart(const ReplayOptions& options, int32_t node, int64_t start) {
  return start + int64_t{node} * options.maintenance.every_s / options.pool.nodes;
}

}  // namespace

std::string NodeId(int32_t node) { return fmt::format("n{:03}", node); }

std::optional<int32_t> NodeIndex(std::string_view id, int32_t nodes) {
  int32_t node = -1;
  const char* end = id.data() + id.size();
  if (id.size() < 2 || id[0] != 'n' || std::from_chars(id.data() + 1, end, node).ptr != end ||
      node < 0 || node >= nodes) {
    return std::nullopt;
  }
  return node;
}

PoolLayout::PoolLayout(const ReplayOptions& options)
    : own_nodes(options.pool.nodes),
      spot_nodes(options.spot.nodes),
      added_nodes(options.scaling.max_nodes),
      gpus_per_node(options.pool.gpus_per_node) {}

ReplayPool PoolLayout::WithAddedNodes(const ReplayPool& pool) const {
  ReplayPool all = pool;
  all.nodes = all_nodes();
  return all;
}

PoolHealth::PoolHealth(const PoolLayout& layout)
    : layout_(layout),
      gpus_per_node_(layout.gpus_per_node),
      down_(static_cast<size_t>(layout.all_nodes()), false),
      failed_(static_cast<size_t>(layout.all_nodes()) * static_cast<size_t>(layout.gpus_per_node),
              false),
      failed_on_node_(static_cast<size_t>(layout.all_nodes()), 0),
      maintenance_(static_cast<size_t>(layout.all_nodes()), 0),
      reclaim_deadline_(static_cast<size_t>(layout.all_nodes())),
      taken_(static_cast<size_t>(layout.all_nodes()), false),
      absent_(static_cast<size_t>(layout.all_nodes()), false),
      ordered_(static_cast<size_t>(layout.all_nodes()), false) {
  for (int32_t n = layout.own_nodes; n < layout.all_nodes(); ++n) {
    absent_[static_cast<size_t>(n)] = true;
    unusable_gpus_ += gpus_per_node_;
  }
}

int64_t PoolHealth::Unusable(int32_t node) const {
  return Up(node) ? failed_on_node_[static_cast<size_t>(node)] : gpus_per_node_;
}

template <typename F>
void PoolHealth::Change(int32_t node, F change) {
  const int64_t before = Unusable(node);
  change();
  unusable_gpus_ += Unusable(node) - before;
}

bool PoolHealth::FailGpu(int32_t node, int32_t gpu) {
  if (!Up(node) || GpuFailed(node, gpu)) return false;
  Change(node, [&] {
    failed_[Index(node, gpu)] = true;
    ++failed_on_node_[static_cast<size_t>(node)];
  });
  return true;
}

bool PoolHealth::RepairGpu(int32_t node, int32_t gpu) {
  if (!GpuFailed(node, gpu)) return false;
  Change(node, [&] {
    failed_[Index(node, gpu)] = false;
    --failed_on_node_[static_cast<size_t>(node)];
  });
  return true;
}

bool PoolHealth::FailNode(int32_t node) {
  if (!Up(node)) return false;
  Change(node, [&] { down_[static_cast<size_t>(node)] = true; });
  ++nodes_down_;
  return true;
}

bool PoolHealth::RepairNode(int32_t node) {
  if (!NodeDown(node)) return false;
  Change(node, [&] { down_[static_cast<size_t>(node)] = false; });
  --nodes_down_;
  return true;
}

void PoolHealth::StartMaintenance(int32_t node) {
  if (maintenance_[static_cast<size_t>(node)]++ == 0) ++nodes_in_maintenance_;
}

bool PoolHealth::EndMaintenance(int32_t node) {
  if (maintenance_[static_cast<size_t>(node)] == 0) return false;
  if (--maintenance_[static_cast<size_t>(node)] == 0) --nodes_in_maintenance_;
  return true;
}

bool PoolHealth::AnnounceReclaim(int32_t node, int64_t deadline) {
  if (!layout_.IsSpot(node) || !Up(node) || ReclaimDeadline(node).has_value()) return false;
  reclaim_deadline_[static_cast<size_t>(node)] = deadline;
  return true;
}

bool PoolHealth::TakeReclaimed(int32_t node) {
  if (!ReclaimDeadline(node).has_value() || Taken(node)) return false;
  Change(node, [&] { taken_[static_cast<size_t>(node)] = true; });
  ++nodes_taken_;
  return true;
}

bool PoolHealth::ReturnReclaimed(int32_t node) {
  if (!Taken(node)) return false;
  Change(node, [&] {
    taken_[static_cast<size_t>(node)] = false;
    reclaim_deadline_[static_cast<size_t>(node)].reset();
  });
  --nodes_taken_;
  return true;
}

bool PoolHealth::Order(int32_t node) {
  if (!layout_.IsAdded(node) || !Absent(node) || Ordered(node)) return false;
  ordered_[static_cast<size_t>(node)] = true;
  ++ordered_count_;
  return true;
}

bool PoolHealth::Add(int32_t node) {
  if (!Ordered(node)) return false;
  ordered_[static_cast<size_t>(node)] = false;
  --ordered_count_;
  Change(node, [&] { absent_[static_cast<size_t>(node)] = false; });
  ++added_in_pool_;
  return true;
}

bool PoolHealth::Release(int32_t node) {
  if (!layout_.IsAdded(node) || Absent(node)) return false;
  Change(node, [&] { absent_[static_cast<size_t>(node)] = true; });
  --added_in_pool_;
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
      first_spot_node_(options.pool.nodes - options.spot.nodes),
      maintenance_every_s_(options.maintenance.every_s),
      maintenance_duration_s_(options.maintenance.duration_s),
      gpu_{.rng = Rng(0), .units = 0, .rate = 0},
      node_{.rng = Rng(0), .units = 0, .rate = 0},
      spot_{.rng = Rng(options.spot.seed), .units = 0, .rate = 0} {
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
  spot_.units = options.spot.nodes;
  spot_.rate = options.spot.reclaims_per_million_node_days;
  for (Process* p : {&gpu_, &node_, &spot_}) {
    if (p->rate > 0 && p->units > 0) p->next = start + Gap(*p);
  }
  for (const ReplayInjectedFailure& inj : f.injected) {
    scheduled_.insert(
        PoolEvent{.time = inj.time,
                  .kind = inj.gpu < 0 ? PoolEventKind::kNodeFails : PoolEventKind::kGpuFails,
                  .node = inj.node,
                  .gpu = inj.gpu < 0 ? -1 : inj.gpu});
  }
  const ReplayMaintenance& m = options.maintenance;
  if (m.every_s > 0) {
    for (int32_t n = 0; n < options.pool.nodes; ++n) {
      const int64_t s = FirstRollingStart(options, n, start);
      Add(PoolEvent{.time = s,
                    .kind = PoolEventKind::kMaintenanceStarts,
                    .node = n,
                    .end = s + m.duration_s,
                    .rolling = true});
    }
  }
  for (const ReplayMaintenanceWindow& w : m.windows) {
    Add(PoolEvent{
        .time = w.start, .kind = PoolEventKind::kMaintenanceStarts, .node = w.node, .end = w.end});
  }
  for (const ReplayInjectedReclaim& r : options.spot.injected) {
    scheduled_.insert(
        PoolEvent{.time = r.time, .kind = PoolEventKind::kSpotReclaimed, .node = r.node});
  }
}

bool PoolEvents::Returns(PoolEventKind kind) {
  // A window's start counts: its end follows.
  return kind == PoolEventKind::kNodeRepaired || kind == PoolEventKind::kGpuRepaired ||
         kind == PoolEventKind::kMaintenanceEnds || kind == PoolEventKind::kSpotReturned ||
         kind == PoolEventKind::kNodeProvisioned || kind == PoolEventKind::kMaintenanceStarts;
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
  while (spot_.next <= t) {
    const auto n = static_cast<int32_t>(spot_.rng.Uniform(static_cast<uint64_t>(spot_.units)));
    scheduled_.insert(PoolEvent{
        .time = spot_.next, .kind = PoolEventKind::kSpotReclaimed, .node = first_spot_node_ + n});
    spot_.next += Gap(spot_);
  }
}

std::optional<int64_t> PoolEvents::NextTime() const {
  int64_t t = std::min({gpu_.next, node_.next, spot_.next});
  if (!scheduled_.empty()) t = std::min(t, scheduled_.begin()->time);
  if (t == std::numeric_limits<int64_t>::max()) return std::nullopt;
  return t;
}

bool PoolEvents::CapacityMayReturn() const { return returns_ > 0; }

void PoolEvents::Add(const PoolEvent& event) {
  if (scheduled_.insert(event).second && Returns(event.kind)) ++returns_;
}

std::optional<PoolEvent> PoolEvents::PopAt(int64_t t) {
  DrawUntil(t);
  if (scheduled_.empty() || scheduled_.begin()->time != t) return std::nullopt;
  const PoolEvent event = *scheduled_.begin();
  scheduled_.erase(scheduled_.begin());
  if (Returns(event.kind)) --returns_;
  if (event.kind == PoolEventKind::kMaintenanceStarts && event.rolling) {
    Add(PoolEvent{.time = event.time + maintenance_every_s_,
                  .kind = PoolEventKind::kMaintenanceStarts,
                  .node = event.node,
                  .end = event.time + maintenance_every_s_ + maintenance_duration_s_,
                  .rolling = true});
  }
  return event;
}

}  // namespace gpupool::sim::internal

namespace gpupool::sim::internal {

absl::Status ValidatePoolOperations(const ReplayOptions& options, int64_t start) {
  const ReplayPool& pool = options.pool;
  const ReplayMaintenance& m = options.maintenance;
  if (m.every_s < 0 || m.every_s > kMaxMaintenanceEveryS) {
    return absl::InvalidArgumentError(
        fmt::format("maintenance.every_s: must be in [0, {}] (3,650 days), got {}",
                    kMaxMaintenanceEveryS, m.every_s));
  }
  if (m.notice_s < 0 || m.notice_s > kMaxNoticeS) {
    return absl::InvalidArgumentError(fmt::format(
        "maintenance.notice_s: must be in [0, {}] (366 days), got {}", kMaxNoticeS, m.notice_s));
  }
  if (m.every_s > 0) {
    if (m.duration_s <= 0 || m.duration_s >= m.every_s) {
      return absl::InvalidArgumentError(fmt::format(
          "maintenance.duration_s: must be in (0, every_s = {}), got {}", m.every_s, m.duration_s));
    }
    // The windows of one rack's nodes start (nodes_per_rack - 1) x every_s / nodes apart at most;
    // with each one's notice and duration they must leave part of the period free.
    const int64_t rack = std::min(pool.nodes_per_rack, pool.nodes);
    const int64_t spread = (rack - 1) * m.every_s / pool.nodes;
    if (spread + m.duration_s + m.notice_s >= m.every_s) {
      return absl::InvalidArgumentError(fmt::format(
          "maintenance: a rack's windows, announced {} s ahead and {} s long, starting over {} s "
          "of each {} s period, leave no moment when a job as wide as a rack could start: "
          "shorten notice_s or duration_s, or lengthen every_s",
          m.notice_s, m.duration_s, spread, m.every_s));
    }
  }
  for (size_t k = 0; k < m.windows.size(); ++k) {
    const ReplayMaintenanceWindow& w = m.windows[k];
    if (w.node < 0 || w.node >= pool.nodes) {
      return absl::InvalidArgumentError(
          fmt::format("maintenance.windows[{}].node: {} is not a node of the pool (0..{})", k,
                      w.node, pool.nodes - 1));
    }
    if (w.start < start) {
      return absl::InvalidArgumentError(fmt::format(
          "maintenance.windows[{}].start: {} is before the first arrival {}", k, w.start, start));
    }
    if (w.end <= w.start || w.end - w.start > kMaxMaintenanceEveryS) {
      return absl::InvalidArgumentError(fmt::format(
          "maintenance.windows[{}].end: must be after start ({}) and at most 3,650 days later, got "
          "{}",
          k, w.start, w.end));
    }
  }
  if (m.enabled() && options.checkpoint_interval_s <= 0) {
    return absl::InvalidArgumentError(
        "maintenance: need checkpoint_interval_s > 0 (without checkpoints a job stopped at every "
        "window starts again from nothing, and a long one might never complete)");
  }

  const ReplaySpot& sp = options.spot;
  if (sp.nodes < 0 || sp.nodes > pool.nodes) {
    return absl::InvalidArgumentError(fmt::format(
        "spot.nodes: must be in [0, {}] (the pool's nodes), got {}", pool.nodes, sp.nodes));
  }
  if (sp.reclaims_per_million_node_days < 0 ||
      sp.reclaims_per_million_node_days > kMaxReclaimRate) {
    return absl::InvalidArgumentError(fmt::format(
        "spot.reclaims_per_million_node_days: must be in [0, {}] (one per node-day), got {}",
        kMaxReclaimRate, sp.reclaims_per_million_node_days));
  }
  if (sp.notice_s < 0 || sp.notice_s > kDayS) {
    return absl::InvalidArgumentError(
        fmt::format("spot.notice_s: must be in [0, 86400], got {}", sp.notice_s));
  }
  if (sp.away_s <= 0 || sp.away_s > 8760 * 3600) {
    return absl::InvalidArgumentError(fmt::format(
        "spot.away_s: must be in [1, {}] (8,760 hours), got {}", 8760 * 3600, sp.away_s));
  }
  for (size_t k = 0; k < sp.injected.size(); ++k) {
    const ReplayInjectedReclaim& r = sp.injected[k];
    if (r.time < start) {
      return absl::InvalidArgumentError(fmt::format(
          "spot.injected[{}].time: {} is before the first arrival {}", k, r.time, start));
    }
    if (r.node < pool.nodes - sp.nodes || r.node >= pool.nodes) {
      return absl::InvalidArgumentError(
          fmt::format("spot.injected[{}].node: {} is not a spot node (the spot nodes are {}..{})",
                      k, r.node, pool.nodes - sp.nodes, pool.nodes - 1));
    }
  }

  const ReplayScaling& sc = options.scaling;
  if (pool.nodes > kMaxNodes && (m.enabled() || sp.enabled() || sc.enabled())) {
    return absl::InvalidArgumentError(
        fmt::format("pool.nodes: at most {} with maintenance, spot nodes or scaling, got {}",
                    kMaxNodes, pool.nodes));
  }
  if (sc.max_nodes < 0 || sc.max_nodes > std::max<int64_t>(0, kMaxNodes - pool.nodes)) {
    return absl::InvalidArgumentError(
        fmt::format("scaling.max_nodes: must be in [0, {}] (1,000 nodes in all), got {}",
                    std::max<int64_t>(0, kMaxNodes - pool.nodes), sc.max_nodes));
  }
  if (sc.cost_per_hour_micro < 0 || sc.cost_per_hour_micro > kMaxCostPerHourMicro) {
    return absl::InvalidArgumentError(fmt::format(
        "scaling.cost_per_hour_micro: must be in [0, 2^40], got {}", sc.cost_per_hour_micro));
  }
  if (sc.provision_s < 0 || sc.provision_s > kDayS) {
    return absl::InvalidArgumentError(
        fmt::format("scaling.provision_s: must be in [0, 86400], got {}", sc.provision_s));
  }
  if (sc.advice_every_s < 1 || sc.advice_every_s > kDayS) {
    return absl::InvalidArgumentError(
        fmt::format("scaling.advice_every_s: must be in [1, 86400], got {}", sc.advice_every_s));
  }
  if (sc.max_simulations < 1 || sc.max_simulations > 10'000) {
    return absl::InvalidArgumentError(
        fmt::format("scaling.max_simulations: must be in [1, 10000], got {}", sc.max_simulations));
  }
  return absl::OkStatus();
}

std::vector<MaintenanceWindow> AnnouncedWindows(const ReplayOptions& options, int32_t node,
                                                int64_t start, int64_t now) {
  const ReplayMaintenance& m = options.maintenance;
  std::vector<MaintenanceWindow> windows;
  if (node >= options.pool.nodes) return windows;
  if (m.every_s > 0) {
    const int64_t first = FirstRollingStart(options, node, start);
    // Windows first + k x every_s with start - notice <= now < end.
    const int64_t k_min = std::max<int64_t>(0, FloorDiv(now - m.duration_s - first, m.every_s) + 1);
    const int64_t k_max = FloorDiv(now + m.notice_s - first, m.every_s);
    for (int64_t k = k_min; k <= k_max; ++k) {
      const int64_t s = first + k * m.every_s;
      windows.push_back(MaintenanceWindow{.start = s, .end = s + m.duration_s});
    }
  }
  for (const ReplayMaintenanceWindow& w : m.windows) {
    if (w.node == node && w.start - m.notice_s <= now && now < w.end) {
      windows.push_back(MaintenanceWindow{.start = w.start, .end = w.end});
    }
  }
  std::sort(windows.begin(), windows.end(),
            [](const MaintenanceWindow& a, const MaintenanceWindow& b) {
              return std::tie(a.start, a.end) < std::tie(b.start, b.end);
            });
  // Overlapping windows merged (the snapshot's windows may touch, not overlap).
  std::vector<MaintenanceWindow> merged;
  for (const MaintenanceWindow& w : windows) {
    if (!merged.empty() && w.start < merged.back().end) {
      merged.back().end = std::max(merged.back().end, w.end);
    } else {
      merged.push_back(w);
    }
  }
  return merged;
}

}  // namespace gpupool::sim::internal
