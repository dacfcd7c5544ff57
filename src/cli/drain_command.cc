// gpupool drain SNAPSHOT --nodes ID[,ID...] --deadline T [--policy FILE] [--json]: the drain plan
// of a set of nodes (gpupool/drain_plan.h, docs/cli.md).
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "cli/commands.h"
#include "fmt/format.h"
#include "gpupool/drain_plan.h"
#include "gpupool/io/json.h"

namespace gpupool::cli {
namespace {

struct DrainArgs {
  std::string snapshot_path;
  std::string nodes;
  int64_t deadline = 0;
  std::string policy_path;
  bool json = false;
};

std::string Table(const DrainPlan& plan) {
  std::string out = fmt::format("drain at deadline {} (now {})\n", plan.deadline, plan.now);
  out += fmt::format("{:<16} {:>14}  {}\n", "node", "empty at", "jobs");
  for (const NodeDrain& node : plan.nodes) {
    std::string jobs;
    for (const DrainJob& job : node.jobs) {
      if (!jobs.empty()) jobs += ", ";
      jobs += job.job;
      if (job.stopped) {
        jobs += fmt::format(" (stopped at the deadline, loses {} milli-GPU-s)",
                            job.lost_milli_gpu_seconds);
      } else {
        jobs += fmt::format(" (ends at {})", *job.expected_end);
      }
    }
    out += fmt::format("{:<16} {:>14}  {}\n", node.node, node.expected_empty_time,
                       jobs.empty() ? std::string("-") : jobs);
  }
  out += fmt::format("{} job{} stopped at the deadline, {} milli-GPU-seconds of work lost\n",
                     plan.stopped_jobs.size(), plan.stopped_jobs.size() == 1 ? "" : "s",
                     plan.lost_milli_gpu_seconds);
  return out;
}

int RunDrain(const DrainArgs& args) {
  absl::StatusOr<Snapshot> snapshot = LoadValidSnapshot(args.snapshot_path);
  if (!snapshot.ok()) {
    PrintError(snapshot.status());
    return kExitInvalidInput;
  }
  absl::StatusOr<Policy> policy = LoadPolicy(args.policy_path);
  if (!policy.ok()) {
    PrintError(policy.status());
    return kExitInvalidInput;
  }
  std::vector<std::string> nodes;
  size_t begin = 0;
  while (begin <= args.nodes.size()) {
    size_t end = args.nodes.find(',', begin);
    if (end == std::string::npos) end = args.nodes.size();
    if (end > begin) nodes.push_back(args.nodes.substr(begin, end - begin));
    begin = end + 1;
  }
  absl::StatusOr<DrainPlan> plan = PlanDrain(*snapshot, nodes, args.deadline, *policy);
  if (!plan.ok()) {
    // Nodes and the deadline are checked against the snapshot: the error names its file.
    PrintError(args.snapshot_path + ": " + std::string(plan.status().message()));
    return kExitInvalidInput;
  }
  const std::string text = args.json ? io::DrainPlanToJson(*plan) : Table(*plan);
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

// A whole number of seconds that fits in 64 bits (CLI11 would saturate a larger one).
const CLI::Validator kWholeSeconds(
    [](std::string& text) {
      int64_t value = 0;
      const char* end = text.data() + text.size();
      const auto [at, error] = std::from_chars(text.data(), end, value);
      return error == std::errc() && at == end
                 ? std::string()
                 : fmt::format("expected whole seconds that fit in 64 bits, got {}", text);
    },
    "INT64");

}  // namespace

void RegisterDrainCommand(CLI::App& app, int* exit_code) {
  CLI::App* command = app.add_subcommand(
      "drain",
      "Plan draining nodes by a deadline: when each is expected to be empty and which jobs\n"
      "must be checkpointed and stopped at the deadline (see docs/operations.md).");
  auto args = std::make_shared<DrainArgs>();
  command->add_option("SNAPSHOT", args->snapshot_path, "Snapshot JSON file")->required();
  command->add_option("--nodes", args->nodes, "Node ids, comma-separated")->required();
  command
      ->add_option("--deadline", args->deadline,
                   "Host clock time (seconds) by which the nodes must be empty")
      ->required()
      ->check(kWholeSeconds);
  command->add_option("--policy", args->policy_path,
                      "Policy JSON file, for the pricing rules (default: the built-in default)");
  command->add_flag("--json", args->json, "Print the plan as JSON instead of a table");
  command->callback([args, exit_code] { *exit_code = RunDrain(*args); });
}

}  // namespace gpupool::cli
