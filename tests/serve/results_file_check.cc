// Checks a `sluice submit --results FILE` of the Application test filters
// (application/test_filters/app_filters.cc) byte for byte: the file must be exactly the
// buffers the sources of unit UNIT wrote (COPIES copies, COUNT buffers of SIZE bytes each),
// whole, each in order per copy (application/results_check.h).
//   serve_results_check FILE UNIT COPIES COUNT SIZE
// Exit 0 and "ok: ..." when it is; 1 and what is wrong otherwise.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "application/results_check.h"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: serve_results_check FILE UNIT COPIES COUNT SIZE\n";
    return 2;
  }
  const std::uint64_t unit = std::strtoull(argv[2], nullptr, 10);
  const int copies = std::atoi(argv[3]);
  const std::uint64_t count = std::strtoull(argv[4], nullptr, 10);
  const std::uint64_t size = std::max<std::uint64_t>(40, std::strtoull(argv[5], nullptr, 10));
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "cannot read " << argv[1] << "\n";
    return 1;
  }
  const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() != copies * count * size) {
    std::cerr << argv[1] << ": " << bytes.size() << " bytes, want " << copies * count * size << " (" << copies
              << " copies x " << count << " buffers x " << size << " bytes)\n";
    return 1;
  }
  sluice::ResultsCheck check(unit, copies, count, size);
  for (std::size_t at = 0; at < bytes.size(); at += size) check.add(bytes.data() + at, size);
  if (!check.complete()) {
    std::cerr << argv[1] << ": " << check.problem() << "\n";
    return 1;
  }
  std::cout << "ok: " << copies * count << " buffers of unit " << unit << ", " << bytes.size() << " bytes\n";
  return 0;
}
