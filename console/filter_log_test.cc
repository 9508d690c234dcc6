// format_filter_log: forwarded filter log lines read as an embedded run's do.
#include "console/filter_log.h"

#include <gtest/gtest.h>

#include <array>
#include <initializer_list>
#include <string>

#include "sluice/logger.h"

namespace sluice::console {
namespace {

control::FilterLog log_of(std::initializer_list<std::array<std::string, 3>> lines, std::uint64_t held_back = 0) {
  control::FilterLog log;
  log.set_host("b");
  for (const auto& [prefix, level, text] : lines) {
    control::LogLine* l = log.add_lines();
    l->set_prefix(prefix);
    l->set_level(level);
    l->set_text(text);
  }
  log.set_not_forwarded(held_back);
  return log;
}

TEST(FilterLog, LinesHaveTheEmbeddedShape) {
  EXPECT_EQ(format_filter_log("b", log_of({{"count#1@b", "info", "hello"}, {"count#0@b", "warn", "two\nlines"}})),
            "[count#1@b] info: hello\n[count#0@b] warn: two\nlines\n");
}

// This console's SLUICE_LOG applies to forwarded lines too, as to an embedded run's.
TEST(FilterLog, LinesBelowTheConsolesLevelAreLeftOut) {
  const LogLevel before = Logger::level();
  Logger::set_level(LogLevel::kWarn);
  const std::string out = format_filter_log(
      "b", log_of({{"count#1@b", "info", "quiet"}, {"count#0@b", "warn", "loud"}, {"count#0@b", "notice", "odd"}}));
  Logger::set_level(before);
  EXPECT_EQ(out, "[count#0@b] warn: loud\n[count#0@b] notice: odd\n");
}

TEST(FilterLog, APrefixWithoutAHostGetsTheHost) {
  EXPECT_EQ(format_filter_log("b", log_of({{"sluice", "warn", "the JVM ..."}})), "[sluice@b] warn: the JVM ...\n");
}

TEST(FilterLog, HeldBackLinesAreCountedAndSaidWhereTheyAre) {
  EXPECT_EQ(format_filter_log("b", log_of({}, 1234)),
            "sluice: host b: 1234 filter log lines not shown here (its filters logged faster than the forwarding "
            "limit); every line is in that host's sluiced log\n");
  EXPECT_EQ(format_filter_log("b", log_of({})), "");
}

TEST(FilterLog, ControlCharactersCannotDriveTheTerminal) {
  EXPECT_EQ(format_filter_log("b", log_of({{"f#0@b", "info", "a\033[2Jb\rc\td"}})), "[f#0@b] info: a?[2Jb?c\td\n");
}

}  // namespace
}  // namespace sluice::console
