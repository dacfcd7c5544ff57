#include "hosts/slurm/slurm_state.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "hosts/slurm/slurm_text.h"
#include "simdjson.h"

namespace gpupool::slurm {
namespace {

using simdjson::dom::element;

// Typed access to the fields of one JSON object, with errors that name the command, the list
// element and the field.
class Fields {
 public:
  Fields(element object, std::string where) : object_(object), where_(std::move(where)) {}

  absl::Status Error(std::string_view field, std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(where_, ".", absl::string_view(field.data(), field.size()), ": ",
                     absl::string_view(what.data(), what.size())));
  }

  // A required string.
  absl::Status String(std::string_view field, std::string* out) const {
    element value;
    if (object_[field].get(value) != simdjson::SUCCESS) return Error(field, "missing");
    std::string_view text;
    if (value.get(text) != simdjson::SUCCESS) return Error(field, "expected a string");
    *out = std::string(text);
    return absl::OkStatus();
  }

  // A string that may be missing or null (then empty).
  absl::Status OptionalString(std::string_view field, std::string* out) const {
    element value;
    if (object_[field].get(value) != simdjson::SUCCESS || value.is_null()) {
      out->clear();
      return absl::OkStatus();
    }
    std::string_view text;
    if (value.get(text) != simdjson::SUCCESS) return Error(field, "expected a string");
    *out = std::string(text);
    return absl::OkStatus();
  }

  // An integer that may be missing or null (then unset). Slurm writes its "infinite" and "not
  // set" markers (NO_VAL, INFINITE) as large unsigned values: those are unset too.
  absl::Status OptionalInt(std::string_view field, std::optional<int64_t>* out) const {
    out->reset();
    element value;
    if (object_[field].get(value) != simdjson::SUCCESS || value.is_null()) {
      return absl::OkStatus();
    }
    int64_t number = 0;
    if (value.get(number) == simdjson::SUCCESS) {
      *out = number;
      return absl::OkStatus();
    }
    uint64_t unsigned_number = 0;
    if (value.get(unsigned_number) == simdjson::SUCCESS) return absl::OkStatus();
    return Error(field, "expected an integer");
  }

  // A required integer.
  absl::Status Int(std::string_view field, int64_t* out) const {
    std::optional<int64_t> value;
    if (absl::Status status = OptionalInt(field, &value); !status.ok()) return status;
    if (!value.has_value()) return Error(field, "expected an integer");
    *out = *value;
    return absl::OkStatus();
  }

  // An integer that may be missing or null (then `fallback`).
  absl::Status IntOr(std::string_view field, int64_t fallback, int64_t* out) const {
    std::optional<int64_t> value;
    if (absl::Status status = OptionalInt(field, &value); !status.ok()) return status;
    *out = value.value_or(fallback);
    return absl::OkStatus();
  }

  absl::Status BoolOr(std::string_view field, bool fallback, bool* out) const {
    element value;
    if (object_[field].get(value) != simdjson::SUCCESS || value.is_null()) {
      *out = fallback;
      return absl::OkStatus();
    }
    if (value.get(*out) != simdjson::SUCCESS) return Error(field, "expected true or false");
    return absl::OkStatus();
  }

  // An array of strings that may be missing or null (then empty).
  absl::Status Strings(std::string_view field, std::vector<std::string>* out) const {
    out->clear();
    element value;
    if (object_[field].get(value) != simdjson::SUCCESS || value.is_null()) {
      return absl::OkStatus();
    }
    simdjson::dom::array array;
    if (value.get(array) != simdjson::SUCCESS) return Error(field, "expected an array");
    for (element item : array) {
      std::string_view text;
      if (item.get(text) != simdjson::SUCCESS) return Error(field, "expected strings");
      out->emplace_back(text);
    }
    return absl::OkStatus();
  }

  element object() const { return object_; }
  const std::string& where() const { return where_; }

