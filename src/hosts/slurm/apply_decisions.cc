#include "hosts/slurm/apply_decisions.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hosts/slurm/slurm_text.h"

namespace gpupool::slurm {
namespace {

class Applier {
 public:
  Applier(CommandRunner& runner, bool dry_run, ApplyReport* report)
      : runner_(runner), dry_run_(dry_run), report_(report) {}

  // Runs a command that changes Slurm; false (and the error reported) when it fails.
  bool Change(const std::vector<std::string>& argv) {
    report_->commands.push_back(argv);
    if (dry_run_) return true;
    absl::StatusOr<std::string> result = runner_.Run(argv);
    if (!result.ok()) {
      report_->errors.push_back(std::string(result.status().message()));
      return false;
    }
    return true;
  }

  // Sets the adapter's part of a job's comment, when it differs from what Slurm has.
  void SetStatus(const std::string& job, const std::string& user_comment,
                 const std::string& current_comment, const std::string& status) {
    const std::string comment = JoinComment(user_comment, status);
    if (comment == current_comment) return;
    Change({"scontrol", "update", absl::StrCat("JobId=", job), absl::StrCat("Comment=", comment)});
  }

  // The job's state as squeue reports it now ("" when it is gone).
  std::string CurrentState(const std::string& job) {
    absl::StatusOr<std::string> out = runner_.Run({"squeue", "-h", "-j", job, "-o", "%T"});
    if (!out.ok()) return "";
    return std::string(absl::StripAsciiWhitespace(*out));
  }

  void Sleep(int64_t seconds) {
    if (!dry_run_ && seconds > 0) runner_.Sleep(seconds);
  }

  bool dry_run() const { return dry_run_; }
  ApplyReport& report() { return *report_; }

