// The readers never crash: truncated files, garbage, deep nesting, bad UTF-8, huge numbers and
// seeded random corruption must all come back as InvalidArgument (or, rarely for a mutation,
// as a valid document), never as a crash, a hang or an exception.
#include <cstdint>
#include <string>
#include <string_view>

#include "gpupool/io/json.h"
#include "gtest/gtest.h"
#include "testing/generator.h"

namespace gpupool::io {
namespace {

TEST(RobustnessTest, GarbageIsRefused) {
  const std::string kInputs[] = {
      "",
      " ",
      "{",
      "}",
      "[",
      "nul",
      "null",
      "true",
      "0",
      "\"snapshot\"",
      "{\"now\": }",
      "{\"now\": 1,}",
      "{\"now\" 1}",
      "{now: 1}",
      "{'now': 1}",
      "{\"now\": 01}",
      "{\"now\": -}",
      "{\"now\": 1} {\"now\": 2}",
      "{\"nodes\": [{\"id\": \"n\"},]}",
      "{\"nodes\": [{\"id\": \"n\\x\"}]}",
      "{\"nodes\": [{\"id\": \"\xff\xfe\"}]}",
      "{\"nodes\": [{\"id\": \"\xc0\xaf\"}]}",
      "{\"nodes\": [{\"id\": \"\xed\xa0\x80\"}]}",
      "\xef\xbb\xbf{\"now\": 1}\x80",
      "{\"now\": 100000000000000000000000000000}",
      "{\"now\": -9223372036854775809}",
      "{\"now\": 1e999}",
      "{\"now\": NaN}",
      "{\"now\": Infinity}",
      std::string("{\"now\": 1\0}", 11),
      std::string(100000, '['),
      std::string(100000, '{'),
      "{\"jobs\": " + std::string(5000, '[') + std::string(5000, ']') + "}",
      "{\"nodes\": [" + std::string(3000, '[') + "]}",
  };
  for (const std::string& input : kInputs) {
    SCOPED_TRACE(input.substr(0, 60));
    absl::StatusOr<Snapshot> snapshot = ParseSnapshot(input);
    EXPECT_FALSE(snapshot.ok());
    EXPECT_EQ(snapshot.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_FALSE(ParsePolicy(input).ok());
    EXPECT_FALSE(ParseDecisions(input).ok());
  }
}

std::string SampleSnapshotJson() {
  return SnapshotToJson(testing::GenerateRandomSnapshot(/*seed=*/7));
}

// Every prefix of a valid document is an error (a document cut anywhere is never accepted).
TEST(RobustnessTest, EveryTruncationIsRefused) {
  const std::string text = SampleSnapshotJson();
  ASSERT_TRUE(ParseSnapshot(text).ok());
  // The whole text minus the trailing newline and closing brace is the longest invalid prefix.
  const size_t step = text.size() > 20000 ? text.size() / 20000 : 1;
  for (size_t n = 0; n + 2 < text.size(); n += step) {
    absl::StatusOr<Snapshot> snapshot = ParseSnapshot(std::string_view(text).substr(0, n));
    ASSERT_FALSE(snapshot.ok()) << "prefix of " << n << " bytes accepted";
    EXPECT_EQ(snapshot.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

// Seeded random byte corruption: the reader may accept or refuse, but always returns.
TEST(RobustnessTest, RandomCorruptionNeverCrashes) {
  const std::string text = SampleSnapshotJson();
  uint64_t state = 20240601;
  int refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string corrupt = text;
    const int edits = 1 + static_cast<int>(testing::SplitMix64(state) % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = testing::SplitMix64(state) % corrupt.size();
      const uint64_t kind = testing::SplitMix64(state) % 3;
      const char byte = static_cast<char>(testing::SplitMix64(state) & 0xFF);
      if (kind == 0) {
        corrupt[pos] = byte;
      } else if (kind == 1) {
        corrupt.erase(pos, 1 + testing::SplitMix64(state) % 16);
      } else {
        corrupt.insert(pos, 1, byte);
      }
    }
    absl::StatusOr<Snapshot> snapshot = ParseSnapshot(corrupt);
    if (!snapshot.ok()) {
      ++refused;
      EXPECT_EQ(snapshot.status().code(), absl::StatusCode::kInvalidArgument);
    } else {
      // Whatever was accepted writes back as a readable document.
      EXPECT_TRUE(ParseSnapshot(SnapshotToJson(*snapshot)).ok());
    }
  }
  EXPECT_GT(refused, 1000) << "the corruption should break most documents";
}

TEST(RobustnessTest, HugeArraysOfTheWrongTypeAreRefusedQuickly) {
  std::string text = "{\"nodes\": [";
  for (int i = 0; i < 200000; ++i) text += i == 0 ? "1" : ",1";
  text += "]}";
  absl::StatusOr<Snapshot> snapshot = ParseSnapshot(text);
  ASSERT_FALSE(snapshot.ok());
  EXPECT_EQ(snapshot.status().message(), "nodes[0]: expected an object");
}

TEST(RobustnessTest, LargeLabelObjectsWithADuplicateAreRefused) {
  std::string labels;
  for (int i = 0; i < 1000; ++i) labels += "\"k" + std::to_string(i) + "\": \"v\", ";
  labels += "\"k500\": \"w\"";
  absl::StatusOr<Snapshot> snapshot =
      ParseSnapshot("{\"nodes\": [{\"id\": \"n\", \"labels\": {" + labels + "}}]}");
  ASSERT_FALSE(snapshot.ok());
  EXPECT_EQ(snapshot.status().message(), "nodes[0].labels.k500: duplicate key");
}

}  // namespace
}  // namespace gpupool::io
