// The log backend's three line shapes (docs/operations.md quotes them), the one level, and
// the clear-line prefix, read back from stderr.
#include "log/backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <regex>
#include <string>

#include "log/log_output.h"
#include "sluice/logger.h"

namespace sluice::logging {
namespace {

// Everything written to fd 2 while `body` runs.
template <typename Body>
std::string captured_stderr(Body body) {
  std::FILE* file = std::tmpfile();
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(::fileno(file), STDERR_FILENO);
  body();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::string text;
  std::rewind(file);
  for (int c; (c = std::fgetc(file)) != EOF;) text.push_back(static_cast<char>(c));
  std::fclose(file);
  return text;
}

class LogBackend : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = Logger::level(); }
  void TearDown() override {
    Logger::set_level(saved_);
    log_output::set_clear_line_first(false);
    set_process_name("sluice");
  }
  LogLevel saved_ = LogLevel::kInfo;
};

TEST_F(LogBackend, FilterLinesAreBracketedPrefixLevelMessage) {
  Logger::set_level(LogLevel::kInfo);
  const std::string out = captured_stderr([] {
    Logger("count#1@b").warn("slow consumer");
    Logger("count#1@b").info("hello");
  });
  EXPECT_EQ(out, "[count#1@b] warn: slow consumer\n[count#1@b] info: hello\n");
}

// A message of several lines: each line its own prefixed line (continuation lines came out
// bare, and could not be told apart by grep or by the console that forwards them).
TEST_F(LogBackend, EachLineOfAMessageCarriesThePrefix) {
  Logger::set_level(LogLevel::kInfo);
  const std::string out = captured_stderr([] {
    Logger("m#0@local").info("line one\nline two\r\n");
    Logger("m#0@local").warn("\nafter an empty line");
  });
  EXPECT_EQ(out,
            "[m#0@local] info: line one\n[m#0@local] info: line two\n"
            "[m#0@local] warn: \n[m#0@local] warn: after an empty line\n");
}

// A filter's line may quote a payload a stranger chose: a CR that would write over the prefix,
// ESC, BEL, a bidirectional override are escaped, and a 10 MB line is cut at 64 KiB, saying
// how long it was (an outside review put all of them into serve's and sluiced's logs).
TEST_F(LogBackend, AFiltersLineIsEscapedAndCut) {
  Logger::set_level(LogLevel::kInfo);
  const std::string out = captured_stderr([] {
    Logger("m#0@local").info("x\x1b[2J\x1b]0;T\x07\xe2\x80\xaeY\rZ\tok");
    Logger("m#0@local").info(std::string(10000000, 'z'));
  });
  const std::string first = "[m#0@local] info: x\\x1b[2J\\x1b]0;T\\x07\\xe2\\x80\\xaeY\\x0dZ\tok\n";
  ASSERT_GE(out.size(), first.size());
  EXPECT_EQ(out.substr(0, first.size()), first);
  const std::string second = out.substr(first.size());
  EXPECT_LT(second.size(), (std::size_t{64} << 10) + 100);
  EXPECT_NE(second.find("zzz... (10000000 bytes)\n"), std::string::npos) << second.substr(second.size() - 60);
}

TEST_F(LogBackend, ProcessLinesHaveUtcTimeNamePidAndLevel) {
  Logger::set_level(LogLevel::kInfo);
  set_process_name("sluiced");
  const std::string out = captured_stderr([] { process_line(LogLevel::kWarn, "accept failed"); });
  const std::regex shape(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z sluiced\[(\d+)\] \[warn\] accept failed\n)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(out, m, shape)) << out;
  EXPECT_EQ(m[1].str(), std::to_string(::getpid()));
}

TEST_F(LogBackend, PlainLinesAreWrittenAsGiven) {
  const std::string out = captured_stderr([] { plain_line(LogLevel::kError, "sluice data plane (b): lost"); });
  EXPECT_EQ(out, "sluice data plane (b): lost\n");
}

// What a stranger may put in a logged name (a TLS-PSK identity, a HELLO's host name) cannot
// forge a line or reach the terminal: a newline becomes an indented continuation, other
// control characters \xNN.
TEST_F(LogBackend, ProcessAndPlainLinesStayOneLine) {
  Logger::set_level(LogLevel::kInfo);
  const std::string evil = "x\n1999-01-01T00:00:00.000Z sluiced[1] [info] forged\x1b[2J\a\tend";
  const std::string out = captured_stderr([&] {
    process_line(LogLevel::kWarn, "refused: the identity '" + evil + "'");
    plain_line(LogLevel::kError, "HELLO from unknown host '" + evil + "'");
  });
  // Every line starts with a timestamp or the plain line's text, or is an indented
  // continuation: none starts with the forged timestamp.
  for (std::size_t at = 0; at < out.size(); at = out.find('\n', at) + 1) {
    EXPECT_NE(out.compare(at, 10, "1999-01-01"), 0) << out;
    if (out.find('\n', at) == std::string::npos) break;
  }
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\a'), std::string::npos) << out;
  EXPECT_NE(out.find("'x\n    1999-01-01T00:00:00.000Z sluiced[1] [info] forged\\x1b[2J\\x07\tend'\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("HELLO from unknown host 'x\n    1999"), std::string::npos) << out;
}

// A Java stack trace in a failure reads as it does in Java: its "\tat" lines are continuations
// already, not indented again.
TEST_F(LogBackend, ATabContinuationIsNotIndentedAgain) {
  const std::string out = captured_stderr([] {
    process_line(LogLevel::kWarn, "java.lang.IllegalStateException: no\n\tat a.B.c(B.java:3)\nCaused by: x");
  });
  EXPECT_NE(out.find("no\n\tat a.B.c(B.java:3)\n    Caused by: x\n"), std::string::npos) << out;
}

TEST_F(LogBackend, OneLevelForEveryShape) {
  Logger::set_level(LogLevel::kWarn);
  const std::string quiet = captured_stderr([] {
    Logger("f#0@a").info("no");
    process_line(LogLevel::kInfo, "no");
    plain_line(LogLevel::kDebug, "no");
  });
  EXPECT_EQ(quiet, "");
  EXPECT_FALSE(enabled(LogLevel::kInfo));
  EXPECT_TRUE(enabled(LogLevel::kError));
  Logger::set_level(LogLevel::kDebug);
  EXPECT_NE(captured_stderr([] { Logger("f#0@a").debug("yes"); }), "");
}

TEST_F(LogBackend, EveryLineClearsTheProgressLineWhenAsked) {
  Logger::set_level(LogLevel::kInfo);
  log_output::set_clear_line_first(true);
  const std::string out = captured_stderr([] {
    Logger("f#0@a").info("x");
    plain_line(LogLevel::kInfo, "y");
  });
  EXPECT_EQ(out, "\r\033[K[f#0@a] info: x\n\r\033[Ky\n");
}

}  // namespace
}  // namespace sluice::logging
