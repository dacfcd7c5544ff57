#include "fuzz_common.h"

#include <cstring>
#include <limits>
#include <map>
#include <span>
#include <utility>

#include "absl/status/statusor.h"
#include "gpupool/apply.h"
#include "gpupool/io/json.h"
#include "gpupool/resources.h"
#include "gpupool/schedule.h"
#include "gpupool/scorers/scorers.h"

namespace gpupool::fuzz {

ScheduleInput SplitScheduleInput(const uint8_t* data, size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t nul = all.find('\0');
  if (nul == std::string_view::npos) return {all, {}};
  return {all.substr(0, nul), all.substr(nul + 1)};
}

uint8_t ByteReader::Byte() {
  if (pos_ >= bytes_.size()) return 0;
  return static_cast<uint8_t>(bytes_[pos_++]);
}

int64_t ByteReader::Int64() {
  const uint8_t tag = Byte();
  switch (tag & 3) {
    case 0:
      return Byte();
    case 1:
      return int64_t{60} * (Byte() | (Byte() << 8));
    case 2: {
      uint64_t raw = 0;
      for (int i = 0; i < 8; ++i) raw = (raw << 8) | Byte();
      int64_t value;
      std::memcpy(&value, &raw, sizeof value);
      return value;
    }
    default:
      return -int64_t{1} - Byte();
  }
}

Policy PolicyFromBytes(std::string_view bytes, const Snapshot& snapshot) {
  ByteReader in(bytes);
  Policy policy;
  policy.name = "fuzz";
  policy.version = static_cast<int32_t>(in.Byte());
  const uint8_t placement = in.Byte();
  policy.placement = static_cast<PlacementStrategy>((placement & 127) % 3);
  policy.preemption.starving_drain = (placement & 128) != 0;
  policy.job_order = static_cast<JobOrder>(in.Byte() % 3);
  policy.queue_order = static_cast<QueueOrder>(in.Byte() % 2);

  const uint8_t flags = in.Byte();
  policy.preemption.enabled = (flags & 1) != 0;
  policy.preemption.reclaim_across_queues = (flags & 2) != 0;
  policy.preemption.reclaim_lower_priority_only = (flags & 4) != 0;
  policy.preemption.starving_outrank = (flags & 8) == 0;  // default true
  policy.preemption.victim_order =
      (flags & 16) != 0 ? VictimOrder::kLowestPriorityFirst : VictimOrder::kCheapestFirst;
  const bool default_las = (flags & 32) == 0;
  policy.fair_share.gpu_hour_budgets =
      (flags & 64) != 0 ? BudgetEnforcement::kReportOnly : BudgetEnforcement::kEnforce;
  policy.consolidation.enabled = (flags & 128) != 0;

  policy.preemption.checkpoint_grace_s = in.Int64();
  policy.preemption.max_victim_lost_s = in.Int64();
  policy.preemption.min_victim_run_s = in.Int64();
  policy.starvation_bound_s = in.Int64();
  policy.fair_share.usage_half_life_s = in.Int64();
  policy.budgets.max_candidates = in.Int64();
  policy.budgets.max_preemption_plans = in.Int64();
  // 0 from an exhausted tail would mean "no counterfactuals"; keep the default then.
  const int64_t counterfactuals = in.Int64();
  if (counterfactuals != 0) policy.budgets.max_counterfactual_plans = counterfactuals;
  if (!default_las) {
    policy.las_thresholds_gpu_seconds.clear();
    const int count = in.Byte() % 5;
    for (int i = 0; i < count; ++i) policy.las_thresholds_gpu_seconds.push_back(in.Int64());
  }

  // A built-in scorer by name (0 = none), built for the snapshot's requests as the CLI does.
  const std::span<const std::string_view> names = BuiltinScorerNames();
  const size_t scorer = in.Byte() % (names.size() + 1);
  if (scorer > 0) {
    std::vector<ResourceRequest> requests;
    std::vector<std::vector<std::string>> models;
    for (const Job& job : snapshot.jobs) {
      for (const TaskGroup& group : job.groups) {
        requests.push_back(group.request);
        models.push_back(group.gpu_models);
      }
    }
    ScorerContext context;
    context.seed = in.Byte();
    context.requests = requests;
    context.models = models;
    absl::StatusOr<std::shared_ptr<const PlacementScorer>> made =
        MakeScorerByName(names[scorer - 1], context);
    FUZZ_CHECK(made.ok(), made.status().ToString());
    policy.scorer = *made;
  }
  const uint8_t drain = in.Byte();
  policy.preemption.drain_blocked_jobs = (drain & 127) % 3;
  policy.preemption.starving_drain_past_min_runtime = (drain & 128) != 0;
  const uint8_t take_back = in.Byte();
  policy.preemption.take_back_from_gpus = (take_back % 3) * 2;  // 0 (off), 2 or 4 GPUs
  policy.preemption.take_back_after_s = (take_back / 3) % 2 * 600;
  // Shorter victims stay: off, 50 % or 100 %, whatever the priority gap or up to 2.
  policy.preemption.victim_remaining_percent = (take_back / 6) % 3 * 50;
  policy.preemption.victim_remaining_max_gap = (take_back / 18) % 2 * 2;
  return policy;
}

void CheckDecisions(const Snapshot& snapshot, const Decisions& decisions) {
  Snapshot after = snapshot;
  const absl::Status applied = ApplyDecisions(decisions, after);
  FUZZ_CHECK(applied.ok(), applied.ToString());
  const absl::Status valid = ValidateSnapshot(after);
  FUZZ_CHECK(valid.ok(), valid.ToString());

  // No GPU over-committed, counted here independently of the validator.
  std::map<std::pair<std::string, int32_t>, int64_t> used;
  for (const Job& job : after.jobs) {
    if (job.state != JobState::kRunning) continue;
    for (const ReplicaPlacement& placement : job.placements) {
      // 0 in a snapshot means "the group's MilliPerGpu()" (job.h).
      int64_t share = placement.gpu_milli;
      for (const TaskGroup& group : job.groups) {
        if (share == 0 && group.name == placement.group) share = group.request.MilliPerGpu();
      }
      for (int32_t gpu : placement.gpus) {
        int64_t& milli = used[{placement.node, gpu}];
        milli += share;
        FUZZ_CHECK(milli <= kMilliPerGpu, placement.node + " gpu " + std::to_string(gpu) +
                                              " over-committed after job " + job.id);
      }
    }
  }

  const std::string json = io::DecisionsToJson(decisions);
  absl::StatusOr<Decisions> reread = io::ParseDecisions(json);
  FUZZ_CHECK(reread.ok(), reread.status().ToString());
  FUZZ_CHECK(io::DecisionsToJson(*reread) == json, "decisions JSON round trip");
}

}  // namespace gpupool::fuzz
