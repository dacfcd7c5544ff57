#include "io/json_writer.h"

#include "fmt/format.h"

namespace gpupool::io::internal {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not one (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  const size_t left = s.size() - i;
  const auto cont = [&](size_t k) { return (byte(i + k) & 0xC0) == 0x80; };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return left >= 2 && cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (left < 3 || !cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && byte(i + 1) < 0xA0) return 0;   // overlong
    if (c == 0xED && byte(i + 1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (left < 4 || !cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && byte(i + 1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && byte(i + 1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

void AppendEscaped(std::string& out, std::string_view s) {
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = Utf8SequenceLength(s, i);
      if (n == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(s.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

}  // namespace

void JsonWriter::NewLine() {
  out_ += '\n';
  out_.append(2 * stack_.size(), ' ');
}

void JsonWriter::Separate() {
  Level& level = stack_.back();
  if (level.has_members) out_ += ',';
  if (level.one_line) {
    if (level.has_members) out_ += ' ';
  } else {
    NewLine();
  }
  level.has_members = true;
}

void JsonWriter::BeforeValue() {
  if (stack_.empty() || !stack_.back().is_array) return;  // Top level, or after Key().
  Separate();
}

void JsonWriter::Key(std::string_view key) {
  Separate();
  AppendEscaped(out_, key);
  out_ += ": ";
}

void JsonWriter::BeginObject(bool one_line) {
  BeforeValue();
  out_ += '{';
  const bool inside_one_line = !stack_.empty() && stack_.back().one_line;
  stack_.push_back({false, false, one_line || inside_one_line});
}

void JsonWriter::EndObject() {
  const Level level = stack_.back();
  stack_.pop_back();
  if (level.has_members && !level.one_line) NewLine();
  out_ += level.is_array ? ']' : '}';
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  const bool inside_one_line = !stack_.empty() && stack_.back().one_line;
  stack_.push_back({true, false, inside_one_line});
}

void JsonWriter::EndArray() { EndObject(); }

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  const fmt::format_int text(value);
  out_.append(text.data(), text.size());
}

void JsonWriter::Fixed(int64_t units, int decimals) {
  BeforeValue();
  const bool negative = units < 0;
  // Magnitude in unsigned arithmetic, so that INT64_MIN has one too.
  const uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(units) : static_cast<uint64_t>(units);
  uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  if (negative) out_ += '-';
  out_ += fmt::format_int(magnitude / scale).str();
  if (decimals > 0) out_ += fmt::format(".{:0{}}", magnitude % scale, decimals);
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendEscaped(out_, value);
}

void JsonWriter::StringArray(const std::vector<std::string>& values) {
  BeforeValue();
  out_ += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out_ += ", ";
    AppendEscaped(out_, values[i]);
  }
  out_ += ']';
}

void JsonWriter::Int32Array(const std::vector<int32_t>& values) {
  BeforeValue();
  out_ += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out_ += ", ";
    const fmt::format_int text(values[i]);
    out_.append(text.data(), text.size());
  }
  out_ += ']';
}

void JsonWriter::Int64Array(const std::vector<int64_t>& values) {
  BeforeValue();
  out_ += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out_ += ", ";
    const fmt::format_int text(values[i]);
    out_.append(text.data(), text.size());
  }
  out_ += ']';
}

std::string JsonWriter::Finish() {
  out_ += '\n';
  return std::move(out_);
}

void WriteLabels(JsonWriter& w, const std::vector<TopologyLabel>& labels) {
  w.BeginOneLineObject();
  for (const TopologyLabel& label : labels) w.StringField(label.level, label.value);
  w.EndObject();
}

void WriteReplicaPlacement(JsonWriter& w, const ReplicaPlacement& placement) {
  w.BeginOneLineObject();
  w.StringField("group", placement.group);
  w.IntField("replica", placement.replica);
  w.StringField("node", placement.node);
  w.Key("gpus");
  w.Int32Array(placement.gpus);
  w.IntField("gpu_milli", placement.gpu_milli);
  w.EndObject();
}

void WritePlacements(JsonWriter& w, const std::vector<ReplicaPlacement>& placements) {
  w.BeginArray();
  for (const ReplicaPlacement& p : placements) WriteReplicaPlacement(w, p);
  w.EndArray();
}

}  // namespace gpupool::io::internal