 private:
  element object_;
  std::string where_;
};

// Parses `json` and returns the array under `list_key` of its top-level object.
absl::StatusOr<simdjson::dom::array> TopLevelArray(simdjson::dom::parser& parser,
                                                   const simdjson::padded_string& json,
                                                   std::string_view command,
                                                   std::string_view list_key) {
  const absl::string_view name(command.data(), command.size());
  const absl::string_view key(list_key.data(), list_key.size());
  element document;
  if (auto error = parser.parse(json).get(document); error != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": invalid JSON: ", simdjson::error_message(error)));
  }
  element list;
  if (document[list_key].get(list) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": missing \"", key, "\" (is this Slurm's --json output?)"));
  }
  simdjson::dom::array array;
  if (list.get(array) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(absl::StrCat(name, ".", key, ": expected an array"));
  }
  return array;
}

absl::Status ReadNode(const Fields& f, SlurmNode* node) {
  absl::Status status = f.String("name", &node->name);
  if (status.ok()) status = f.String("state", &node->state);
  if (status.ok()) status = f.Strings("state_flags", &node->state_flags);
  if (status.ok()) status = f.OptionalString("reason", &node->reason);
  if (status.ok()) status = f.Strings("partitions", &node->partitions);
  if (status.ok()) status = f.IntOr("cpus", 0, &node->cpus);
  if (status.ok()) status = f.IntOr("alloc_cpus", 0, &node->alloc_cpus);
  if (status.ok()) status = f.IntOr("real_memory", 0, &node->real_memory_mb);
  if (status.ok()) status = f.OptionalString("gres", &node->gres);
  if (status.ok()) status = f.OptionalString("gres_used", &node->gres_used);
  return status;
}

absl::Status ReadJob(const Fields& f, SlurmJob* job) {
  absl::Status status = f.Int("job_id", &job->job_id);
  if (status.ok()) status = f.OptionalString("name", &job->name);
  if (status.ok()) status = f.OptionalString("account", &job->account);
  if (status.ok()) status = f.OptionalString("qos", &job->qos);
  if (status.ok()) status = f.String("partition", &job->partition);
  if (status.ok()) status = f.String("job_state", &job->job_state);
  if (status.ok()) status = f.OptionalString("state_reason", &job->state_reason);
  if (status.ok()) status = f.IntOr("priority", 0, &job->priority);
  if (status.ok()) status = f.IntOr("nice", 0, &job->nice);
  if (status.ok()) status = f.IntOr("submit_time", 0, &job->submit_time);
  if (status.ok()) status = f.IntOr("start_time", 0, &job->start_time);
  if (status.ok()) status = f.OptionalInt("time_limit", &job->time_limit_min);
  if (status.ok()) status = f.OptionalString("tres_per_node", &job->tres_per_node);
  if (status.ok()) status = f.OptionalString("tres_per_job", &job->tres_per_job);
  if (status.ok()) status = f.OptionalString("tres_per_task", &job->tres_per_task);
  if (status.ok()) status = f.IntOr("node_count", 1, &job->node_count);
  if (status.ok()) status = f.IntOr("cpus", 0, &job->cpus);
  if (status.ok()) status = f.IntOr("tasks", 1, &job->tasks);
  if (status.ok()) status = f.Strings("gres_detail", &job->gres_detail);
  if (status.ok()) status = f.OptionalString("required_nodes", &job->required_nodes);
  if (status.ok()) status = f.OptionalString("excluded_nodes", &job->excluded_nodes);
  if (status.ok()) status = f.OptionalString("features", &job->features);
  if (status.ok()) status = f.OptionalString("comment", &job->comment);
  if (status.ok()) status = f.BoolOr("requeue", true, &job->requeue);
  if (!status.ok()) return status;
  int64_t array_job_id = 0;
  int64_t het_job_id = 0;
  status = f.IntOr("array_job_id", 0, &array_job_id);
  if (status.ok()) status = f.IntOr("het_job_id", 0, &het_job_id);
  if (!status.ok()) return status;
  // Slurm 22.05 writes a negative nice as an unsigned 32-bit number (--nice=-10: 4294967286).
  if (job->nice >= (int64_t{1} << 31) && job->nice < (int64_t{1} << 32)) {
    job->nice -= int64_t{1} << 32;
  }
  job->array = array_job_id != 0;
  job->heterogeneous = het_job_id != 0;
  if (job->time_limit_min.has_value() && *job->time_limit_min < 0) job->time_limit_min.reset();

  // The allocated nodes, in allocation order: job_resources.allocated_nodes[].nodename (the
  // order of gres_detail), else the "nodes" hostlist.
  job->nodes.clear();
  element resources;
  simdjson::dom::array allocated;
  if (f.object()["job_resources"].get(resources) == simdjson::SUCCESS && !resources.is_null() &&
      resources["allocated_nodes"].get(allocated) == simdjson::SUCCESS) {
    for (element item : allocated) {
      std::string_view name;
      if (item["nodename"].get(name) != simdjson::SUCCESS) {
        return f.Error("job_resources.allocated_nodes", "expected objects with a nodename");
      }
      job->nodes.emplace_back(name);
    }
  }
  if (job->nodes.empty()) {
    std::string hostlist;
    if (status = f.OptionalString("nodes", &hostlist); !status.ok()) return status;
    absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(hostlist);
    if (!names.ok()) return f.Error("nodes", std::string(names.status().message()));
    job->nodes = *std::move(names);
  }
  return absl::OkStatus();
}

