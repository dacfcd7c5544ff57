// Building blocks of the strict JSON readers: paths for error messages, typed field access and
// the object walker that refuses unknown, duplicate and missing keys, driven by tables of
// {key, reader} pairs (Field<T>).
//
// The readers use simdjson's On-Demand API: one pass over the text, no intermediate DOM (building
// a tape for a 100 MB snapshot costs more than reading it). simdjson validates UTF-8 and bounds
// nesting depth; each reader walks only the shape it expects and consumes every value it meets,
// so the walk's recursion depth is fixed by the schema, not by the input. Malformed JSON met on
// the way is reported where it is met: "jobs[3].groups: invalid JSON: <reason>".
#ifndef GPUPOOL_SRC_IO_JSON_READER_H_
#define GPUPOOL_SRC_IO_JSON_READER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/job.h"
#include "gpupool/node.h"
#include "gpupool/topology.h"
#include "simdjson.h"

namespace gpupool::io::internal {

// A JSON value being read. A cheap handle: pass it by value; each one may be read once.
using JsonValue = simdjson::ondemand::value;
using JsonObject = simdjson::ondemand::object;

// Where a value sits in the document: a chain of parents that lives on the stack, rendered to
// text ("jobs[3].groups[0].replicas") only when an error is reported. Keys point into the
// parser's buffers, which outlive the walk.
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

// The error for a simdjson failure while reading the value at `path`: "<path>: expected
// <expected>" for a value of the wrong JSON type, "<path>: invalid JSON: <reason>" otherwise.
absl::Status ValueError(const Path& path, simdjson::error_code error, std::string_view expected);

// One key a JSON object may have, and how its value is read into the struct T being filled.
// A reader table (`static constexpr Field<Node> kFields[] = {...}`) pairs each key with its
// reader, so a key cannot be listed without saying where its value goes.
template <typename T>
struct Field {
  std::string_view name;
  absl::Status (*read)(JsonValue value, const Path& path, T& out);
  bool required = false;
};

// Reads each member of `object` into `out`, in document order, with the reader its key has in
// `fields`. Refuses a key not in `fields` ("<path>.<key>: unknown field"), a key given twice, and
// a missing required key. Each reader must read its value completely or fail. Stops at the first
// error. At most 64 fields.
template <typename T, size_t N>
absl::Status ReadObjectFields(JsonObject& object, const Path& path, const Field<T> (&fields)[N],
                              T& out) {
  static_assert(N <= 64, "a field set is tracked in a 64-bit mask");
  uint64_t seen = 0;
  for (auto member_or : object) {
    simdjson::ondemand::field member;
    if (auto error = std::move(member_or).get(member); error != simdjson::SUCCESS) {
      return ValueError(path, error, "an object");
    }
    std::string_view key;
    if (auto error = member.unescaped_key().get(key); error != simdjson::SUCCESS) {
      return ValueError(path, error, "an object");
    }
    const Path field_path = path.Field(key);
    size_t i = 0;
    while (i < N && fields[i].name != key) ++i;
    if (i == N) return PathError(field_path, "unknown field");
    if (seen & (uint64_t{1} << i)) return PathError(field_path, "duplicate field");
    seen |= uint64_t{1} << i;
    absl::Status status = fields[i].read(member.value(), field_path, out);
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

// ReadObjectFields() on a value that must be an object ("<path>: expected an object").
template <typename T, size_t N>
absl::Status ReadFields(JsonValue value, const Path& path, const Field<T> (&fields)[N], T& out) {
  JsonObject object;
  if (auto error = value.get_object().get(object); error != simdjson::SUCCESS) {
    return ValueError(path, error, "an object");
  }
  return ReadObjectFields(object, path, fields, out);
}

// Typed values. Each refuses a value of another JSON type ("expected an integer"); the integer
// readers also refuse numbers with a fraction or exponent and values outside the C++ type.
absl::Status ReadInt64(JsonValue value, const Path& path, int64_t& out);
absl::Status ReadInt32(JsonValue value, const Path& path, int32_t& out);
absl::Status ReadBool(JsonValue value, const Path& path, bool& out);
absl::Status ReadString(JsonValue value, const Path& path, std::string& out);
// JSON null leaves `out` unset.
absl::Status ReadOptionalInt64(JsonValue value, const Path& path, std::optional<int64_t>& out);
absl::Status ReadOptionalInt32(JsonValue value, const Path& path, std::optional<int32_t>& out);
absl::Status ReadOptionalString(JsonValue value, const Path& path, std::optional<std::string>& out);
absl::Status ReadStringArray(JsonValue value, const Path& path, std::vector<std::string>& out);
absl::Status ReadInt32Array(JsonValue value, const Path& path, std::vector<int32_t>& out);
absl::Status ReadInt64Array(JsonValue value, const Path& path, std::vector<int64_t>& out);
// A JSON object of strings, {"rack": "r1"}, as labels in document order; duplicate keys refused.
absl::Status ReadLabels(JsonValue value, const Path& path, std::vector<TopologyLabel>& out);

// Calls `read(element_value, element_path, out.back())` for each element of the array `value`,
// appending a default T to `out` first.
template <typename T, typename Read>
absl::Status ReadArray(JsonValue value, const Path& path, std::vector<T>& out, Read&& read) {
  simdjson::ondemand::array array;
  if (auto error = value.get_array().get(array); error != simdjson::SUCCESS) {
    return ValueError(path, error, "an array");
  }
  out.clear();
  size_t i = 0;
  for (auto item_or : array) {
    JsonValue item;
    if (auto error = std::move(item_or).get(item); error != simdjson::SUCCESS) {
      return ValueError(path, error, "an array");
    }
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
absl::Status ReadEnum(JsonValue value, const Path& path, E& out, Parse&& parse, Names&& names) {
  std::string_view name;
  if (auto error = value.get_string().get(name); error != simdjson::SUCCESS) {
    return ValueError(path, error, "a string");
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

// Building blocks of reader tables. The struct a member belongs to, and what a reader fills.
template <typename M>
struct MemberOf;
template <typename C, typename V>
struct MemberOf<V C::*> {
  using Class = C;
};
template <typename F>
struct ReaderTarget;
template <typename T>
struct ReaderTarget<absl::Status (*)(JsonValue, const Path&, T&)> {
  using Type = T;
};

// The reader of one member of a struct: Read(value, path, out.*Member).
//   {"id", ReadMember<&Node::id, ReadString>, true}
template <auto Member, auto Read>
absl::Status ReadMember(JsonValue value, const Path& path,
                        typename MemberOf<decltype(Member)>::Class& out) {
  return Read(value, path, out.*Member);
}

// An array whose elements ReadElement reads: ReadArrayOf<ReadGpu> fills a std::vector<Gpu>.
template <auto ReadElement>
absl::Status ReadArrayOf(JsonValue value, const Path& path,
                         std::vector<typename ReaderTarget<decltype(ReadElement)>::Type>& out) {
  return ReadArray(value, path, out, ReadElement);
}

// An enum read by name with Parse (std::optional<E> Parse(std::string_view)) and Names (the
// accepted names, for the message): ReadEnumOf<ParseNodeState, NodeStateNames>.
template <auto Parse, auto Names>
absl::Status ReadEnumOf(JsonValue value, const Path& path,
                        typename decltype(Parse(std::string_view()))::value_type& out) {
  return ReadEnum(value, path, out, Parse, Names);
}

// True when `value` is JSON null (and then consumes it); an error when it is not valid JSON.
// `expected` names what a non-null value should be, for that error.
absl::StatusOr<bool> ReadNull(JsonValue& value, const Path& path, std::string_view expected);

// An optional object that Read reads: null (or an omitted key) leaves it unset.
template <auto Read>
absl::Status ReadOptionalOf(JsonValue value, const Path& path,
                            std::optional<typename ReaderTarget<decltype(Read)>::Type>& out) {
  absl::StatusOr<bool> is_null = ReadNull(value, path, "an object");
  if (!is_null.ok()) return is_null.status();
  if (*is_null) {
    out.reset();
    return absl::OkStatus();
  }
  typename ReaderTarget<decltype(Read)>::Type read_value;
  absl::Status status = Read(value, path, read_value);
  if (status.ok()) out = std::move(read_value);
  return status;
}

// A replica placement object; shared by snapshots (running jobs) and decisions.
absl::Status ReadReplicaPlacement(JsonValue value, const Path& path, ReplicaPlacement& out);

// A node object of a snapshot, without its id: a scale template's node (policies). An "id" key is
// refused ("<path>.id: a template node has no id (the host names the nodes it adds)").
absl::Status ReadNodeWithoutId(JsonValue value, const Path& path, Node& out);

// A JSON number with at most 6 digits after the point and no exponent, exactly, in millionths:
// 2.5 is 2,500,000 and 3 is 3,000,000 (an amount of money). Refuses other numbers with the path.
absl::Status ReadMicros(JsonValue value, const Path& path, int64_t& out);

// Reads the whole document in `json` (which must have SIMDJSON_PADDING readable bytes after its
// end) with `read(root_object, root_path)`. The root must be an object and nothing may follow it.
absl::Status ReadRoot(simdjson::padded_string_view json,
                      const std::function<absl::Status(JsonObject&, const Path&)>& read);

// Parses `json` (copied into a padded buffer) with `read(root_object, root_path, out)`.
template <typename T>
absl::StatusOr<T> ParseDocument(std::string_view json,
                                absl::Status (*read)(JsonObject&, const Path&, T&)) {
  const simdjson::padded_string padded(json);
  // simdjson leaves the copy empty when it cannot allocate it.
  if (padded.size() != json.size()) throw std::bad_alloc();
  T out;
  absl::Status status =
      ReadRoot(padded, [&](JsonObject& root, const Path& path) { return read(root, path, out); });
  if (!status.ok()) return status;
  return out;
}

// Loads the file at `path` and reads it like ParseDocument(); errors get the file name in front.
template <typename T>
absl::StatusOr<T> ReadDocumentFile(const std::string& path,
                                   absl::Status (*read)(JsonObject&, const Path&, T&)) {
  simdjson::padded_string contents;
  if (auto error = simdjson::padded_string::load(path).get(contents); error != simdjson::SUCCESS) {
    if (error == simdjson::MEMALLOC) throw std::bad_alloc();
    return absl::NotFoundError(path + ": cannot read file");
  }
  T out;
  absl::Status status = ReadRoot(contents, [&](JsonObject& root, const Path& root_path) {
    return read(root, root_path, out);
  });
  if (!status.ok()) return absl::Status(status.code(), path + ": " + std::string(status.message()));
  return out;
}

}  // namespace gpupool::io::internal

#endif  // GPUPOOL_SRC_IO_JSON_READER_H_
