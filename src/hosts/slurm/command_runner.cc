#include "hosts/slurm/command_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpupool::slurm {
namespace {

// Reads both pipes until both are closed; poll() so that a child filling one pipe while we wait
// on the other cannot deadlock.
void DrainPipes(int out_fd, int err_fd, std::string* out, std::string* err) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {out, err};
  int open_count = 2;
  char buffer[65536];
  while (open_count > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text;
}

}  // namespace

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) {
    if (!line.empty()) line += ' ';
    const bool plain =
        !arg.empty() && arg.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
    if (plain) {
      line += arg;
      continue;
    }
    line += '\'';
    for (char c : arg) {
      if (c == '\'') {
        line += "'\\''";
      } else {
        line += c;
      }
    }
    line += '\'';
  }
  return line;
}

absl::StatusOr<std::string> SubprocessRunner::Run(const std::vector<std::string>& argv) {
  if (argv.empty()) return absl::InvalidArgumentError("empty command");
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    return absl::UnavailableError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return absl::UnavailableError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  // The exec failure is reported through a third pipe, so that "not installed" is told apart
  // from a command that ran and failed.
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return absl::UnavailableError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::vector<char*> c_argv;
  c_argv.reserve(argv.size() + 1);
  for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd :
         {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], exec_pipe[0], exec_pipe[1]}) {
      close(fd);
    }
    return absl::UnavailableError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on.
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execvp(c_argv[0], c_argv.data());
    const int error = errno;
    (void)!write(exec_pipe[1], &error, sizeof(error));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  std::string out;
  std::string err;
  DrainPipes(out_pipe[0], err_pipe[0], &out, &err);
  int exec_error = 0;
  ssize_t got;
  do {
    got = read(exec_pipe[0], &exec_error, sizeof(exec_error));
  } while (got < 0 && errno == EINTR);
  close(exec_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string line = CommandLine(argv);
  if (got == static_cast<ssize_t>(sizeof(exec_error))) {
    return absl::UnavailableError(
        absl::StrCat(line, ": cannot run ", argv[0], ": ", std::strerror(exec_error)));
  }
  if (WIFSIGNALED(status)) {
    return absl::InternalError(
        absl::StrCat(line, ": killed by signal ", WTERMSIG(status), ": ", Trimmed(err)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat(line, ": exit status ", WEXITSTATUS(status), ": ", Trimmed(err)));
  }
  return out;
}

void SubprocessRunner::Sleep(int64_t seconds) {
  timespec left{static_cast<time_t>(seconds), 0};
  while (left.tv_sec > 0 || left.tv_nsec > 0) {
    timespec rest{};
    if (nanosleep(&left, &rest) == 0) break;
    if (errno != EINTR) break;
    left = rest;
  }
}

}  // namespace gpupool::slurm
