// Text a peer chose, cut to a length fit for a log line or a status page: a unit's payload
// may be megabytes (sluice serve keeps taking them), its record must not be.
//
// Thread safety: a pure function.
#ifndef SLUICE_TEXT_SHORTENED_H_
#define SLUICE_TEXT_SHORTENED_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace sluice::text {

// `text` itself when it has at most `max` bytes; else its first `max` bytes (never ending
// inside a UTF-8 sequence) and "... (N bytes)", N being the whole text's size. Either way
// with control characters but tab written as \xNN ("\x1b[31m"), so that what a peer chose
// cannot drive a terminal or forge a line.
std::string shortened(std::string_view text, std::size_t max);

// "[" + shortened(text, max) + "]", with the text's own backslashes written as \\ and its own
// ']' as \x5d: how a unit's payload appears in a log line or on the terminal ("unit 3 [abc]
// failed"), so that neither a payload "x] failed: ... [" nor a literal "\x1b" in one can pass
// for the line's own words or for an escape.
std::string bracketed(std::string_view text, std::size_t max);
// The same without the brackets: a payload as /api/status and the page show it ("[" and
// "]" are the page's), where a literal "\x0a" must not read as an escaped newline.
std::string payload_shown(std::string_view text, std::size_t max);

// Where to cut `text` to keep at most `max` bytes without ending inside a UTF-8 sequence:
// `max` itself, or less, backed off to the start of the sequence there.
std::size_t utf8_cut(std::string_view text, std::size_t max);

// `text` whole, with control characters written as \xNN but tab and, when `keep_newlines`,
// newline (a Java stack trace's lines), and each byte outside well-formed UTF-8 as \xNN too,
// and so the bytes of a C1 control (U+0080-U+009F), a line or paragraph separator (U+2028,
// U+2029) or a bidirectional override or isolate (U+202A-U+202E, U+2066-U+2069), for a
// message whose text a filter or a stranger chose.
std::string printable(std::string_view text, bool keep_newlines);

// `text` with each newline followed by four spaces, unless a tab follows it already (a Java
// stack trace's "\tat ..."): a message of several lines printed on a terminal or into a log
// cannot start a line of its own there (a forged "... [info] unit 99 finished" line).
std::string indented_continuations(std::string_view text);

// `text` with each byte that is not part of a well-formed UTF-8 sequence (a stray 0xff, a
// truncated or overlong sequence, a surrogate) replaced by U+FFFD, for formats that must be
// UTF-8 (JSON, Prometheus labels) while payloads and messages are bytes a peer chose.
std::string valid_utf8(std::string_view text);

}  // namespace sluice::text

#endif  // SLUICE_TEXT_SHORTENED_H_
