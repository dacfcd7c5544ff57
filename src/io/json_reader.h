// Building blocks of the strict JSON readers: paths for error messages, typed field access and
// the object walker that refuses unknown, duplicate and missing keys.
//
// The readers work on a simdjson DOM. The document is parsed once (simdjson validates UTF-8 and
// structure, and bounds nesting depth); then each reader walks only the shape it expects, so the
// walk's recursion depth is fixed by the schema, not by the input.
#ifndef GPUPOOL_SRC_IO_JSON_READER_H_
#define GPUPOOL_SRC_IO_JSON_READER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/job.h"
#include "gpupool/topology.h"
#include "simdjson.h"

namespace gpupool::io::internal {

using simdjson::dom::element;

// Where a value sits in the document: a chain of parents that lives on the stack, rendered to
// text ("jobs[3].groups[0].replicas") only when an error is reported.
struct Path {
  const Path* parent = nullptr;
  // Object key of this step, or empty for an array element.
  std::string_view key;
  // Array index of this step, or -1 for an object key.
  int64_t index = -1;

  Path Field(std::string_view name) const { return Path{this, name, -1}; }
  Path Element(size_t i) const { return Path{this, {}, static_cast<int64_t>(i)}; }
  std::string ToString() const;
};

// InvalidArgument "<path>: <message>" ("(root): <message>" at the top).
absl::Status PathError(const Path& path, std::string_view message);

// One key a JSON object may have.
struct FieldSpec {
  std::string_view name;
  bool required = false;
};

// Calls `visit(field_index, value, field_path)` for each member of the object `value`, in
// document order; `field_index` is the key's position in `fields`. Refuses a value that is not
// an object, a key not in `fields` ("<path>.<key>: unknown field"), a key given twice, and a
// missing required key. Stops at the first error `visit` returns. At most 64 fields.
template <size_t N, typename Visit>
absl::Status ReadFields(element value, const Path& path, const FieldSpec (&fields)[N],
                        Visit&& visit) {
  static_assert(N <= 64, "a field set is tracked in a 64-bit mask");
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return PathError(path, "expected an object");
  }
  uint64_t seen = 0;
  for (simdjson::dom::key_value_pair member : object) {
    const Path field_path = path.Field(member.key);
    size_t i = 0;
    while (i < N && fields[i].name != member.key) ++i;
    if (i == N) return PathError(field_path, "unknown field");
    if (seen & (uint64_t{1} << i)) return PathError(field_path, "duplicate field");
    seen |= uint64_t{1} << i;
    absl::Status status = visit(i, member.value, field_path);
    if (!status.ok()) return status;
  }
  for (size_t i = 0; i < N; ++i) {
    if (fields[i].required && !(seen & (uint64_t{1} << i))) {
      return PathError(
          path, std::string("missing required field \"") + std::string(fields[i].name) + "\"");
    }
  }
  return absl::OkStatus();
}

// Typed values. Each refuses a value of another JSON type ("expected an integer"); the integer
// readers also refuse numbers with a fraction or exponent and values outside the C++ type.
absl::Status ReadInt64(element value, const Path& path, int64_t& out);
absl::Status ReadInt32(element value, const Path& path, int32_t& out);
absl::Status ReadBool(element value, const Path& path, bool& out);
absl::Status ReadString(element value, const Path& path, std::string& out);
// JSON null leaves `out` unset.
absl::Status ReadOptionalInt64(element value, const Path& path, std::optional<int64_t>& out);
absl::Status ReadOptionalInt32(element value, const Path& path, std::optional<int32_t>& out);
absl::Status ReadOptionalString(element value, const Path& path, std::optional<std::string>& out);
absl::Status ReadStringArray(element value, const Path& path, std::vector<std::string>& out);
absl::Status ReadInt32Array(element value, const Path& path, std::vector<int32_t>& out);
// A JSON object of strings, {"rack": "r1"}, as labels in document order; duplicate keys refused.
absl::Status ReadLabels(element value, const Path& path, std::vector<TopologyLabel>& out);

// Calls `read(element_value, element_path, out.back())` for each element of the array `value`,
// appending a default T to `out` first.
template <typename T, typename Read>
absl::Status ReadArray(element value, const Path& path, std::vector<T>& out, Read&& read) {
  simdjson::dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) {
    return PathError(path, "expected an array");
  }
  out.clear();
  out.reserve(array.size());
  size_t i = 0;
  for (element item : array) {
    out.emplace_back();
    absl::Status status = read(item, path.Element(i), out.back());
    if (!status.ok()) return status;
    ++i;
  }
  return absl::OkStatus();
}

// Reads an enum by name with `parse` (returning std::optional<E>); an unknown name gives
// `unknown value "x" (expected <names>)`.
template <typename E, typename Parse, typename Names>
absl::Status ReadEnum(element value, const Path& path, E& out, Parse&& parse, Names&& names) {
  std::string_view name;
  if (value.get_string().get(name) != simdjson::SUCCESS) {
    return PathError(path, "expected a string");
  }
  std::optional<E> parsed = parse(name);
  if (!parsed.has_value()) {
    std::string message = "unknown value \"";
    // The name is quoted as given, cut short so that a huge string cannot bloat the message.
    message.append(name.substr(0, 64));
    if (name.size() > 64) message += "...";
    message += "\" (expected " + names() + ")";
    return PathError(path, message);
  }
  out = *parsed;
  return absl::OkStatus();
}

// A replica placement object; shared by snapshots (running jobs) and decisions.
absl::Status ReadReplicaPlacement(element value, const Path& path, ReplicaPlacement& out);

// Parses `json` (copied into a padded buffer) and calls `read(root, root_path, out)` on the
// document. Malformed JSON gives "invalid JSON: <reason>".
template <typename T, typename Read>
absl::StatusOr<T> ParseDocument(std::string_view json, Read&& read) {
  simdjson::dom::parser parser;
  element root;
  simdjson::error_code error = parser.parse(json.data(), json.size(), true).get(root);
  if (error != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(std::string("invalid JSON: ") +
                                      simdjson::error_message(error));
  }
  T out;
  const Path root_path;
  absl::Status status = read(root, root_path, out);
  if (!status.ok()) return status;
  return out;
}

// Loads the file at `path` and parses it with ParseDocument(); errors get the file name in front.
template <typename T, typename Read>
absl::StatusOr<T> ReadDocumentFile(const std::string& path, Read&& read) {
  simdjson::padded_string contents;
  if (simdjson::padded_string::load(path).get(contents) != simdjson::SUCCESS) {
    return absl::NotFoundError(path + ": cannot read file");
  }
  absl::StatusOr<T> result =
      ParseDocument<T>(std::string_view(contents.data(), contents.size()), read);
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        path + ": " + std::string(result.status().message()));
  }
  return result;
}

}  // namespace gpupool::io::internal

#endif  // GPUPOOL_SRC_IO_JSON_READER_H_
