#include <cstdio>
#include <string>
#include <utility>

#include "cli/commands.h"
#include "gpupool/io/json.h"
#include "gpupool/schedule.h"

namespace gpupool::cli {

void PrintError(const std::string& message) {
  std::string line = message;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "gpupool: %s\n", line.c_str());
}

// Writes `text` to `path` ("-" or empty: stdout). Returns false on any I/O error.
bool WriteOutput(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() &&
           std::fflush(stdout) == 0;
  }
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return false;
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  return std::fclose(file) == 0 && written;
}

void PrintError(const absl::Status& status) { PrintError(std::string(status.message())); }

namespace {

// `status` with its message prefixed by the file it is about.
absl::Status NamingFile(const std::string& path, const absl::Status& status) {
  return absl::Status(status.code(), path + ": " + std::string(status.message()));
}

}  // namespace

absl::StatusOr<Snapshot> LoadValidSnapshot(const std::string& path) {
  absl::StatusOr<Snapshot> snapshot = io::ReadSnapshotFile(path);
  if (!snapshot.ok()) return snapshot.status();  // Already names the file.
  if (absl::Status valid = ValidateSnapshot(*snapshot); !valid.ok()) return NamingFile(path, valid);
  return snapshot;
}

absl::StatusOr<Policy> LoadPolicy(const std::string& path) {
  if (path.empty()) return Policy();
  absl::StatusOr<Policy> policy = io::ReadPolicyFile(path);
  if (!policy.ok()) return policy.status();  // Already names the file.
  // Checked here, not only by Schedule(), so that the error names the policy's file.
  if (absl::Status valid = ValidatePolicy(*policy); !valid.ok()) return NamingFile(path, valid);
  return policy;
}

absl::StatusOr<ScheduledSnapshot> LoadAndSchedule(const std::string& snapshot_path,
                                                  const std::string& policy_path) {
  absl::StatusOr<Snapshot> snapshot = LoadValidSnapshot(snapshot_path);
  if (!snapshot.ok()) return snapshot.status();
  absl::StatusOr<Policy> policy = LoadPolicy(policy_path);
  if (!policy.ok()) return policy.status();
  absl::StatusOr<Decisions> decisions = Schedule(*snapshot, *policy);
  if (!decisions.ok()) return NamingFile(snapshot_path, decisions.status());
  return ScheduledSnapshot{std::move(*snapshot), std::move(*decisions)};
}

}  // namespace gpupool::cli
