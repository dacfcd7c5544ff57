#include "io/json_reader.h"

#include <algorithm>
#include <limits>

#include "fmt/format.h"

namespace gpupool::io::internal {
namespace {

// Keys come from the document; keep messages readable if a key is huge or has control bytes.
void AppendKey(std::string& out, std::string_view key) {
  constexpr size_t kMaxKey = 64;
  for (char c : key.substr(0, kMaxKey)) {
    if (static_cast<unsigned char>(c) < 0x20) {
      out += '?';
    } else {
      out += c;
    }
  }
  if (key.size() > kMaxKey) out += "...";
}

absl::Status ExpectedInteger(element value, const Path& path) {
  // A uint64 is above INT64_MAX; a double is a fraction, an exponent or an integer too large for
  // 64 bits (simdjson keeps those as doubles).
  double d = 0;
  if (value.is_uint64() || (value.get_double().get(d) == simdjson::SUCCESS &&
                            (d >= 9223372036854775808.0 || d < -9223372036854775808.0))) {
    return PathError(path, "integer out of range (must fit in 64 bits)");
  }
  return PathError(path, "expected an integer");
}

}  // namespace

std::string Path::ToString() const {
  // Collect the chain root-first, then render.
  std::vector<const Path*> steps;
  for (const Path* p = this; p != nullptr; p = p->parent) steps.push_back(p);
  std::string out;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    const Path& step = **it;
    if (step.index >= 0) {
      fmt::format_to(std::back_inserter(out), "[{}]", step.index);
    } else if (step.parent != nullptr) {
      if (!out.empty()) out += '.';
      AppendKey(out, step.key);
    }
  }
  return out;
}

absl::Status PathError(const Path& path, std::string_view message) {
  std::string where = path.ToString();
  if (where.empty()) where = "(root)";
  return absl::InvalidArgumentError(fmt::format("{}: {}", where, message));
}

absl::Status ReadInt64(element value, const Path& path, int64_t& out) {
  if (value.get_int64().get(out) != simdjson::SUCCESS) return ExpectedInteger(value, path);
  return absl::OkStatus();
}

absl::Status ReadInt32(element value, const Path& path, int32_t& out) {
  int64_t wide = 0;
  if (value.get_int64().get(wide) != simdjson::SUCCESS) return ExpectedInteger(value, path);
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) {
    return PathError(path, "integer out of range (must fit in 32 bits)");
  }
  out = static_cast<int32_t>(wide);
  return absl::OkStatus();
}

absl::Status ReadBool(element value, const Path& path, bool& out) {
  if (value.get_bool().get(out) != simdjson::SUCCESS) {
    return PathError(path, "expected true or false");
  }
  return absl::OkStatus();
}

absl::Status ReadString(element value, const Path& path, std::string& out) {
  std::string_view s;
  if (value.get_string().get(s) != simdjson::SUCCESS) return PathError(path, "expected a string");
  out.assign(s.data(), s.size());
  return absl::OkStatus();
}

absl::Status ReadOptionalInt64(element value, const Path& path, std::optional<int64_t>& out) {
  if (value.is_null()) {
    out.reset();
    return absl::OkStatus();
  }
  int64_t v = 0;
  absl::Status status = ReadInt64(value, path, v);
  if (status.ok()) out = v;
  return status;
}

absl::Status ReadOptionalInt32(element value, const Path& path, std::optional<int32_t>& out) {
  if (value.is_null()) {
    out.reset();
    return absl::OkStatus();
  }
  int32_t v = 0;
  absl::Status status = ReadInt32(value, path, v);
  if (status.ok()) out = v;
  return status;
}

absl::Status ReadOptionalString(element value, const Path& path, std::optional<std::string>& out) {
  if (value.is_null()) {
    out.reset();
    return absl::OkStatus();
  }
  std::string v;
  absl::Status status = ReadString(value, path, v);
  if (status.ok()) out = std::move(v);
  return status;
}

absl::Status ReadStringArray(element value, const Path& path, std::vector<std::string>& out) {
  return ReadArray(value, path, out, [](element item, const Path& p, std::string& s) {
    return ReadString(item, p, s);
  });
}

absl::Status ReadInt32Array(element value, const Path& path, std::vector<int32_t>& out) {
  return ReadArray(value, path, out,
                   [](element item, const Path& p, int32_t& v) { return ReadInt32(item, p, v); });
}

absl::Status ReadLabels(element value, const Path& path, std::vector<TopologyLabel>& out) {
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return PathError(path, "expected an object");
  }
  out.clear();
  out.reserve(object.size());
  for (simdjson::dom::key_value_pair member : object) {
    TopologyLabel& label = out.emplace_back();
    label.level.assign(member.key.data(), member.key.size());
    absl::Status status = ReadString(member.value, path.Field(member.key), label.value);
    if (!status.ok()) return status;
  }
  // Duplicate keys: pairwise for the usual handful, by sorting for large objects.
  constexpr size_t kPairwiseLimit = 16;
  if (out.size() <= kPairwiseLimit) {
    for (size_t i = 0; i < out.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (out[i].level == out[j].level) {
          return PathError(path.Field(out[i].level), "duplicate key");
        }
      }
    }
  } else {
    std::vector<std::string_view> keys;
    keys.reserve(out.size());
    for (const TopologyLabel& label : out) keys.push_back(label.level);
    std::sort(keys.begin(), keys.end());
    auto dup = std::adjacent_find(keys.begin(), keys.end());
    if (dup != keys.end()) return PathError(path.Field(*dup), "duplicate key");
  }
  return absl::OkStatus();
}

absl::Status ReadReplicaPlacement(element value, const Path& path, ReplicaPlacement& out) {
  static constexpr FieldSpec kFields[] = {
      {"group", true}, {"replica"}, {"node", true}, {"gpus"}, {"gpu_milli"},
  };
  return ReadFields(value, path, kFields, [&](size_t field, element v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.group);
      case 1:
        return ReadInt32(v, p, out.replica);
      case 2:
        return ReadString(v, p, out.node);
      case 3:
        return ReadInt32Array(v, p, out.gpus);
      default:
        return ReadInt64(v, p, out.gpu_milli);
    }
  });
}

}  // namespace gpupool::io::internal
