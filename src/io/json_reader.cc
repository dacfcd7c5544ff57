#include "io/json_reader.h"

#include <algorithm>
#include <limits>
#include <new>

#include "fmt/format.h"

namespace gpupool::io::internal {
namespace {

using simdjson::ondemand::json_type;
using simdjson::ondemand::number_type;

// Keys come from the document; keep messages readable if a key is huge or has control bytes.
void AppendKey(std::string& out, std::string_view key) {
  constexpr size_t kMaxKey = 64;
  for (char c : key.substr(0, kMaxKey)) {
    out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
  }
  if (key.size() > kMaxKey) out += "...";
}

// True when `token` (a raw JSON token, maybe followed by whitespace) is a JSON integer: an
// optional minus, then 0 or a digit 1-9 followed by digits, and no fraction or exponent.
bool IsIntegerToken(std::string_view token) {
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' ||
                            token.back() == '\r')) {
    token.remove_suffix(1);
  }
  if (!token.empty() && token.front() == '-') token.remove_prefix(1);
  if (token.empty() || (token.front() == '0' && token.size() > 1)) return false;
  return std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Why get_int64() failed on `value`: not a number, a fraction or exponent, or out of range. An
// integer token that does not fit, however many digits it has and whatever its sign, is "out of
// range": it is valid JSON (RFC 8259 sets no limit), only not a value the format can hold.
absl::Status IntegerError(JsonValue& value, const Path& path, simdjson::error_code error) {
  if (error != simdjson::INCORRECT_TYPE && error != simdjson::NUMBER_OUT_OF_RANGE &&
      error != simdjson::NUMBER_ERROR) {
    return ValueError(path, error, "an integer");
  }
  json_type type;
  if (value.type().get(type) != simdjson::SUCCESS || type != json_type::number) {
    return PathError(path, "expected an integer");
  }
  if (IsIntegerToken(value.raw_json_token())) {
    return PathError(path, "integer out of range (must fit in 64 bits)");
  }
  number_type kind;
  if (auto kind_error = value.get_number_type().get(kind); kind_error != simdjson::SUCCESS) {
    return ValueError(path, kind_error, "an integer");
  }
  return PathError(path, "expected an integer");
}

// True when the text nests arrays and objects more than kMaxDepth deep (strings skipped). Run
// only when a read has failed, so that a too-deep document is reported as invalid JSON whatever
// the walk met first, at no cost to documents that read.
constexpr int kMaxDepth = 1024;

bool NestedTooDeep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

absl::Status TooDeepError() {
  return absl::InvalidArgumentError(
      fmt::format("invalid JSON: nesting deeper than {} arrays and objects", kMaxDepth));
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

absl::Status ValueError(const Path& path, simdjson::error_code error, std::string_view expected) {
  if (error == simdjson::INCORRECT_TYPE)
    return PathError(path, fmt::format("expected {}", expected));
  return PathError(path, fmt::format("invalid JSON: {}", simdjson::error_message(error)));
}

absl::Status ReadInt64(JsonValue value, const Path& path, int64_t& out) {
  if (auto error = value.get_int64().get(out); error != simdjson::SUCCESS) {
    return IntegerError(value, path, error);
  }
  return absl::OkStatus();
}

absl::Status ReadMicros(JsonValue value, const Path& path, int64_t& out) {
  json_type type;
  if (auto error = value.type().get(type); error != simdjson::SUCCESS) {
    return ValueError(path, error, "a number");
  }
  if (type != json_type::number) return PathError(path, "expected a number");
  std::string_view token = value.raw_json_token();
  double ignored = 0;  // consumes the value, and checks that it is a valid number
  if (auto error = value.get_double().get(ignored); error != simdjson::SUCCESS) {
    return ValueError(path, error, "a number");
  }
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' ||
                            token.back() == '\r')) {
    token.remove_suffix(1);
  }
  constexpr std::string_view kForm =
      "expected a number with at most 6 digits after the point and no exponent";
  const bool negative = !token.empty() && token.front() == '-';
  if (negative) token.remove_prefix(1);
  const size_t point = token.find('.');
  const std::string_view whole = token.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : token.substr(point + 1);
  const auto digits = [](std::string_view d) {
    return std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (whole.empty() || !digits(whole) || !digits(fraction) || fraction.size() > 6 ||
      (point != std::string_view::npos && fraction.empty())) {
    return PathError(path, kForm);
  }
  // At most 12 digits before the point keeps the micro-units far inside 64 bits.
  if (whole.size() > 12)
    return PathError(path, "number out of range (at most 12 digits before the point)");
  int64_t micros = 0;
  for (char c : whole) micros = micros * 10 + (c - '0');
  for (size_t i = 0; i < 6; ++i)
    micros = micros * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
  out = negative ? -micros : micros;
  return absl::OkStatus();
}

absl::Status ReadInt32(JsonValue value, const Path& path, int32_t& out) {
  int64_t wide = 0;
  if (auto error = value.get_int64().get(wide); error != simdjson::SUCCESS) {
    return IntegerError(value, path, error);
  }
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) {
    return PathError(path, "integer out of range (must fit in 32 bits)");
  }
  out = static_cast<int32_t>(wide);
  return absl::OkStatus();
}

absl::Status ReadBool(JsonValue value, const Path& path, bool& out) {
  if (auto error = value.get_bool().get(out); error != simdjson::SUCCESS) {
    return ValueError(path, error, "true or false");
  }
  return absl::OkStatus();
}

absl::Status ReadString(JsonValue value, const Path& path, std::string& out) {
  std::string_view s;
  if (auto error = value.get_string().get(s); error != simdjson::SUCCESS) {
    return ValueError(path, error, "a string");
  }
  out.assign(s.data(), s.size());
  return absl::OkStatus();
}

