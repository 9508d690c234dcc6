#include "text/shortened.h"

#include <cstdio>

namespace sluice::text {

// Control characters (and DEL) as \xNN: a payload's ESC must not reach a terminal, a log
// or a Prometheus label as itself. Tab stays.
std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && !(keep_newlines && c == '\n')) || u == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", u);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

std::size_t utf8_cut(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text.size();
  std::size_t cut = max;
  // Back off continuation bytes (10xxxxxx): the cut then falls before their lead byte.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return cut;
}

std::string shortened(std::string_view text, std::size_t max) {
  if (text.size() <= max) return printable(text, false);
  return printable(text.substr(0, utf8_cut(text, max)), false) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace sluice::text
