// gpupool slurm (--once | --interval SECONDS) [--policy FILE] [--partition NAME[,NAME]]
//               [--queue-by account|qos] [--dry-run] [--snapshot-out FILE]
// drives a Slurm cluster: each cycle reads Slurm through its client commands, schedules the held
// jobs of the managed partition(s) and applies the decisions (docs/slurm.md). The decisions of
// each cycle are printed as JSON on stdout; the commands run, notes and errors on stderr.
#include <signal.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "gpupool/io/json.h"
#include "hosts/slurm/command_runner.h"
#include "hosts/slurm/cycle.h"

namespace gpupool::cli {
namespace {

volatile sig_atomic_t g_stop = 0;

void OnStopSignal(int) { g_stop = 1; }

// SIGINT and SIGTERM end the loop after the cycle under way (no SA_RESTART: sleeps end early).
void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// Sleeps `seconds`, waking early when a stop signal arrives.
void SleepUnlessStopped(int64_t seconds) {
  for (int64_t tenths = seconds * 10; tenths > 0 && !g_stop; --tenths) {
    timespec step{0, 100'000'000};
    nanosleep(&step, nullptr);
  }
}

struct SlurmArgs {
  bool once = false;
  int64_t interval_s = 0;
  std::string policy_path;
  std::string partitions = "gpupool";
  std::string queue_by = "account";
  bool dry_run = false;
  std::string snapshot_out;
};

void Log(const std::string& line) {
  std::fprintf(stderr, "gpupool slurm: %s\n", line.c_str());
  std::fflush(stderr);
}

// One cycle; returns false when it failed (cannot read Slurm, or a command failed).
bool RunOneCycle(const SlurmArgs& args, const slurm::AdapterOptions& options, const Policy& policy,
                 slurm::CommandRunner& runner) {
  const int64_t now = static_cast<int64_t>(::time(nullptr));
  absl::StatusOr<slurm::CycleResult> cycle =
      slurm::RunCycle(runner, options, policy, now, args.dry_run);
  if (!cycle.ok()) {
    PrintError(cycle.status());
    return false;
  }
  for (const std::string& note : cycle->built.notes) Log("note: " + note);
  const std::string prefix = args.dry_run ? "would run: " : "ran: ";
  for (const std::vector<std::string>& argv : cycle->report.commands) {
    Log(prefix + slurm::CommandLine(argv));
  }
  for (const std::string& line : cycle->report.not_applied) Log("not applied: " + line);
  for (const std::string& line : cycle->report.errors) Log("error: " + line);
  const std::string json = io::DecisionsToJson(cycle->decisions);
  std::fwrite(json.data(), 1, json.size(), stdout);
  std::fflush(stdout);
  if (!args.snapshot_out.empty()) {
    const std::string snapshot = io::SnapshotToJson(cycle->built.snapshot);
    std::FILE* file = std::fopen(args.snapshot_out.c_str(), "wb");
    const bool written = file != nullptr &&
                         std::fwrite(snapshot.data(), 1, snapshot.size(), file) == snapshot.size();
    if (file == nullptr || std::fclose(file) != 0 || !written) {
      PrintError(args.snapshot_out + ": cannot write file");
      return false;
    }
  }
  return cycle->report.errors.empty();
}

int RunSlurm(const SlurmArgs& args) {
  absl::StatusOr<Policy> policy = LoadPolicy(args.policy_path);
  if (!policy.ok()) {
    PrintError(policy.status());
    return kExitInvalidInput;
  }
  slurm::AdapterOptions options;
  options.partitions = absl::StrSplit(args.partitions, ',', absl::SkipEmpty());
  options.queue_by = args.queue_by == "qos" ? slurm::QueueBy::kQos : slurm::QueueBy::kAccount;
  // A --snapshot-out that cannot be written fails before Slurm is read or changed (opened for
  // appending: an existing file is kept until the cycle writes it).
  if (!args.snapshot_out.empty()) {
    std::FILE* file = std::fopen(args.snapshot_out.c_str(), "ab");
    if (file == nullptr || std::fclose(file) != 0) {
      PrintError(args.snapshot_out + ": cannot write file");
      return kExitInvalidInput;
    }
  }
  slurm::SubprocessRunner runner;
  if (args.once) {
    return RunOneCycle(args, options, *policy, runner) ? kExitOk : kExitInvalidInput;
  }
  InstallStopHandlers();
  while (!g_stop) {
    RunOneCycle(args, options, *policy, runner);
    SleepUnlessStopped(args.interval_s);
  }
  Log("stopped");
  return kExitOk;
}

}  // namespace

void RegisterSlurmCommand(CLI::App& app, int* exit_code) {
  CLI::App* command = app.add_subcommand(
      "slurm",
      "Schedule the held jobs of a Slurm partition and apply the decisions (docs/slurm.md).\n"
      "Prints each cycle's decisions as JSON; the Slurm commands run go to stderr.");
  auto args = std::make_shared<SlurmArgs>();
  CLI::Option* once = command->add_flag("--once", args->once, "Run one cycle and exit");
  CLI::Option* interval = command
                              ->add_option("--interval", args->interval_s,
                                           "Run a cycle every SECONDS until SIGINT or SIGTERM")
                              ->check(CLI::Range(int64_t{1}, int64_t{86400}));
  once->excludes(interval);
  command->add_option("--policy", args->policy_path,
                      "Policy JSON file (default: the built-in default policy)");
  command
      ->add_option("--partition", args->partitions,
                   "Managed partition(s), comma-separated (default: gpupool)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const std::vector<std::string> names = absl::StrSplit(text, ',', absl::SkipEmpty());
            return names.empty() ? "names no partition" : "";
          },
          "NAME[,NAME]"));
  command
      ->add_option("--queue-by", args->queue_by,
                   "Leaf queue under each partition: the job's account or its qos")
      ->check(CLI::IsMember({"account", "qos"}));
  command->add_flag("--dry-run", args->dry_run,
                    "Change nothing in Slurm; print the commands that would run");
  command->add_option("--snapshot-out", args->snapshot_out,
                      "Also write the snapshot built from Slurm to this file (JSON)");
  command->callback([args, exit_code, command] {
    if (!args->once && args->interval_s == 0) {
      std::fprintf(stderr, "gpupool slurm: give --once or --interval SECONDS\n%s",
                   command->help().c_str());
      *exit_code = kExitUsage;
      return;
    }
    *exit_code = RunSlurm(*args);
  });
}

}  // namespace gpupool::cli