namespace {

// True when `value` is JSON null (and then consumes it).
absl::StatusOr<bool> IsNull(JsonValue& value, const Path& path, std::string_view expected) {
  bool is_null = false;
  if (auto error = value.is_null().get(is_null); error != simdjson::SUCCESS) {
    return ValueError(path, error, expected);
  }
  return is_null;
}

}  // namespace

absl::StatusOr<bool> ReadNull(JsonValue& value, const Path& path, std::string_view expected) {
  return IsNull(value, path, expected);
}

absl::Status ReadOptionalInt64(JsonValue value, const Path& path, std::optional<int64_t>& out) {
  absl::StatusOr<bool> is_null = IsNull(value, path, "an integer");
  if (!is_null.ok()) return is_null.status();
  if (*is_null) {
    out.reset();
    return absl::OkStatus();
  }
  int64_t v = 0;
  absl::Status status = ReadInt64(value, path, v);
  if (status.ok()) out = v;
  return status;
}

absl::Status ReadOptionalInt32(JsonValue value, const Path& path, std::optional<int32_t>& out) {
  absl::StatusOr<bool> is_null = IsNull(value, path, "an integer");
  if (!is_null.ok()) return is_null.status();
  if (*is_null) {
    out.reset();
    return absl::OkStatus();
  }
  int32_t v = 0;
  absl::Status status = ReadInt32(value, path, v);
  if (status.ok()) out = v;
  return status;
}

absl::Status ReadOptionalString(JsonValue value, const Path& path,
                                std::optional<std::string>& out) {
  absl::StatusOr<bool> is_null = IsNull(value, path, "a string");
  if (!is_null.ok()) return is_null.status();
  if (*is_null) {
    out.reset();
    return absl::OkStatus();
  }
  std::string v;
  absl::Status status = ReadString(value, path, v);
  if (status.ok()) out = std::move(v);
  return status;
}

absl::Status ReadStringArray(JsonValue value, const Path& path, std::vector<std::string>& out) {
  return ReadArray(value, path, out, [](JsonValue item, const Path& p, std::string& s) {
    return ReadString(item, p, s);
  });
}

absl::Status ReadInt32Array(JsonValue value, const Path& path, std::vector<int32_t>& out) {
  return ReadArray(value, path, out,
                   [](JsonValue item, const Path& p, int32_t& v) { return ReadInt32(item, p, v); });
}

absl::Status ReadInt64Array(JsonValue value, const Path& path, std::vector<int64_t>& out) {
  return ReadArray(value, path, out,
                   [](JsonValue item, const Path& p, int64_t& v) { return ReadInt64(item, p, v); });
}

absl::Status ReadLabels(JsonValue value, const Path& path, std::vector<TopologyLabel>& out) {
  JsonObject object;
  if (auto error = value.get_object().get(object); error != simdjson::SUCCESS) {
    return ValueError(path, error, "an object");
  }
  out.clear();
  for (auto member_or : object) {
    simdjson::ondemand::field member;
    std::string_view key;
    if (auto error = std::move(member_or).get(member); error != simdjson::SUCCESS) {
      return ValueError(path, error, "an object");
    }
    if (auto error = member.unescaped_key().get(key); error != simdjson::SUCCESS) {
      return ValueError(path, error, "an object");
    }
    TopologyLabel& label = out.emplace_back();
    label.level.assign(key.data(), key.size());
    absl::Status status = ReadString(member.value(), path.Field(key), label.value);
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

absl::Status ReadReplicaPlacement(JsonValue value, const Path& path, ReplicaPlacement& out) {
  using P = ReplicaPlacement;
  static constexpr Field<P> kFields[] = {
      {"group", ReadMember<&P::group, ReadString>, true},
      {"replica", ReadMember<&P::replica, ReadInt32>},
      {"node", ReadMember<&P::node, ReadString>, true},
      {"gpus", ReadMember<&P::gpus, ReadInt32Array>},
      {"gpu_milli", ReadMember<&P::gpu_milli, ReadInt64>},
  };
  return ReadFields(value, path, kFields, out);
}

namespace {

absl::Status ReadRootObject(simdjson::padded_string_view json,
                            const std::function<absl::Status(JsonObject&, const Path&)>& read) {
  const Path root;
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (auto error = parser.iterate(json).get(doc); error != simdjson::SUCCESS) {
    // The parser's buffers could not be allocated: out of memory, as any allocation.
    if (error == simdjson::MEMALLOC) throw std::bad_alloc();
    return absl::InvalidArgumentError(
        fmt::format("invalid JSON: {}", simdjson::error_message(error)));
  }
  json_type type;
  if (auto error = doc.type().get(type); error != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        fmt::format("invalid JSON: {}", simdjson::error_message(error)));
  }
  if (type != json_type::object) return PathError(root, "expected an object");
  JsonObject object;
  if (auto error = doc.get_object().get(object); error != simdjson::SUCCESS) {
    return ValueError(root, error, "an object");
  }
  absl::Status status = read(object, root);
  if (!status.ok()) return status;
  // The walk consumed the root object; anything after it is not one JSON document.
  const char* rest = nullptr;
  if (doc.current_location().get(rest) != simdjson::OUT_OF_BOUNDS) {
    return absl::InvalidArgumentError("invalid JSON: content after the end of the document");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadRoot(simdjson::padded_string_view json,
                      const std::function<absl::Status(JsonObject&, const Path&)>& read) {
  absl::Status status = ReadRootObject(json, read);
  if (!status.ok() && NestedTooDeep(json)) return TooDeepError();
  return status;
}

}  // namespace gpupool::io::internal
