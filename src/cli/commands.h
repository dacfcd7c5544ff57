// The commands of the `gpupool` tool, one registration function per command.
//
// To add a command `foo`: declare RegisterFooCommand() here, define it in foo_command.cc (picked
// up by src/cli/CMakeLists.txt), and add one line to main.cc.
#ifndef GPUPOOL_SRC_CLI_COMMANDS_H_
#define GPUPOOL_SRC_CLI_COMMANDS_H_

#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "gpupool/snapshot.h"

namespace gpupool::cli {

// Exit codes of every command.
inline constexpr int kExitOk = 0;
// The input was read but is invalid (or cannot be read); one line on stderr, nothing on stdout.
inline constexpr int kExitInvalidInput = 1;
// Bad flags or arguments (CLI11 prints the reason and a pointer to --help).
inline constexpr int kExitUsage = 2;
// Memory ran out (the machine, or a ulimit); "gpupool: out of memory" on stderr.
inline constexpr int kExitOutOfMemory = 3;

// Each function adds one subcommand to `app`. When that subcommand runs (during app.parse()),
// it stores its exit code in *exit_code, which must outlive `app`.
void RegisterValidateCommand(CLI::App& app, int* exit_code);
void RegisterScheduleCommand(CLI::App& app, int* exit_code);
void RegisterExplainCommand(CLI::App& app, int* exit_code);
void RegisterSimulateCommand(CLI::App& app, int* exit_code);
void RegisterSlurmCommand(CLI::App& app, int* exit_code);
void RegisterMetricsCommand(CLI::App& app, int* exit_code);
void RegisterDrainCommand(CLI::App& app, int* exit_code);
void RegisterApplyCommand(CLI::App& app, int* exit_code);

// Helpers shared by the commands (common.cc).

// Prints "gpupool: <message>" on one line of stderr (newlines in `message` become spaces).
void PrintError(const std::string& message);
// Writes `text` to `path` ("-" or empty: stdout). Returns false on any I/O error.
bool WriteOutput(const std::string& path, const std::string& text);

// Prints the status's message the same way.
void PrintError(const absl::Status& status);

// Reads and validates (ValidateSnapshot) the snapshot file; errors name the file.
absl::StatusOr<Snapshot> LoadValidSnapshot(const std::string& path);

// Reads the policy file, or returns the default Policy when `path` is empty.
absl::StatusOr<Policy> LoadPolicy(const std::string& path);

// A snapshot file scheduled under a policy file: what `schedule` and `explain` both start from.
struct ScheduledSnapshot {
  Snapshot snapshot;
  Decisions decisions;
};
// Loads both files and runs Schedule(); every error names the file it comes from.
absl::StatusOr<ScheduledSnapshot> LoadAndSchedule(const std::string& snapshot_path,
                                                  const std::string& policy_path);

}  // namespace gpupool::cli

#endif  // GPUPOOL_SRC_CLI_COMMANDS_H_
