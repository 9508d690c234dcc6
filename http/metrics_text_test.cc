#include "http/metrics_text.h"

#include <gtest/gtest.h>

#include <limits>

namespace sluice::http {
namespace {

TEST(MetricsText, WritesHelpTypeAndSamples) {
  MetricsText m;
  m.family("sluice_stream_buffers_total", "counter", "Buffers written.");
  m.sample("sluice_stream_buffers_total", {{"stream", "a.out -> b.in"}}, std::uint64_t{18446744073709551615ULL});
  m.family("sluice_run_elapsed_seconds", "gauge", "Seconds since the run started.");
  m.sample("sluice_run_elapsed_seconds", {}, 1.5);
  EXPECT_EQ(m.str(),
            "# HELP sluice_stream_buffers_total Buffers written.\n"
            "# TYPE sluice_stream_buffers_total counter\n"
            "sluice_stream_buffers_total{stream=\"a.out -> b.in\"} 18446744073709551615\n"
            "# HELP sluice_run_elapsed_seconds Seconds since the run started.\n"
            "# TYPE sluice_run_elapsed_seconds gauge\n"
            "sluice_run_elapsed_seconds 1.5\n");
}

TEST(MetricsText, EscapesLabelValuesAndHelp) {
  MetricsText m;
  m.family("x", "gauge", "a \\ b\nc \"d\"");
  m.sample("x", {{"message", "say \"hi\"\\\nbye"}, {"k", ""}}, 1);
  EXPECT_EQ(m.str(),
            "# HELP x a \\\\ b\\nc \"d\"\n"
            "# TYPE x gauge\n"
            "x{message=\"say \\\"hi\\\"\\\\\\nbye\",k=\"\"} 1\n");
}

// A histogram's buckets are cumulative and end with +Inf, whose count is _count.
TEST(MetricsText, WritesAHistogramWithCumulativeBuckets) {
  MetricsText m;
  m.histogram("x_seconds", "How long.", {{"topology", "t"}}, {0.1, 1}, {2, 0}, 3, 12.5);
  EXPECT_EQ(m.str(),
            "# HELP x_seconds How long.\n"
            "# TYPE x_seconds histogram\n"
            "x_seconds_bucket{topology=\"t\",le=\"0.1\"} 2\n"
            "x_seconds_bucket{topology=\"t\",le=\"1\"} 2\n"
            "x_seconds_bucket{topology=\"t\",le=\"+Inf\"} 5\n"
            "x_seconds_sum{topology=\"t\"} 12.5\n"
            "x_seconds_count{topology=\"t\"} 5\n");
}

TEST(MetricsText, DoublesRoundTripInTheirShortestForm) {
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(0), "0");
  EXPECT_EQ(format_double(1e-9), "1e-09");
  // Whole numbers whole (an exit status was "1.3e+02": an outside review).
  EXPECT_EQ(format_double(130), "130");
  EXPECT_EQ(format_double(-1), "-1");
  EXPECT_EQ(format_double(-0.0), "0");
  EXPECT_EQ(format_double(1e15), "1000000000000000");
  EXPECT_EQ(format_double(1e300), "1e+300");
  EXPECT_EQ(format_double(123456789.125), "123456789.125");
  EXPECT_EQ(format_double(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_double(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_double(std::numeric_limits<double>::quiet_NaN()), "NaN");
  const double third = 1.0 / 3.0;
  EXPECT_EQ(std::strtod(format_double(third).c_str(), nullptr), third);
}

}  // namespace
}  // namespace sluice::http
