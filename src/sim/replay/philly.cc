// The Philly trace reader (gpupool/sim/philly.h), the civil-time conversion it needs
// (gpupool/sim/utc_time.h) and the window selection (gpupool/sim/trace_job.h).
//
// Times are converted with days-from-civil arithmetic (H. Hinnant's algorithm) rather than a
// time zone library: the trace is UTC, and the result must not depend on the machine.
#include "gpupool/sim/philly.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/sim/trace_job.h"
#include "gpupool/sim/utc_time.h"

namespace gpupool::sim {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int64_t DaysInMonth(int64_t y, int64_t m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Exactly `width` decimal digits at text[pos...].
std::optional<int64_t> Digits(std::string_view text, size_t pos, size_t width) {
  if (pos + width > text.size()) return std::nullopt;
  int64_t v = 0;
  for (size_t i = pos; i < pos + width; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::optional<int64_t> ParseInteger(std::string_view s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// A non-negative decimal "123", "123.", "123.45", rounded half up to an integer from its digits,
// so that the result does not depend on floating-point parsing.
std::optional<int64_t> ParseDecimalRounded(std::string_view s) {
  const size_t dot = s.find('.');
  std::string_view whole = s.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  if (whole.empty() && frac.empty()) return std::nullopt;
  int64_t v = 0;
  if (!whole.empty()) {
    std::optional<int64_t> w = ParseInteger(whole);
    if (!w) return std::nullopt;
    v = *w;
  }
  for (char c : frac) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  if (!frac.empty() && frac[0] >= '5') ++v;
  return v;
}

}  // namespace

absl::StatusOr<int64_t> ParseUtcTime(std::string_view text) {
  text = Trim(text);
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        fmt::format("expected \"YYYY-MM-DD HH:MM:SS\", got \"{}\" ({})", text, why));
  };
  if (text.size() != 10 && text.size() != 19) return bad("wrong length");
  if (text[4] != '-' || text[7] != '-') return bad("wrong date separators");
  std::optional<int64_t> y = Digits(text, 0, 4), mo = Digits(text, 5, 2), d = Digits(text, 8, 2);
  if (!y || !mo || !d) return bad("date fields must be digits");
  if (*y < 1970) return bad("year before 1970");
  if (*mo < 1 || *mo > 12) return bad("month out of range");
  if (*d < 1 || *d > DaysInMonth(*y, *mo)) return bad("day out of range");
  int64_t h = 0, mi = 0, s = 0;
  if (text.size() == 19) {
    if ((text[10] != ' ' && text[10] != 'T') || text[13] != ':' || text[16] != ':') {
      return bad("wrong time separators");
    }
    std::optional<int64_t> hh = Digits(text, 11, 2), mm = Digits(text, 14, 2),
                           ss = Digits(text, 17, 2);
    if (!hh || !mm || !ss) return bad("time fields must be digits");
    if (*hh > 23 || *mm > 59 || *ss > 59) return bad("time out of range");
    h = *hh;
    mi = *mm;
    s = *ss;
  }
  return DaysFromCivil(*y, *mo, *d) * 86400 + h * 3600 + mi * 60 + s;
}

std::string FormatUtcTime(int64_t seconds) {
  // civil_from_days, the inverse of DaysFromCivil.
  int64_t days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400;
  int64_t rem = seconds - days * 86400;
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp + (mp < 10 ? 3 : -9);
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", y, m, d, rem / 3600, rem / 60 % 60,
                     rem % 60);
}

absl::StatusOr<std::vector<TraceJob>> ParsePhillyCsv(std::string_view text,
                                                     std::string_view file_name) {
  std::vector<TraceJob> jobs;
  int64_t line_no = 0;
  bool header_seen = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    auto error = [&](std::string_view field, std::string_view what) {
      return absl::InvalidArgumentError(
          fmt::format("{}:{}: {}: {}", file_name, line_no, field, what));
    };
    std::vector<std::string_view> fields;
    size_t start = 0;
    while (true) {
      size_t comma = line.find(',', start);
      fields.push_back(Trim(line.substr(start, comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (!header_seen) {
      header_seen = true;
      if (fields.size() != 5 || fields[0] != "timestamp" || fields[1] != "duration" ||
          fields[2] != "num_gpus" || fields[3] != "gpu_time" || fields[4] != "cluster") {
        return error("header",
                     fmt::format("expected \"timestamp,duration,num_gpus,gpu_time,cluster\", "
                                 "got \"{}\"",
                                 line));
      }
      continue;
    }
    if (fields.size() != 5) {
      return error("row", fmt::format("expected 5 fields, got {}", fields.size()));
    }
    TraceJob job;
    job.line = line_no;
    absl::StatusOr<int64_t> t = ParseUtcTime(fields[0]);
    if (!t.ok()) return error("timestamp", std::string(t.status().message()));
    job.submit_time = *t;
    std::optional<int64_t> duration = ParseDecimalRounded(fields[1]);
    if (!duration) {
      return error("duration",
                   fmt::format("expected a non-negative number, got \"{}\"", fields[1]));
    }
    job.duration_s = *duration;
    std::optional<int64_t> gpus = ParseInteger(fields[2]);
    if (!gpus) {
      return error("num_gpus", fmt::format("expected an integer, got \"{}\"", fields[2]));
    }
    if (*gpus <= 0 || *gpus > 1'000'000) {
      return error("num_gpus", fmt::format("expected a positive count, got {}", *gpus));
    }
    job.num_gpus = static_cast<int32_t>(*gpus);
    if (!ParseDecimalRounded(fields[3])) {
      return error("gpu_time",
                   fmt::format("expected a non-negative number, got \"{}\"", fields[3]));
    }
    if (fields[4].empty()) return error("cluster", "empty");
    job.cluster = std::string(fields[4]);
    jobs.push_back(std::move(job));
  }
  if (!header_seen) {
    return absl::InvalidArgumentError(fmt::format("{}: empty file, no header", file_name));
  }
  return jobs;
}

absl::StatusOr<std::vector<TraceJob>> ReadPhillyCsv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("cannot open {}", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const size_t slash = path.find_last_of('/');
  return ParsePhillyCsv(buffer.str(), slash == std::string::npos ? path : path.substr(slash + 1));
}

std::vector<TraceJob> SelectWindow(const std::vector<TraceJob>& jobs, std::optional<int64_t> start,
                                   int64_t days) {
  if (!start) return jobs;
  const int64_t end = *start + days * 86400;
  std::vector<TraceJob> out;
  for (const TraceJob& job : jobs) {
    if (job.submit_time >= *start && job.submit_time < end) out.push_back(job);
  }
  return out;
}

}  // namespace gpupool::sim
