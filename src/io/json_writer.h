// The canonical JSON printer behind SnapshotToJson(), PolicyToJson() and DecisionsToJson().
//
// Layout rules, applied the same way to every document so that output is byte-for-byte stable:
//   - objects and arrays of objects: one member or element per line, indented by 2 spaces;
//   - except small records, chosen per type by the caller and never by the data (a GPU, a
//     placement, a quota, a request...): on one line, {"index": 0, "island": 0, "healthy": true};
//   - arrays of numbers or strings: on one line, "[0, 1, 2]";
//   - empty objects and arrays: "{}" and "[]";
//   - integers in decimal, no floating point anywhere;
//   - strings escaped per RFC 8259 (", \ and control characters; other text verbatim as UTF-8;
//     bytes that are not valid UTF-8 become U+FFFD, so the output is always valid JSON);
//   - a newline after the document.
#ifndef GPUPOOL_SRC_IO_JSON_WRITER_H_
#define GPUPOOL_SRC_IO_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpupool/job.h"
#include "gpupool/node.h"
#include "gpupool/topology.h"

namespace gpupool::io::internal {

class JsonWriter {
 public:
  JsonWriter() = default;

  // Containers. A value inside an object follows Key(); inside an array it is an element.
  // Multi-line, or on one line (then everything inside it is on that line too).
  void BeginObject(bool one_line = false);
  void BeginOneLineObject() { BeginObject(true); }
  void EndObject();
  void BeginArray();
  // An array on one line, e.g. of numbers written with Number().
  void BeginOneLineArray() {
    BeforeValue();
    out_ += '[';
    stack_.push_back({true, false, true});
  }
  void EndArray();
  void Key(std::string_view key);

  // Scalars.
  void Int(int64_t value);
  void Bool(bool value);
  void String(std::string_view value);
  // An exact decimal fraction, units / 10^decimals, written with `decimals` digits after the
  // point: Fixed(388889, 6) is 0.388889. Not floating point: the digits come from the integer.
  void Fixed(int64_t units, int decimals);
  // A number the caller has already formatted, written verbatim: it must be a JSON number (the
  // simulator's metrics, which are doubles printed with a fixed number of decimals). Prefer
  // Int() and Fixed() wherever the value is an integer or an exact fraction.
  void Number(std::string_view literal) {
    BeforeValue();
    out_.append(literal);
  }
  void Null() {
    BeforeValue();
    out_ += "null";
  }

  // Single-line arrays of scalars.
  void StringArray(const std::vector<std::string>& values);
  void Int32Array(const std::vector<int32_t>& values);
  void Int64Array(const std::vector<int64_t>& values);

  // Key() and value in one call (distinct names: no overload may turn a pointer into a bool).
  void IntField(std::string_view key, int64_t value) {
    Key(key);
    Int(value);
  }
  void BoolField(std::string_view key, bool value) {
    Key(key);
    Bool(value);
  }
  void StringField(std::string_view key, std::string_view value) {
    Key(key);
    String(value);
  }

  // Returns the document, with its trailing newline. The writer is spent afterwards.
  std::string Finish();

 private:
  // Called before every value: separates array elements, one per line.
  void BeforeValue();
  // Ends the previous member of the open container, if any, and starts the next.
  void Separate();
  void NewLine();

  std::string out_;
  // One entry per open container: whether it is an array, and whether it has members yet.
  struct Level {
    bool is_array = false;
    bool has_members = false;
    bool one_line = false;
  };
  std::vector<Level> stack_;
};

// {"level": "value", ...} of a node's path or labels, in the order given.
void WriteLabels(JsonWriter& w, const std::vector<TopologyLabel>& labels);
// A replica placement object; shared by snapshots and decisions.
void WriteReplicaPlacement(JsonWriter& w, const ReplicaPlacement& placement);
void WritePlacements(JsonWriter& w, const std::vector<ReplicaPlacement>& placements);

// A snapshot's node object; without its "id" key when `with_id` is false (a scale template's node).
void WriteNode(JsonWriter& w, const Node& node, bool with_id);

}  // namespace gpupool::io::internal

#endif  // GPUPOOL_SRC_IO_JSON_WRITER_H_
