// A job of a time-based trace: the input of the job-level replay (gpupool/sim/replay.h), read
// from the Philly trace by gpupool/sim/philly.h or built by the caller.
#ifndef GPUPOOL_SIM_TRACE_JOB_H_
#define GPUPOOL_SIM_TRACE_JOB_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpupool::sim {

// One job of a time-based trace.
struct TraceJob {
  // Submit time, seconds since 1970-01-01 00:00:00 UTC.
  int64_t submit_time = 0;
  // Seconds of work the job needs once it runs (the trace's duration, rounded half up).
  int64_t duration_s = 0;
  int32_t num_gpus = 0;
  // Tenant: the virtual cluster, one queue of the replay.
  std::string cluster;
  // 1-based line of the file the job came from (0 when not read from a file).
  int64_t line = 0;
};

// The jobs submitted in [start, start + days x 86400), in their input order. Without `start`,
// all jobs (days ignored). Linear; copies the jobs it keeps.
std::vector<TraceJob> SelectWindow(const std::vector<TraceJob>& jobs, std::optional<int64_t> start,
                                   int64_t days);

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_TRACE_JOB_H_
