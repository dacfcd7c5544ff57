// The gpupool command-line tool. Each command lives in its own *_command.cc file and is added
// here by one Register...Command() call.
#include <cstdio>
#include <new>

#include "cli/commands.h"
#include "gpupool/version.h"

int main(int argc, char** argv) {
  CLI::App app("gpupool: deterministic scheduling for shared GPU pools.", "gpupool");
  app.set_version_flag("--version", gpupool::kVersion);
  app.require_subcommand(1);

  int exit_code = gpupool::cli::kExitOk;
  gpupool::cli::RegisterValidateCommand(app, &exit_code);
  gpupool::cli::RegisterScheduleCommand(app, &exit_code);
  gpupool::cli::RegisterApplyCommand(app, &exit_code);
  gpupool::cli::RegisterExplainCommand(app, &exit_code);
  gpupool::cli::RegisterSimulateCommand(app, &exit_code);
  gpupool::cli::RegisterSlurmCommand(app, &exit_code);
  gpupool::cli::RegisterMetricsCommand(app, &exit_code);
  gpupool::cli::RegisterDrainCommand(app, &exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0; anything else is a usage error.
    const int code = app.exit(e);
    return code == 0 ? gpupool::cli::kExitOk : gpupool::cli::kExitUsage;
  } catch (const std::bad_alloc&) {
    // The machine, or a ulimit, ran out of memory; no allocation below.
    std::fputs("gpupool: out of memory\n", stderr);
    return gpupool::cli::kExitOutOfMemory;
  }
  return exit_code;
}
