// The query server's C++ filters (examples/query.yaml):
//   TileSource  keeps the image in memory across units; per query, cuts the region into
//               strips of 16 rows, copy c taking strips c, c + copies, ...
//   Downsample  halves each strip in both directions (2x2 mean) and sends it on (to the
//               client, in the example).
// The Java filter between them (org.sluice.examples.QueryTransform) applies the query's op.
#include <cstring>
#include <vector>

#include <sluice/sluice.h>

#include "query_image.h"

namespace {

class TileSource : public sluice::Filter {
 public:
  void init(sluice::Context& ctx) override {
    if (!image_.empty()) return;  // built once, kept for every later unit
    image_.resize(std::size_t{query::kImageSide} * query::kImageSide);
    for (std::uint32_t y = 0; y < query::kImageSide; ++y) {
      for (std::uint32_t x = 0; x < query::kImageSide; ++x) image_[std::size_t{y} * query::kImageSide + x] = query::pixel(x, y);
    }
    ctx.log().info("image built (" + std::to_string(image_.size() >> 20) + " MiB), kept across queries");
  }

  void process(sluice::Context& ctx) override {
    query::Query q;
    try {
      q = query::Query::parse(ctx.work());
    } catch (const std::invalid_argument& e) {
      throw sluice::Error(std::string("bad query '") + ctx.work() + "': " + e.what());
    }
    auto& out = ctx.output("out");
    const std::uint32_t strips = (q.h + query::kStripRows - 1) / query::kStripRows;
    for (std::uint32_t s = static_cast<std::uint32_t>(ctx.copy_index()); s < strips;
         s += static_cast<std::uint32_t>(ctx.copy_count())) {
      const std::uint32_t row = s * query::kStripRows;
      const std::uint32_t rows = std::min(query::kStripRows, q.h - row);
      sluice::Buffer b = out.allocate();
      const std::size_t size = query::kHeader + std::size_t{rows} * q.w;
      if (size > b.capacity()) {
        throw sluice::Error("a strip of " + std::to_string(size) + " bytes does not fit the stream's buffer_size " +
                            std::to_string(b.capacity()) + "; raise buffer_size or ask for a narrower region");
      }
      b.resize(size);
      const std::uint32_t header[4] = {row, rows, q.w, 0};
      std::memcpy(b.data(), header, sizeof header);
      for (std::uint32_t r = 0; r < rows; ++r) {
        std::memcpy(b.data() + query::kHeader + std::size_t{r} * q.w,
                    &image_[std::size_t{q.y + row + r} * query::kImageSide + q.x], q.w);
      }
      b.set_key(s);
      out.write(std::move(b));
    }
  }

 private:
  std::vector<std::uint8_t> image_;
};

class Downsample : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    auto& out = ctx.output("out");
    while (auto strip = in.read()) {
      std::uint32_t header[4];
      std::memcpy(header, strip->data(), sizeof header);
      const std::uint32_t row = header[0], rows = header[1], width = header[2];
      const auto* px = reinterpret_cast<const std::uint8_t*>(strip->data()) + query::kHeader;
      sluice::Buffer half = out.allocate();
      half.resize(query::kHeader + std::size_t{rows / 2} * (width / 2));
      const std::uint32_t half_header[4] = {row / 2, rows / 2, width / 2, 0};
      std::memcpy(half.data(), half_header, sizeof half_header);
      auto* dst = reinterpret_cast<std::uint8_t*>(half.data()) + query::kHeader;
      for (std::uint32_t r = 0; r + 1 < rows; r += 2) {
        for (std::uint32_t c = 0; c + 1 < width; c += 2) {
          const unsigned sum = px[r * width + c] + px[r * width + c + 1] + px[(r + 1) * width + c] +
                               px[(r + 1) * width + c + 1];
          dst[(r / 2) * (width / 2) + c / 2] = static_cast<std::uint8_t>(sum / 4);
        }
      }
      half.set_key(strip->key());
      out.write(std::move(half));
    }
  }
};

}  // namespace

SLUICE_FILTER(TileSource)
SLUICE_FILTER(Downsample)