// Splits "Key=Value Key2=Value two" (scontrol -o) into pairs. A value runs to the next
// " Key=" where Key is a word; values with spaces (Reason=...) stay whole.
std::vector<std::pair<std::string, std::string>> KeyValues(std::string_view line) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::vector<std::string> words =
      absl::StrSplit(absl::string_view(line.data(), line.size()), ' ', absl::SkipEmpty());
  for (const std::string& word : words) {
    const size_t eq = word.find('=');
    bool is_key = eq != std::string::npos && eq > 0;
    for (size_t i = 0; is_key && i < eq; ++i) {
      const char c = word[i];
      is_key = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '/' || c == ':';
    }
    if (is_key) {
      pairs.emplace_back(word.substr(0, eq), word.substr(eq + 1));
    } else if (!pairs.empty()) {
      absl::StrAppend(&pairs.back().second, " ", word);
    }
  }
  return pairs;
}

}  // namespace

absl::StatusOr<std::vector<SlurmNode>> ParseSinfoJson(std::string_view json) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(json);
  absl::StatusOr<simdjson::dom::array> array =
      TopLevelArray(parser, padded, "sinfo --json", "nodes");
  if (!array.ok()) return array.status();
  std::vector<SlurmNode> nodes;
  size_t i = 0;
  for (element item : *array) {
    Fields fields(item, absl::StrCat("sinfo --json: nodes[", i++, "]"));
    SlurmNode node;
    if (absl::Status status = ReadNode(fields, &node); !status.ok()) return status;
    nodes.push_back(std::move(node));
  }
  return nodes;
}