 private:
  CommandRunner& runner_;
  bool dry_run_;
  ApplyReport* report_;
};

std::string NodeListOf(const StartDecision& start) {
  std::vector<std::string> nodes;
  for (const ReplicaPlacement& p : start.placements) {
    if (std::find(nodes.begin(), nodes.end(), p.node) == nodes.end()) nodes.push_back(p.node);
  }
  return absl::StrJoin(nodes, ",");
}

// Why Slurm cannot carry out `start` as gpupool decided it ("" when it can): its replicas share
// a node (a Slurm job runs one per node), or it needs GPUs that a Migrate or a Resize of the same
// decisions frees, which Slurm cannot do (the GPUs stay taken).
std::string CannotStart(const StartDecision& start, const JobFacts& facts,
                        const Decisions& decisions) {
  const std::string node_list = NodeListOf(start);
  const int64_t distinct =
      static_cast<int64_t>(std::count(node_list.begin(), node_list.end(), ',')) + 1;
  if (distinct != facts.node_count ||
      static_cast<int64_t>(start.placements.size()) != facts.node_count) {
    return absl::StrCat("gpupool placed its ", start.placements.size(), " replicas on ", distinct,
                        " node(s) (", node_list, "); Slurm runs one per node: left held");
  }
  for (const MigrateDecision& migrate : decisions.migrations) {
    if (migrate.for_job == start.job || SharesAGpu(start.placements, migrate.from)) {
      return absl::StrCat("it needs GPUs that job ", migrate.job,
                          " would free by moving, and Slurm cannot move a running job: left held");
    }
  }
  for (const ResizeDecision& resize : decisions.resizes) {
    if (resize.for_job == start.job) {
      return absl::StrCat("it needs GPUs that job ", resize.job,
                          " would free by shrinking, and Slurm cannot resize a running job: left "
                          "held");
    }
  }
  return "";
}

}  // namespace

ApplyReport ApplyDecisions(const Decisions& decisions, const BuiltSnapshot& built,
                           CommandRunner& runner, bool dry_run) {
  ApplyReport report;
  Applier applier(runner, dry_run, &report);

  // The starts Slurm cannot carry out, first: nothing is evicted for them.
  std::map<std::string, std::string> left_held;
  for (const StartDecision& start : decisions.starts) {
    const auto facts = built.jobs.find(start.job);
    if (facts == built.jobs.end()) continue;
    std::string why = CannotStart(start, facts->second, decisions);
    if (!why.empty()) left_held.emplace(start.job, std::move(why));
  }

  // 1. Released jobs whose nodes can no longer take them go back to the held queue.
  for (const InFlightJob& job : built.in_flight) {
    if (job.unschedulable_node.empty()) continue;
    if (applier.Change({"scontrol", "hold", job.id})) {
      applier.SetStatus(
          job.id, job.user_comment, job.comment,
          absl::StrCat("taken back: node ", job.unschedulable_node, " can no longer run it"));
    }
  }

  // 2. Preemptions. Jobs that asked for a checkpoint signal get it first, all at once, then the
  // longest of their grace periods; a job that ended meanwhile is not requeued (requeuing a
  // finished job would run it again).
  int64_t wait_s = 0;
  std::set<std::string> signalled;
  auto for_nothing = [&left_held](const PreemptDecision& preempt) {
    return left_held.count(preempt.for_job) > 0;
  };
  for (const PreemptDecision& preempt : decisions.preemptions) {
    const auto facts = built.jobs.find(preempt.job);
    if (facts == built.jobs.end() || facts->second.directives.checkpoint_signal.empty() ||
        for_nothing(preempt)) {
      continue;
    }
    if (applier.Change({"scancel",
                        absl::StrCat("--signal=", facts->second.directives.checkpoint_signal),
                        "--full", preempt.job})) {
      signalled.insert(preempt.job);
      wait_s = std::max(wait_s, facts->second.directives.checkpoint_wait_s);
    }
  }
  applier.Sleep(wait_s);
  for (const PreemptDecision& preempt : decisions.preemptions) {
    const auto facts = built.jobs.find(preempt.job);
    if (facts == built.jobs.end()) {
      report.not_applied.push_back(absl::StrCat("Preempt of job ", preempt.job,
                                                ": not a job of the snapshot (not applied)"));
      continue;
    }
    if (for_nothing(preempt)) {
      report.not_applied.push_back(absl::StrCat("Preempt of job ", preempt.job, ": for job ",
                                                preempt.for_job,
                                                ", whose start Slurm cannot carry out (not "
                                                "applied: it keeps running)"));
      continue;
    }
    if (signalled.count(preempt.job) > 0 && !applier.dry_run()) {
      const std::string state = applier.CurrentState(preempt.job);
      if (state != "RUNNING") {
        report.not_applied.push_back(absl::StrCat("Preempt of job ", preempt.job, ": it is ",
                                                  state.empty() ? "gone" : state,
                                                  " after its checkpoint signal (not requeued)"));
        continue;
      }
    }
    if (applier.Change({"scontrol", "requeuehold", preempt.job})) {
      applier.SetStatus(preempt.job, facts->second.user_comment, facts->second.comment,
                        absl::StrCat("preempted for job ", preempt.for_job, ": ", preempt.reason));
    }
  }

  // 3. Starts: pin the nodes, then release. Those Slurm cannot carry out (above) stay held.
  for (const StartDecision& start : decisions.starts) {
    const auto facts = built.jobs.find(start.job);
    if (facts == built.jobs.end()) {
      report.not_applied.push_back(
          absl::StrCat("Start of job ", start.job, ": not a job of the snapshot (not applied)"));
      continue;
    }
    if (const auto held = left_held.find(start.job); held != left_held.end()) {
      report.not_applied.push_back(absl::StrCat("Start of job ", start.job, ": ", held->second));
      applier.SetStatus(start.job, facts->second.user_comment, facts->second.comment, held->second);
      continue;
    }
    const std::string node_list = NodeListOf(start);
    const std::string comment =
        JoinComment(facts->second.user_comment, absl::StrCat("started on ", node_list));
    if (applier.Change({"scontrol", "update", absl::StrCat("JobId=", start.job),
                        absl::StrCat("NodeList=", node_list), "StartTime=now",
                        absl::StrCat("Comment=", comment)}) &&
        !applier.Change({"scontrol", "release", start.job}) && !applier.dry_run()) {
      // Still held: the comment must not say it started. The next cycle plans it again.
      applier.SetStatus(start.job, facts->second.user_comment, comment,
                        absl::StrCat("not started: scontrol release failed (",
                                     applier.report().errors.back(), "); tried again next cycle"));
    }
  }

  // 4. Pending reasons (with the reservation, when there is one).
  std::map<std::string, const ReserveDecision*> reservations;
  for (const ReserveDecision& reserve : decisions.reservations)
    reservations[reserve.job] = &reserve;
  for (const PendingDecision& pending : decisions.pending) {
    const auto facts = built.jobs.find(pending.job);
    if (facts == built.jobs.end()) continue;
    std::string status =
        absl::StrCat("waiting: ", PendingReasonName(pending.reason), ": ", pending.detail);
    if (const auto reserve = reservations.find(pending.job); reserve != reservations.end()) {
      absl::StrAppend(&status, " Reserved: expected start at ", reserve->second->expected_start,
                      " on ", absl::StrJoin(reserve->second->nodes, ","), ".");
    }
    applier.SetStatus(pending.job, facts->second.user_comment, facts->second.comment, status);
  }

  // 5. Jobs gpupool cannot schedule.
  for (const UnmappedJob& job : built.unmapped) {
    applier.SetStatus(job.id, job.user_comment, job.comment,
                      absl::StrCat("not scheduled: ", job.why));
  }

  // 6. What Slurm cannot do.
  for (const MigrateDecision& migrate : decisions.migrations) {
    report.not_applied.push_back(absl::StrCat("Migrate of job ", migrate.job,
                                              ": Slurm cannot move a running job (not applied)"));
  }
  for (const ResizeDecision& resize : decisions.resizes) {
    report.not_applied.push_back(absl::StrCat("Resize of job ", resize.job,
                                              ": Slurm cannot resize a running job (not applied)"));
  }
  return report;
}

}  // namespace gpupool::slurm
