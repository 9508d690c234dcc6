#include "text/shortened.h"

namespace sluice::text {

std::string shortened(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  std::size_t cut = max;
  // Back off continuation bytes (10xxxxxx), then the lead byte of the sequence they belong to.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace sluice::text
