// A CommandRunner that answers from recorded outputs and records what it was asked to run, for
// the adapter's unit tests.
#ifndef GPUPOOL_TESTS_SLURM_FAKE_RUNNER_H_
#define GPUPOOL_TESTS_SLURM_FAKE_RUNNER_H_

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hosts/slurm/command_runner.h"

namespace gpupool::slurm::testing {

// The text of tests/slurm/data/<name>.
inline std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(GPUPOOL_SOURCE_DIR) + "/tests/slurm/data/" + name, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class FakeRunner : public CommandRunner {
 public:
  // What `command_line` (as CommandLine() writes it) returns. Commands without an answer
  // succeed with empty output (scontrol update, release, ...).
  void Answer(const std::string& command_line, absl::StatusOr<std::string> output) {
    answers_.insert_or_assign(command_line, std::move(output));
  }
  // Answers the four reading commands with tests/slurm/data/<prefix>.{sinfo.json,squeue.json,
  // partition.txt,topology.txt}.
  void AnswerState(const std::string& prefix) {
    Answer("sinfo --json", ReadFixture(prefix + ".sinfo.json"));
    Answer("squeue --json", ReadFixture(prefix + ".squeue.json"));
    Answer("scontrol -o show partition", ReadFixture(prefix + ".partition.txt"));
    Answer("scontrol show topology", ReadFixture(prefix + ".topology.txt"));
  }

  absl::StatusOr<std::string> Run(const std::vector<std::string>& argv) override {
    const std::string line = CommandLine(argv);
    ran_.push_back(line);
    const auto it = answers_.find(line);
    if (it == answers_.end()) return std::string();
    return it->second;
  }
  void Sleep(int64_t seconds) override {
    ran_.push_back("(sleep " + std::to_string(seconds) + ")");
  }

  // Every command run and every sleep, in order.
  const std::vector<std::string>& ran() const { return ran_; }
  // The same without the four reading commands.
  std::vector<std::string> Changes() const {
    std::vector<std::string> changes;
    for (const std::string& line : ran_) {
      if (line == "sinfo --json" || line == "squeue --json" ||
          line == "scontrol -o show partition" || line == "scontrol show topology") {
        continue;
      }
      changes.push_back(line);
    }
    return changes;
  }

 private:
  std::map<std::string, absl::StatusOr<std::string>> answers_;
  std::vector<std::string> ran_;
};

}  // namespace gpupool::slurm::testing

#endif  // GPUPOOL_TESTS_SLURM_FAKE_RUNNER_H_