absl::StatusOr<std::vector<SlurmJob>> ParseSqueueJson(std::string_view json) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(json);
  absl::StatusOr<simdjson::dom::array> array =
      TopLevelArray(parser, padded, "squeue --json", "jobs");
  if (!array.ok()) return array.status();
  std::vector<SlurmJob> jobs;
  size_t i = 0;
  for (element item : *array) {
    Fields fields(item, absl::StrCat("squeue --json: jobs[", i++, "]"));
    SlurmJob job;
    if (absl::Status status = ReadJob(fields, &job); !status.ok()) return status;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

absl::StatusOr<std::vector<SlurmPartition>> ParsePartitions(std::string_view text) {
  std::vector<SlurmPartition> partitions;
  int line_number = 0;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(text.data(), text.size()), '\n', absl::SkipWhitespace())) {
    ++line_number;
    SlurmPartition partition;
    for (const auto& [key, value] : KeyValues(std::string_view(line.data(), line.size()))) {
      if (key == "PartitionName") partition.name = value;
      if (key == "State") partition.state = value;
      if (key == "Nodes") partition.nodes = value == "(null)" ? "" : value;
      if (key == "PriorityTier" && !absl::SimpleAtoi(value, &partition.priority_tier)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "scontrol show partition: line ", line_number, ": PriorityTier: expected an integer"));
      }
    }
    if (partition.name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("scontrol show partition: line ", line_number, ": missing PartitionName"));
    }
    partitions.push_back(std::move(partition));
  }
  return partitions;
}

absl::StatusOr<std::vector<SlurmSwitch>> ParseTopology(std::string_view text) {
  std::vector<SlurmSwitch> switches;
  int line_number = 0;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(text.data(), text.size()), '\n', absl::SkipWhitespace())) {
    ++line_number;
    if (!absl::StartsWith(line, "SwitchName=")) continue;
    SlurmSwitch entry;
    for (const auto& [key, value] : KeyValues(std::string_view(line.data(), line.size()))) {
      if (key == "SwitchName") entry.name = value;
      if (key == "Level" && !absl::SimpleAtoi(value, &entry.level)) {
        return absl::InvalidArgumentError(absl::StrCat("scontrol show topology: line ", line_number,
                                                       ": Level: expected an integer"));
      }
      if (key == "Nodes") {
        absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(value);
        if (!names.ok()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "scontrol show topology: line ", line_number, ": Nodes: ", names.status().message()));
        }
        entry.nodes = *std::move(names);
      }
    }
    switches.push_back(std::move(entry));
  }
  return switches;
}

std::vector<std::string> SinfoCommand() { return {"sinfo", "--json"}; }
std::vector<std::string> SqueueCommand() { return {"squeue", "--json"}; }
std::vector<std::string> PartitionCommand() { return {"scontrol", "-o", "show", "partition"}; }
std::vector<std::string> TopologyCommand() { return {"scontrol", "show", "topology"}; }

absl::StatusOr<SlurmState> ReadSlurmState(CommandRunner& runner) {
  SlurmState state;
  absl::StatusOr<std::string> sinfo = runner.Run(SinfoCommand());
  if (!sinfo.ok()) return sinfo.status();
  absl::StatusOr<std::vector<SlurmNode>> nodes = ParseSinfoJson(*sinfo);
  if (!nodes.ok()) return nodes.status();
  state.nodes = *std::move(nodes);

  absl::StatusOr<std::string> squeue = runner.Run(SqueueCommand());
  if (!squeue.ok()) return squeue.status();
  absl::StatusOr<std::vector<SlurmJob>> jobs = ParseSqueueJson(*squeue);
  if (!jobs.ok()) return jobs.status();
  state.jobs = *std::move(jobs);

  absl::StatusOr<std::string> partitions_text = runner.Run(PartitionCommand());
  if (!partitions_text.ok()) return partitions_text.status();
  absl::StatusOr<std::vector<SlurmPartition>> partitions = ParsePartitions(*partitions_text);
  if (!partitions.ok()) return partitions.status();
  state.partitions = *std::move(partitions);

  // Without the topology/tree plugin the command prints nothing or fails: no racks then.
  absl::StatusOr<std::string> topology_text = runner.Run(TopologyCommand());
  if (topology_text.ok()) {
    absl::StatusOr<std::vector<SlurmSwitch>> switches = ParseTopology(*topology_text);
    if (!switches.ok()) return switches.status();
    state.switches = *std::move(switches);
  }
  return state;
}

}  // namespace gpupool::slurm
