// query_client: the query server's C++ client (README, docs/application.md). Deploys the
// topology once through sluice/application.h, submits every query, and assembles each
// answer from its strips.
//
//   query_client TOPOLOGY [--hosts a=ADDR:PORT,... --token-file F] [--out DIR] [--check] QUERY...
//
// --out DIR writes each answer as DIR/answer-N.pgm; --check recomputes every answer here
// from the image's formula and fails (exit 1) on any difference.
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <sluice/application.h>

#include "query_image.h"

namespace {

struct Answer {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint8_t> pixels;
  std::uint32_t strips = 0;
};

// What the pipeline must answer: the region, transformed, 2x2 means.
std::vector<std::uint8_t> expected(const query::Query& q) {
  std::vector<std::uint8_t> out(std::size_t{q.w / 2} * (q.h / 2));
  for (std::uint32_t r = 0; r < q.h / 2; ++r) {
    for (std::uint32_t c = 0; c < q.w / 2; ++c) {
      unsigned sum = 0;
      for (std::uint32_t dy = 0; dy < 2; ++dy) {
        for (std::uint32_t dx = 0; dx < 2; ++dx) sum += q.apply(query::pixel(q.x + 2 * c + dx, q.y + 2 * r + dy));
      }
      out[std::size_t{r} * (q.w / 2) + c] = static_cast<std::uint8_t>(sum / 4);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string topology, out_dir;
  bool check = false;
  sluice::ApplicationOptions options;
  std::vector<std::string> queries;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--hosts" || arg == "--token-file" || arg == "--out") && i + 1 < argc) {
      (arg == "--hosts" ? options.hosts : arg == "--token-file" ? options.token_file : out_dir) = argv[++i];
    } else if (arg == "--check") {
      check = true;
    } else if (arg.rfind("--", 0) == 0) {
      std::cerr << "usage: query_client TOPOLOGY [--hosts LIST --token-file F] [--out DIR] [--check] QUERY...\n";
      return 2;
    } else if (topology.empty()) {
      topology = arg;
    } else {
      queries.push_back(arg);
    }
  }
  if (topology.empty() || queries.empty()) {
    std::cerr << "usage: query_client TOPOLOGY [--hosts LIST --token-file F] [--out DIR] [--check] QUERY...\n"
                 "  e.g. query_client examples/query.yaml 'x=0 y=0 w=512 h=512 op=invert'\n";
    return 2;
  }
  int status = 0;
  try {
    sluice::Application app = sluice::Application::open(topology, options);
    app.start();
    std::vector<sluice::Unit> units;
    for (const std::string& q : queries) units.push_back(app.submit(q));  // queued, run in order
    for (std::size_t n = 0; n < units.size(); ++n) {
      Answer answer;
      while (auto strip = units[n].results().read()) {
        std::uint32_t header[4];
        std::memcpy(header, strip->data(), sizeof header);
        const std::uint32_t row = header[0], rows = header[1], width = header[2];
        if (answer.pixels.empty()) answer.width = width;
        answer.height = std::max(answer.height, row + rows);
        answer.pixels.resize(std::size_t{answer.height} * answer.width);
        std::memcpy(&answer.pixels[std::size_t{row} * width], strip->data() + query::kHeader, std::size_t{rows} * width);
        ++answer.strips;
      }
      const sluice::UnitReport report = units[n].wait();
      if (!report.finished) {
        std::cout << "query " << n << " [" << queries[n] << "] failed: " << report.message << "\n";
        status = 1;
        continue;
      }
      std::uint64_t sum = 0;
      for (std::uint8_t p : answer.pixels) sum = sum * 31 + p;
      std::cout << "query " << n << " [" << queries[n] << "]: " << answer.width << "x" << answer.height << " px in "
                << answer.strips << " strips, " << report.seconds * 1e3 << " ms, checksum " << std::hex << sum
                << std::dec << "\n";
      if (!out_dir.empty()) {
        std::ofstream pgm(out_dir + "/answer-" + std::to_string(n) + ".pgm", std::ios::binary);
        pgm << "P5\n" << answer.width << " " << answer.height << "\n255\n";
        pgm.write(reinterpret_cast<const char*>(answer.pixels.data()), static_cast<std::streamsize>(answer.pixels.size()));
      }
      if (check && answer.pixels != expected(query::Query::parse(queries[n]))) {
        std::cout << "query " << n << ": the answer differs from the one computed here\n";
        status = 1;
      }
    }
    app.stop();
  } catch (const std::exception& e) {
    std::cerr << "query_client: " << e.what() << "\n";
    return 1;
  }
  return status;
}
