// Readers: the openb CSV files and gpupool's own trace format.
//
// Errors name the file (its base name), the line (1-based, the header is line 1) and the column:
//   openb_pod_list_default.csv:17: num_gpu: expected an integer, got "x"
#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "gpupool/sim/workload.h"
#include "sim/inflation/internal.h"

namespace gpupool::sim {

namespace {

std::vector<std::string_view> Split(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t end = line.find(sep, start);
    if (end == std::string_view::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, end - start));
    start = end + 1;
  }
}

// Iterates the lines of a text, dropping the '\r's that end a line (CRLF, or stray CRs before the
// '\n', which would otherwise end the last field and not survive WriteTrace; found by fuzzing).
class Lines {
 public:
  explicit Lines(std::string_view text) : text_(text) {}
  bool Next(std::string_view* line) {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    *line = text_.substr(pos_, end - pos_);
    while (!line->empty() && line->back() == '\r') line->remove_suffix(1);
    pos_ = end + 1;
    ++number_;
    return true;
  }
  int number() const { return number_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int number_ = 0;
};

class RowError {
 public:
  RowError(std::string_view file, int line) : file_(file), line_(line) {}
  absl::Status Bad(std::string_view column, std::string_view expected, std::string_view got) const {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: {}: expected {}, got \"{}\"", file_, line_, column, expected, got));
  }
  absl::Status Message(std::string_view message) const {
    return absl::InvalidArgumentError(fmt::format("{}:{}: {}", file_, line_, message));
  }

 private:
  std::string_view file_;
  int line_;
};

// A non-negative integer no larger than kMaxQuantity.
absl::Status ParseCount(std::string_view field, std::string_view column, const RowError& err,
                        int64_t* out) {
  int64_t v = 0;
  const char* end = field.data() + field.size();
  auto [p, ec] = std::from_chars(field.data(), end, v);
  if (field.empty() || ec != std::errc() || p != end) {
    return err.Bad(column, "an integer", field);
  }
  if (v < 0 || v > kMaxQuantity) return err.Bad(column, "a non-negative integer", field);
  *out = v;
  return absl::OkStatus();
}

// An optional integer (empty allowed); used for the trace's times.
absl::Status ParseOptional(std::string_view field, std::string_view column, const RowError& err,
                           std::optional<int64_t>* out) {
  if (field.empty()) {
    out->reset();
    return absl::OkStatus();
  }
  int64_t v = 0;
  absl::Status s = ParseCount(field, column, err, &v);
  if (!s.ok()) return s;
  *out = v;
  return absl::OkStatus();
}

std::vector<std::string> SplitModels(std::string_view field) {
  std::vector<std::string> models;
  if (field.empty()) return models;
  for (std::string_view m : Split(field, '|')) {
    if (!m.empty()) models.emplace_back(m);
  }
  return models;
}

absl::Status CheckHeader(std::string_view line, std::string_view expected, std::string_view file) {
  if (line != expected) {
    return absl::InvalidArgumentError(
        fmt::format("{}:1: header: expected \"{}\", got \"{}\"", file, expected, line));
  }
  return absl::OkStatus();
}

