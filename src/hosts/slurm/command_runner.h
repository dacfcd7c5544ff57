// How the Slurm adapter talks to Slurm: by running its client commands (sinfo, squeue, scontrol,
// scancel). The runner is an interface so that the adapter's reading and writing can be tested
// with recorded command outputs, and so that a host may route the commands elsewhere (ssh, a
// container, a different SLURM_CONF).
#ifndef GPUPOOL_SRC_HOSTS_SLURM_COMMAND_RUNNER_H_
#define GPUPOOL_SRC_HOSTS_SLURM_COMMAND_RUNNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpupool::slurm {

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;

  // Runs the program argv[0] (looked up on PATH) with the arguments argv[1..], without a shell,
  // and returns what it wrote on stdout. A program that cannot be started, is killed by a signal
  // or exits with a non-zero status gives an error (Unavailable when it cannot be started,
  // Internal otherwise) whose message holds the command line and the program's stderr.
  virtual absl::StatusOr<std::string> Run(const std::vector<std::string>& argv) = 0;

  // Waits `seconds` (the grace a checkpointing job gets between its signal and its requeue).
  virtual void Sleep(int64_t seconds) = 0;
};

// Runs the commands as child processes of this one (fork + execvp), with the caller's
// environment (SLURM_CONF among it). Thread-compatible; holds no state.
class SubprocessRunner : public CommandRunner {
 public:
  absl::StatusOr<std::string> Run(const std::vector<std::string>& argv) override;
  void Sleep(int64_t seconds) override;
};

// "scontrol update JobId=7 'Comment=a b'": argv as one line, arguments with spaces or quotes in
// single quotes, for logs and error messages.
std::string CommandLine(const std::vector<std::string>& argv);

}  // namespace gpupool::slurm

#endif  // GPUPOOL_SRC_HOSTS_SLURM_COMMAND_RUNNER_H_
