// gpupool validate FILE: reads a snapshot, checks it, and prints a one-line summary.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "fmt/format.h"

namespace gpupool::cli {
namespace {

// "1 node", "3 nodes".
std::string Count(int64_t n, std::string_view singular, std::string_view plural) {
  return fmt::format("{} {}", n, n == 1 ? singular : plural);
}

int RunValidate(const std::string& path) {
  absl::StatusOr<Snapshot> snapshot = LoadValidSnapshot(path);
  if (!snapshot.ok()) {
    PrintError(snapshot.status());
    return kExitInvalidInput;
  }
  int64_t gpus = 0;
  for (const Node& node : snapshot->nodes) gpus += static_cast<int64_t>(node.gpus.size());
  int64_t running = 0;
  for (const Job& job : snapshot->jobs) running += job.state == JobState::kRunning ? 1 : 0;
  const int64_t jobs = static_cast<int64_t>(snapshot->jobs.size());
  const auto size = [](const auto& list) { return static_cast<int64_t>(list.size()); };
  fmt::print("{}: ok: {} ({}), {}, {}, {} ({} pending, {} running)\n", path,
             Count(size(snapshot->nodes), "node", "nodes"), Count(gpus, "GPU", "GPUs"),
             Count(size(snapshot->gpu_models), "GPU model", "GPU models"),
             Count(size(snapshot->queues), "queue", "queues"), Count(jobs, "job", "jobs"),
             jobs - running, running);
  return kExitOk;
}

}  // namespace

void RegisterValidateCommand(CLI::App& app, int* exit_code) {
  CLI::App* command = app.add_subcommand(
      "validate",
      "Check that a snapshot file is well-formed and consistent; print a summary.\n"
      "Exit 0 if valid, 1 (with the reason on stderr) if not.");
  auto path = std::make_shared<std::string>();
  command->add_option("FILE", *path, "Snapshot JSON file (see docs/snapshot-format.md)")
      ->required();
  command->callback([path, exit_code] { *exit_code = RunValidate(*path); });
}

}  // namespace gpupool::cli