// The GPU request of a pod from num_gpu and the per-GPU gpu_milli.
absl::Status GpuRequest(int64_t num_gpu, int64_t gpu_milli, const RowError& err, int64_t* request) {
  if (num_gpu == 0) {
    if (gpu_milli != 0) return err.Message("gpu_milli: must be 0 when num_gpu is 0");
    *request = 0;
    return absl::OkStatus();
  }
  if (gpu_milli <= 0 || gpu_milli > kMilliPerGpu) {
    return err.Bad("gpu_milli", "a per-GPU share in 1..1000", std::to_string(gpu_milli));
  }
  if (num_gpu > 1 && gpu_milli != kMilliPerGpu) {
    return err.Message("gpu_milli: a pod of several GPUs must take whole GPUs (1000)");
  }
  *request = num_gpu == 1 ? gpu_milli : num_gpu * kMilliPerGpu;
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("cannot read {}", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

absl::StatusOr<Cluster> ParseOpenbNodes(std::string_view text, std::string_view file) {
  Lines lines(text);
  std::string_view line;
  if (!lines.Next(&line)) {
    return absl::InvalidArgumentError(fmt::format("{}:1: empty file", file));
  }
  if (absl::Status s = CheckHeader(line, "sn,cpu_milli,memory_mib,gpu,model", file); !s.ok()) {
    return s;
  }
  Cluster cluster;
  while (lines.Next(&line)) {
    if (line.empty()) continue;
    const RowError err(file, lines.number());
    std::vector<std::string_view> f = Split(line, ',');
    if (f.size() != 5) {
      return err.Message(fmt::format("expected 5 columns, got {}", f.size()));
    }
    SimNode n;
    if (f[0].empty()) return err.Bad("sn", "a node name", f[0]);
    n.id = std::string(f[0]);
    int64_t gpus = 0;
    absl::Status s = ParseCount(f[1], "cpu_milli", err, &n.cpu_milli);
    if (s.ok()) s = ParseCount(f[2], "memory_mib", err, &n.memory_mib);
    if (s.ok()) s = ParseCount(f[3], "gpu", err, &gpus);
    if (!s.ok()) return s;
    if (gpus > 1024) return err.Bad("gpu", "at most 1024 GPUs", f[3]);
    n.gpu_count = static_cast<int32_t>(gpus);
    n.gpu_model = std::string(f[4]);
    if (gpus > 0 && n.gpu_model.empty()) return err.Bad("model", "a GPU model", f[4]);
    cluster.nodes.push_back(std::move(n));
  }
  return cluster;
}

absl::StatusOr<Workload> ParseOpenbPods(std::string_view text, std::string_view file) {
  Lines lines(text);
  std::string_view line;
  if (!lines.Next(&line)) {
    return absl::InvalidArgumentError(fmt::format("{}:1: empty file", file));
  }
  // Columns by name: some published lists (multigpu*) carry only the first five.
  std::vector<std::string_view> header = Split(line, ',');
  auto column = [&](std::string_view name) -> int {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    return -1;
  };
  const int c_name = column("name"), c_cpu = column("cpu_milli"), c_mem = column("memory_mib"),
            c_num = column("num_gpu"), c_milli = column("gpu_milli"), c_spec = column("gpu_spec"),
            c_created = column("creation_time");
  for (auto [c, name] : {std::pair{c_name, "name"},
                         {c_cpu, "cpu_milli"},
                         {c_mem, "memory_mib"},
                         {c_num, "num_gpu"},
                         {c_milli, "gpu_milli"}}) {
    if (c < 0) {
      return absl::InvalidArgumentError(
          fmt::format("{}:1: header: missing column \"{}\"", file, name));
    }
  }
  Workload workload;
  while (lines.Next(&line)) {
    if (line.empty()) continue;
    const RowError err(file, lines.number());
    std::vector<std::string_view> f = Split(line, ',');
    if (f.size() != header.size()) {
      return err.Message(fmt::format("expected {} columns, got {}", header.size(), f.size()));
    }
    SimPod p;
    if (f[c_name].empty()) return err.Bad("name", "a pod name", f[c_name]);
    p.id = std::string(f[c_name]);
    int64_t num_gpu = 0;
    int64_t gpu_milli = 0;
    absl::Status s = ParseCount(f[c_cpu], "cpu_milli", err, &p.request.cpu_milli);
    if (s.ok()) s = ParseCount(f[c_mem], "memory_mib", err, &p.request.memory_mib);
    if (s.ok()) s = ParseCount(f[c_num], "num_gpu", err, &num_gpu);
    if (s.ok()) s = ParseCount(f[c_milli], "gpu_milli", err, &gpu_milli);
    if (s.ok()) s = GpuRequest(num_gpu, gpu_milli, err, &p.request.gpu_milli);
    if (!s.ok()) return s;
    if (c_spec >= 0) p.gpu_models = SplitModels(f[c_spec]);
    if (c_created >= 0) {
      std::optional<int64_t> creation;
      if (absl::Status t = ParseOptional(f[c_created], "creation_time", err, &creation); !t.ok()) {
        return t;
      }
      p.arrival_s = creation.value_or(0);
    }
    workload.pods.push_back(std::move(p));
  }
  return workload;
}

absl::StatusOr<Cluster> ReadOpenbNodes(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseOpenbNodes(*text, internal::BaseName(path));
}

absl::StatusOr<Workload> ReadOpenbPods(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseOpenbPods(*text, internal::BaseName(path));
}

absl::StatusOr<Trace> ParseTrace(std::string_view text, std::string_view file) {
  Lines lines(text);
  std::string_view line;
  bool header = false;
  Trace trace;
  std::set<std::string> node_ids, pod_ids;
  while (lines.Next(&line)) {
    if (line.empty() || line[0] == '#') continue;
    const RowError err(file, lines.number());
    // Control characters (a CR inside a line, say) would not survive WriteTrace and a second
    // read, so the format refuses them.
    if (std::any_of(line.begin(), line.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\t'; })) {
      return err.Message("control character in the line (only tab is allowed)");
    }
    std::vector<std::string_view> f = Split(line, ',');
    if (!header) {
      if (f.size() != 2 || f[0] != "gpupool-trace") {
        return err.Bad("header", "\"gpupool-trace,1\"", line);
      }
      if (f[1] != "1") return err.Bad("version", "1", f[1]);
      header = true;
      continue;
    }
    if (f[0] == "node") {
      if (f.size() != 6)
        return err.Message(fmt::format("node: expected 6 fields, got {}", f.size()));
      SimNode n;
      if (f[1].empty()) return err.Bad("id", "a node id", f[1]);
      n.id = std::string(f[1]);
      if (!node_ids.insert(n.id).second) return err.Bad("id", "a node id not used before", f[1]);
      n.gpu_model = std::string(f[2]);
      int64_t gpus = 0;
      absl::Status s = ParseCount(f[3], "gpus", err, &gpus);
      if (s.ok()) s = ParseCount(f[4], "cpu_milli", err, &n.cpu_milli);
      if (s.ok()) s = ParseCount(f[5], "memory_mib", err, &n.memory_mib);
      if (!s.ok()) return s;
      if (gpus > 1024) return err.Bad("gpus", "at most 1024 GPUs", f[3]);
      if (gpus > 0 && n.gpu_model.empty()) return err.Bad("model", "a GPU model", f[2]);
      n.gpu_count = static_cast<int32_t>(gpus);
      trace.cluster.nodes.push_back(std::move(n));
    } else if (f[0] == "pod") {
      if (f.size() != 8)
        return err.Message(fmt::format("pod: expected 8 fields, got {}", f.size()));
      SimPod p;
      if (f[1].empty()) return err.Bad("id", "a pod id", f[1]);
      p.id = std::string(f[1]);
      if (!pod_ids.insert(p.id).second) return err.Bad("id", "a pod id not used before", f[1]);
      std::optional<int64_t> arrival;
      absl::Status s = ParseOptional(f[2], "arrival_s", err, &arrival);
      if (s.ok()) s = ParseOptional(f[3], "duration_s", err, &p.duration_s);
      if (s.ok()) s = ParseCount(f[4], "gpu_milli", err, &p.request.gpu_milli);
      if (s.ok()) s = ParseCount(f[5], "cpu_milli", err, &p.request.cpu_milli);
      if (s.ok()) s = ParseCount(f[6], "memory_mib", err, &p.request.memory_mib);
      if (!s.ok()) return s;
      if (p.request.gpu_milli > kMilliPerGpu && p.request.gpu_milli % kMilliPerGpu != 0) {
        return err.Bad("gpu_milli", "below 1000 or whole GPUs", f[4]);
      }
      p.arrival_s = arrival.value_or(0);
      p.gpu_models = SplitModels(f[7]);
      trace.workload.pods.push_back(std::move(p));
    } else {
      return err.Bad("record", "\"node\" or \"pod\"", f[0]);
    }
  }
  if (!header) {
    return absl::InvalidArgumentError(fmt::format("{}: missing header \"gpupool-trace,1\"", file));
  }
  return trace;
}

absl::StatusOr<Trace> ReadTrace(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseTrace(*text, internal::BaseName(path));
}

std::string WriteTrace(const Trace& trace) {
  std::string out = "gpupool-trace,1\n";
  for (const SimNode& n : trace.cluster.nodes) {
    out += fmt::format("node,{},{},{},{},{}\n", n.id, n.gpu_model, n.gpu_count, n.cpu_milli,
                       n.memory_mib);
  }
  for (const SimPod& p : trace.workload.pods) {
    std::string models;
    for (const std::string& m : p.gpu_models) {
      if (!models.empty()) models += '|';
      models += m;
    }
    out += fmt::format("pod,{},{},{},{},{},{},{}\n", p.id, p.arrival_s,
                       p.duration_s.has_value() ? std::to_string(*p.duration_s) : "",
                       p.request.gpu_milli, p.request.cpu_milli, p.request.memory_mib, models);
  }
  return out;
}

int64_t Cluster::TotalGpuMilli() const {
  int64_t total = 0;
  for (const SimNode& n : nodes) total += int64_t{n.gpu_count} * kMilliPerGpu;
  return total;
}

int64_t Workload::TotalGpuMilli() const {
  int64_t total = 0;
  for (const SimPod& p : pods) total += p.request.gpu_milli;
  return total;
}

}  // namespace gpupool::sim
