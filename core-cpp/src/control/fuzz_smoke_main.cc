// A driver for fuzz_control.cc without libFuzzer (any compiler): for a few seconds, feeds
// the decoder random bytes and mutations (bit flips, cuts, splices, rewritten lengths) of
// valid frames of every message type. The CI smoke run; the libFuzzer build
// (-DSLUICE_BUILD_FUZZERS=ON with clang) explores far better, see docs/protocol.md.
//   control_fuzz_smoke [SECONDS] [SEED]
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "control/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::string> seeds() {
  using namespace sluice::control;
  std::vector<Envelope> e(17);
  e[0].mutable_hello()->set_client_nonce(std::string(32, 'n'));
  e[1].mutable_challenge()->set_server_nonce(std::string(32, 's'));
  e[2].mutable_auth_response()->set_mac(std::string(32, 'm'));
  e[3].mutable_auth_result()->set_ok(true);
  auto* l = e[4].mutable_launch();
  l->set_application_id("app");
  l->set_topology_text("name: x\nfilters: {}\n");
  auto* hp = l->add_placement();
  hp->set_host("a");
  (*hp->mutable_copies())["f"].add_index(0);
  e[5].mutable_app_ready()->set_data_address("127.0.0.1:1");
  (*e[6].mutable_wiring()->mutable_peers())["b"] = "127.0.0.1:2";
  e[7].mutable_started()->set_host("a");
  e[8].mutable_start_unit()->set_payload("w");
  e[9].mutable_unit_done()->add_streams()->set_buffers(7);
  e[10].mutable_progress()->add_streams()->set_label("a.out -> b.in");
  e[11].mutable_failure()->set_message("boom");
  e[12].mutable_abort()->set_reason("r");
  e[13].mutable_shutdown();
  e[14].mutable_heartbeat()->set_sequence(3);
  e[15].mutable_exit_report()->set_signal(9);
  e[16].mutable_error()->set_message("no");
  std::vector<std::string> out;
  for (const auto& m : e) out.push_back(encode(m));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  std::mt19937_64 rng(argc > 2 ? std::strtoull(argv[2], nullptr, 10) : std::random_device{}());
  const std::vector<std::string> corpus = seeds();
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::uint64_t runs = 0;
  while (std::chrono::steady_clock::now() < end) {
    std::string input;
    switch (rng() % 5) {
      case 0:  // random bytes
        input.resize(rng() % 256);
        for (char& c : input) c = static_cast<char>(rng());
        break;
      case 1:  // several valid frames back to back
        for (int i = 0, n = 1 + static_cast<int>(rng() % 4); i < n; ++i) input += corpus[rng() % corpus.size()];
        break;
      default: {  // a mutated frame
        input = corpus[rng() % corpus.size()];
        for (int i = 0, n = 1 + static_cast<int>(rng() % 8); i < n && !input.empty(); ++i) {
          switch (rng() % 4) {
            case 0: input[rng() % input.size()] ^= static_cast<char>(1u << (rng() % 8)); break;
            case 1: input.resize(rng() % input.size()); break;
            case 2: input.insert(rng() % input.size(), corpus[rng() % corpus.size()]); break;
            case 3: input[rng() % std::min<std::size_t>(4, input.size())] = static_cast<char>(rng()); break;
          }
        }
      }
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
    ++runs;
  }
  std::cout << "control decoder: " << runs << " inputs in " << seconds << " s, no crash\n";
  return 0;
}
