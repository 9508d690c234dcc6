#include "text/shortened.h"

#include <cstdio>

namespace sluice::text {

std::size_t utf8_cut(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text.size();
  std::size_t cut = max;
  // Back off continuation bytes (10xxxxxx): the cut then falls before their lead byte.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return cut;
}

namespace {

// The length of the well-formed UTF-8 sequence at text[at] (Unicode's table 3-7), or 0.
std::size_t utf8_sequence(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) -> unsigned {
    return at + i < text.size() ? static_cast<unsigned char>(text[at + i]) : 0u;
  };
  const auto tail = [&](std::size_t i, unsigned lo, unsigned hi) { return byte(i) >= lo && byte(i) <= hi; };
  const unsigned lead = byte(0);
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return tail(1, 0x80, 0xbf) ? 2 : 0;
  if (lead >= 0xe0 && lead <= 0xef) {
    const unsigned lo = lead == 0xe0 ? 0xa0 : 0x80;  // not overlong
    const unsigned hi = lead == 0xed ? 0x9f : 0xbf;  // not a surrogate
    return tail(1, lo, hi) && tail(2, 0x80, 0xbf) ? 3 : 0;
  }
  if (lead >= 0xf0 && lead <= 0xf4) {
    const unsigned lo = lead == 0xf0 ? 0x90 : 0x80;
    const unsigned hi = lead == 0xf4 ? 0x8f : 0xbf;  // at most U+10FFFF
    return tail(1, lo, hi) && tail(2, 0x80, 0xbf) && tail(3, 0x80, 0xbf) ? 4 : 0;
  }
  return 0;
}

// A well-formed sequence a terminal or a viewer still acts on: a C1 control (U+0080-U+009F:
// U+009B is an 8-bit CSI), a line or paragraph separator (U+2028, U+2029: a new line to
// editors and log viewers) or a bidirectional override or isolate (U+202A-U+202E,
// U+2066-U+2069), which reorders what follows it on the line.
bool acting_sequence(std::string_view s) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  if (s.size() == 2) return b(0) == 0xc2 && b(1) <= 0x9f;
  if (s.size() == 3 && b(0) == 0xe2 && b(1) == 0x80) return b(2) >= 0xa8 && b(2) <= 0xae;  // and U+2028/9
  if (s.size() == 3 && b(0) == 0xe2 && b(1) == 0x81) return b(2) >= 0xa6 && b(2) <= 0xa9;
  return false;
}

}  // namespace

// Control characters (and DEL, C1 controls and bidirectional overrides) as \xNN: a payload's
// ESC must not reach a terminal, a log or a Prometheus label as itself. Tab stays. So are bytes outside well-formed UTF-8 (a
// stray 0xc3 from a stranger's TLS identity broke UTF-8 log shippers: an outside review).
std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto u = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8_sequence(text, i);
    if (n == 0 || (u < 0x20 && u != '\t' && !(keep_newlines && u == '\n')) || u == 0x7f ||
        acting_sequence(text.substr(i, n))) {
      // The byte, or each byte of an acting sequence.
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", u);
      out += escaped;
      ++i;
      for (std::size_t k = 1; n > 1 && k < n; ++k, ++i) {
        std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(text[i]));
        out += escaped;
      }
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string indented_continuations(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\n' && !(i + 1 < text.size() && text[i + 1] == '\t')) out += "    ";
  }
  return out;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (const std::size_t n = utf8_sequence(text, i); n != 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    }
  }
  return out;
}

std::string shortened(std::string_view text, std::size_t max) {
  if (text.size() <= max) return printable(text, false);
  return printable(text.substr(0, utf8_cut(text, max)), false) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string payload_shown(std::string_view text, std::size_t max) {
  const std::string_view kept = text.substr(0, utf8_cut(text, max));
  std::string own;  // the payload's own '\\' and ']' made unambiguous before printable's escapes
  own.reserve(kept.size());
  for (const char c : kept) {
    if (c == '\\') own += "\\\\";
    else if (c == ']') own += "\\x5d";
    else own += c;
  }
  std::string out = printable(own, false);
  if (kept.size() < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string bracketed(std::string_view text, std::size_t max) { return "[" + payload_shown(text, max) + "]"; }

}  // namespace sluice::text
