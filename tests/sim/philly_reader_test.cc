// The Philly reader and the civil-time conversion: good rows, malformed rows with their exact
// messages, and dates across month and year boundaries.
#include <string>
#include <vector>

#include "gpupool/sim/philly.h"
#include "gpupool/sim/trace_job.h"
#include "gpupool/sim/utc_time.h"
#include "gtest/gtest.h"

namespace gpupool::sim {
namespace {

constexpr char kHeader[] = "timestamp,duration,num_gpus,gpu_time,cluster\n";

TEST(ParseUtcTime, EpochAndKnownDates) {
  EXPECT_EQ(*ParseUtcTime("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(*ParseUtcTime("1970-01-02"), 86400);
  // date -u -d '2017-10-01 00:00:00' +%s
  EXPECT_EQ(*ParseUtcTime("2017-10-01 00:00:00"), 1506816000);
  EXPECT_EQ(*ParseUtcTime("2017-10-09 07:01:55"), 1507532515);
}

TEST(ParseUtcTime, MonthAndYearBoundaries) {
  // The last second of a month and the first of the next are one second apart.
  EXPECT_EQ(*ParseUtcTime("2017-10-01 00:00:00") - *ParseUtcTime("2017-09-30 23:59:59"), 1);
  EXPECT_EQ(*ParseUtcTime("2018-01-01 00:00:00") - *ParseUtcTime("2017-12-31 23:59:59"), 1);
  // February: 28 days in 2017, 29 in 2016 and 2000, 28 in 1900-style century years (2100).
  EXPECT_EQ(*ParseUtcTime("2017-03-01") - *ParseUtcTime("2017-02-01"), 28 * 86400);
  EXPECT_EQ(*ParseUtcTime("2016-03-01") - *ParseUtcTime("2016-02-01"), 29 * 86400);
  EXPECT_EQ(*ParseUtcTime("2000-03-01") - *ParseUtcTime("2000-02-01"), 29 * 86400);
  EXPECT_EQ(*ParseUtcTime("2100-03-01") - *ParseUtcTime("2100-02-01"), 28 * 86400);
  EXPECT_FALSE(ParseUtcTime("2017-02-29").ok());
  EXPECT_TRUE(ParseUtcTime("2016-02-29").ok());
  EXPECT_FALSE(ParseUtcTime("2017-13-01").ok());
  EXPECT_FALSE(ParseUtcTime("2017-10-01 24:00:00").ok());
}

TEST(FormatUtcTime, RoundTrips) {
  for (const char* t : {"1970-01-01 00:00:00", "2017-02-28 23:59:59", "2016-02-29 12:00:00",
                        "2017-12-31 23:59:59", "2018-01-01 00:00:00", "2100-03-01 01:02:03"}) {
    EXPECT_EQ(FormatUtcTime(*ParseUtcTime(t)), t);
  }
}

TEST(ParsePhillyCsv, GoodRows) {
  const std::string text = std::string(kHeader) +
                           "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
                           "2017-10-09 06:13:03,2951.5,8,23612.0,6214e9\n"
                           "\n"
                           "2017-10-09 06:13:04,10.49,16,167.84,6214e9\r\n";
  auto jobs = ParsePhillyCsv(text, "philly.csv");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].submit_time, 1507532515);
  EXPECT_EQ((*jobs)[0].duration_s, 66);
  EXPECT_EQ((*jobs)[0].num_gpus, 1);
  EXPECT_EQ((*jobs)[0].cluster, "11cb48");
  EXPECT_EQ((*jobs)[0].line, 2);
  // Half up from the decimal digits.
  EXPECT_EQ((*jobs)[1].duration_s, 2952);
  EXPECT_EQ((*jobs)[2].duration_s, 10);
  EXPECT_EQ((*jobs)[2].num_gpus, 16);
  EXPECT_EQ((*jobs)[2].line, 5);
}

std::string Error(const std::string& rows) {
  auto jobs = ParsePhillyCsv(std::string(kHeader) + rows, "philly.csv");
  return jobs.ok() ? "ok" : std::string(jobs.status().message());
}

TEST(ParsePhillyCsv, MalformedRowsNameFileLineAndField) {
  EXPECT_EQ(Error("2017-10-09 07:01:55,66.0,x,66.0,11cb48\n"),
            "philly.csv:2: num_gpus: expected an integer, got \"x\"");
  EXPECT_EQ(Error("2017-10-09 07:01:55,66.0,1,66.0,a\n2017-10-09 07:01:55,abc,1,66.0,b\n"),
            "philly.csv:3: duration: expected a non-negative number, got \"abc\"");
  EXPECT_EQ(Error("2017-10-09 07:01:55,-5,1,66.0,a\n"),
            "philly.csv:2: duration: expected a non-negative number, got \"-5\"");
  EXPECT_EQ(Error("2017-10-09 07:01:55,5,0,66.0,a\n"),
            "philly.csv:2: num_gpus: expected a positive count, got 0");
  EXPECT_EQ(Error("2017-10-09 07:01:55,5,1,66.0\n"), "philly.csv:2: row: expected 5 fields, got 4");
  EXPECT_EQ(Error("2017-10-09 07:01:55,5,1,66.0,\n"), "philly.csv:2: cluster: empty");
  EXPECT_EQ(Error("2017-10-32 07:01:55,5,1,66.0,a\n"),
            "philly.csv:2: timestamp: expected \"YYYY-MM-DD HH:MM:SS\", got \"2017-10-32 "
            "07:01:55\" (day out of range)");
  EXPECT_EQ(Error("2017-10-09 07:01:55,5,1,zz,a\n"),
            "philly.csv:2: gpu_time: expected a non-negative number, got \"zz\"");
  auto no_header = ParsePhillyCsv("a,b\n", "t.csv");
  ASSERT_FALSE(no_header.ok());
  EXPECT_EQ(no_header.status().message(),
            "t.csv:1: header: expected \"timestamp,duration,num_gpus,gpu_time,cluster\", got "
            "\"a,b\"");
  EXPECT_FALSE(ParsePhillyCsv("", "t.csv").ok());
  EXPECT_EQ(ReadPhillyCsv("/nonexistent/philly.csv").status().code(), absl::StatusCode::kNotFound);
}

TEST(SelectWindow, KeepsJobsSubmittedInsideHalfOpenWindow) {
  const std::string text = std::string(kHeader) +
                           "2017-09-30 23:59:59,1,1,1,a\n"
                           "2017-10-01 00:00:00,1,1,1,a\n"
                           "2017-10-14 23:59:59,1,1,1,a\n"
                           "2017-10-15 00:00:00,1,1,1,a\n";
  auto jobs = ParsePhillyCsv(text, "w.csv");
  ASSERT_TRUE(jobs.ok());
  std::vector<TraceJob> w = SelectWindow(*jobs, *ParseUtcTime("2017-10-01"), 14);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].line, 3);
  EXPECT_EQ(w[1].line, 4);
  EXPECT_EQ(SelectWindow(*jobs, std::nullopt, 14).size(), 4u);
}

}  // namespace
}  // namespace gpupool::sim
