#include "text/shortened.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::text {
namespace {

TEST(Shortened, ShortTextIsKept) {
  EXPECT_EQ(shortened("x=0 y=0", 16), "x=0 y=0");
  EXPECT_EQ(shortened(std::string(16, 'a'), 16), std::string(16, 'a'));
}

TEST(Shortened, LongTextIsCutAndSaysHowLongItWas) {
  EXPECT_EQ(shortened(std::string(8000000, 'A'), 4), "AAAA... (8000000 bytes)");
}

TEST(Shortened, NeverCutsInsideAUtf8Sequence) {
  // "aé" is 61 c3 a9: cutting at 2 bytes would leave half of the é.
  EXPECT_EQ(shortened("a\xc3\xa9zzz", 2), "a... (6 bytes)");
  EXPECT_EQ(shortened("a\xc3\xa9zzz", 3), "a\xc3\xa9... (6 bytes)");
}

TEST(Shortened, ControlCharactersAreWrittenAsEscapes) {
  EXPECT_EQ(shortened("a\x1b[31mred\ttab\nline\x7f", 64), "a\\x1b[31mred\ttab\\x0aline\\x7f");
  EXPECT_EQ(shortened("\x1b\x1b\x1b", 2), "\\x1b\\x1b... (3 bytes)");
}

// A payload in a log line's brackets cannot close them early, nor pass off a literal "\x1b"
// as an escaped ESC (an open item of stop 64): its own ']' and '\' are escaped, control
// characters as ever, and a long one is cut inside the brackets.
TEST(Bracketed, APayloadCannotCloseItsBracketsOrForgeAnEscape) {
  EXPECT_EQ(bracketed("x=0 [y]", 64), "[x=0 [y\\x5d]");
  EXPECT_EQ(bracketed("ok] failed: forged [z", 64), "[ok\\x5d failed: forged [z]");
  EXPECT_EQ(bracketed("a\\x1b\x1b", 64), "[a\\\\x1b\\x1b]");
  EXPECT_EQ(bracketed(std::string(300, ']'), 2), "[\\x5d\\x5d... (300 bytes)]");
  EXPECT_EQ(bracketed("", 64), "[]");
  // /api/status's units[].work: a literal "\x0a" and a newline differ (an outside review).
  EXPECT_EQ(payload_shown("a\\x0a\n", 64), "a\\\\x0a\\x0a");
}

TEST(Printable, KeepsNewlinesWhenAskedAndEscapesTheRest) {
  EXPECT_EQ(printable("java.lang.Error: \x1b]0;title\x07\n\tat X.y(X.java:1)", true),
            "java.lang.Error: \\x1b]0;title\\x07\n\tat X.y(X.java:1)");
  EXPECT_EQ(printable("a\nb", false), "a\\x0ab");
}

// Bytes outside well-formed UTF-8 are escaped too: a stranger's TLS identity put a lone 0xc3
// into sluiced's log (an outside review). Well-formed sequences stay as they are.
TEST(Printable, EscapesBytesThatAreNotUtf8) {
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", false), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(printable("a\xc3", false), "a\\xc3");
  EXPECT_EQ(printable("\xff\xc3(\xed\xa0\x80", false), "\\xff\\xc3(\\xed\\xa0\\x80");
  EXPECT_EQ(shortened("id\xc3", 64), "id\\xc3");
}

// Well-formed, and still acted on by terminals: a C1 control (U+009B is an 8-bit CSI) and a
// bidirectional override (U+202E reverses what follows on the line), escaped byte by byte (an
// outside review put both into a crash line); their neighbours stay.
TEST(Printable, EscapesC1ControlsAndBidirectionalOverrides) {
  EXPECT_EQ(printable("a\xc2\x9b" "31mb", false), "a\\xc2\\x9b31mb");
  EXPECT_EQ(printable("x\xe2\x80\xaey \xe2\x81\xa6z", false), "x\\xe2\\x80\\xaey \\xe2\\x81\\xa6z");
  EXPECT_EQ(printable("\xc2\xa0\xe2\x80\x94", false), "\xc2\xa0\xe2\x80\x94") << "no-break space, em dash";
  // A line separator is a new line to editors and log viewers (an outside review).
  EXPECT_EQ(printable("a\xe2\x80\xa8" "b\xe2\x80\xa9", false), "a\\xe2\\x80\\xa8b\\xe2\\x80\\xa9");
}

// A failure of several lines printed on stderr: its continuations are indented, so that none
// can pass for a line of sluice's own; a Java stack trace's tab-led lines stay as they are.
TEST(IndentedContinuations, NoLineOfAMessageStartsALineOfItsOwn) {
  EXPECT_EQ(indented_continuations("boom\n2026-11-26 sluice [info] forged\n\tat X.y(X.java:1)\n"),
            "boom\n    2026-11-26 sluice [info] forged\n\tat X.y(X.java:1)\n    ");
  EXPECT_EQ(indented_continuations("one line"), "one line");
}

TEST(ValidUtf8, KeepsWellFormedTextAndReplacesEveryStrayByte) {
  EXPECT_EQ(valid_utf8("plain, caf\xc3\xa9, \xe2\x82\xac, \xf0\x9f\x98\x80"),
            "plain, caf\xc3\xa9, \xe2\x82\xac, \xf0\x9f\x98\x80");
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(valid_utf8("a\xff" "b"), "a" + fffd + "b");
  EXPECT_EQ(valid_utf8("\xc3"), fffd);                                // cut short
  EXPECT_EQ(valid_utf8("\xc0\xaf"), fffd + fffd);                     // overlong '/'
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), fffd + fffd + fffd);          // a surrogate
  EXPECT_EQ(valid_utf8("\xf4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // past U+10FFFF
  EXPECT_EQ(valid_utf8(std::string_view("a\0b", 3)), std::string("a\0b", 3));
}

}  // namespace
}  // namespace sluice::text
