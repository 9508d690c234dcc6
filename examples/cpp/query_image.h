// The query-server example's synthetic image and query format, shared by its filters
// (query_filters.cc) and its client (query_client.cc, which recomputes the answer to check it).
//
// Image: kImageSide x kImageSide 8-bit grey pixels, pixel(x, y) below; built once per
// TileSource object and kept across units of work (that is the point of a deployed app).
// Query (the unit's payload): "x=X y=Y w=W h=H [op=none|invert|threshold:T]"; W and H even.
// A strip (one buffer): a 16-byte header {u32 row, u32 rows, u32 width, u32 0}, then rows
// x width pixels; row counts from the region's top. Key = strip index.
#ifndef SLUICE_EXAMPLES_QUERY_IMAGE_H_
#define SLUICE_EXAMPLES_QUERY_IMAGE_H_

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

namespace query {

inline constexpr std::uint32_t kImageSide = 2048;
inline constexpr std::uint32_t kStripRows = 16;
inline constexpr std::size_t kHeader = 16;

inline std::uint8_t pixel(std::uint32_t x, std::uint32_t y) {
  return static_cast<std::uint8_t>((x * 7 + y * 13 + ((x * y) >> 7)) & 0xff);
}

struct Query {
  std::uint32_t x = 0, y = 0, w = 0, h = 0;
  std::string op = "none";  // none, invert, threshold:T

  // Throws std::invalid_argument saying what is wrong and what would be right.
  static Query parse(const std::string& text) {
    Query q;
    bool has_w = false, has_h = false;
    std::istringstream in(text);
    for (std::string item; in >> item;) {
      const auto eq = item.find('=');
      if (eq == std::string::npos) throw std::invalid_argument("query item '" + item + "' is not key=value");
      const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
      if (key == "op") {
        q.op = value;
        continue;
      }
      std::uint32_t n = 0;
      try {
        std::size_t used = 0;
        const unsigned long v = std::stoul(value, &used);
        if (used != value.size() || v > kImageSide) throw std::out_of_range(value);
        n = static_cast<std::uint32_t>(v);
      } catch (const std::exception&) {
        throw std::invalid_argument(key + "=" + value + " is not a whole number from 0 to " + std::to_string(kImageSide));
      }
      if (key == "x") q.x = n;
      else if (key == "y") q.y = n;
      else if (key == "w") q.w = n, has_w = true;
      else if (key == "h") q.h = n, has_h = true;
      else throw std::invalid_argument("unknown query key '" + key + "'; use x, y, w, h, op");
    }
    if (!has_w || !has_h || q.w == 0 || q.h == 0 || q.w % 2 || q.h % 2) {
      throw std::invalid_argument("a query needs an even w and h, e.g. 'x=0 y=0 w=256 h=256 op=invert'");
    }
    if (q.x + q.w > kImageSide || q.y + q.h > kImageSide) {
      throw std::invalid_argument("the region " + std::to_string(q.w) + "x" + std::to_string(q.h) + " at (" +
                                  std::to_string(q.x) + "," + std::to_string(q.y) + ") leaves the " +
                                  std::to_string(kImageSide) + "x" + std::to_string(kImageSide) + " image");
    }
    if (q.op != "none" && q.op != "invert" && q.op.rfind("threshold:", 0) != 0) {
      throw std::invalid_argument("unknown op '" + q.op + "'; use none, invert or threshold:T");
    }
    return q;
  }

  // What the Java transform does to one pixel (QueryTransform.java does the same).
  std::uint8_t apply(std::uint8_t p) const {
    if (op == "invert") return static_cast<std::uint8_t>(255 - p);
    if (op.rfind("threshold:", 0) == 0) return p >= std::stoul(op.substr(10)) ? 255 : 0;
    return p;
  }
};

}  // namespace query

#endif  // SLUICE_EXAMPLES_QUERY_IMAGE_H_
