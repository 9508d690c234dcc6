// The control decoder's smoke fuzz run, without libFuzzer (any compiler; ctest
// control.fuzz_smoke). For a few seconds it feeds the decoder valid frames of every message
// type, back to back and split anywhere, random bytes, and mutations of valid frames (bit
// flips, cuts, splices, rewritten lengths), and checks what comes out:
// - valid frames decode to exactly the messages that were encoded, nothing left over;
// - anything else obeys fuzz_check.h's rules (decoded messages round-trip, rejections say
//   why and are final);
// - each kind of outcome happened (valid frames decoded, mutants decoded, mutants rejected,
//   mutants incomplete): a run that saw only one kind tested nothing.
// Exit status 1 with the reason when a check fails. The libFuzzer build
// (-DSLUICE_BUILD_FUZZERS=ON with clang) explores far better, see docs/protocol.md.
//   control_fuzz_smoke [SECONDS] [SEED]
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "control/fuzz_check.h"

namespace {

using sluice::control::Envelope;

std::vector<Envelope> messages() {
  std::vector<Envelope> e(23);
  e[0].mutable_hello()->set_protocol_version(2);
  e[0].mutable_hello()->set_client("sluice console pid 1");
  e[1].mutable_auth_result()->set_ok(true);
  e[1].mutable_auth_result()->set_host("h");
  auto* l = e[2].mutable_launch();
  l->set_application_id("app");
  l->set_topology_text("name: x\nfilters: {}\n");
  auto* hp = l->add_placement();
  hp->set_host("a");
  (*hp->mutable_copies())["f"].add_index(0);
  e[3].mutable_app_ready()->set_data_address("127.0.0.1:1");
  (*e[4].mutable_wiring()->mutable_peers())["b"] = "127.0.0.1:2";
  e[5].mutable_started()->set_host("a");
  e[6].mutable_start_unit()->set_payload("w");
  e[7].mutable_unit_done()->add_streams()->set_buffers(7);
  e[8].mutable_progress()->add_streams()->set_label("a.out -> b.in");
  e[9].mutable_failure()->set_message("boom");
  e[10].mutable_abort()->set_reason("r");
  e[11].mutable_shutdown();
  e[12].mutable_heartbeat()->set_sequence(3);
  e[13].mutable_exit_report()->set_signal(9);
  e[14].mutable_error()->set_message("no");
  auto* line = e[15].mutable_filter_log()->add_lines();
  line->set_prefix("f#0@a");
  line->set_text("hello");
  e[16].mutable_submit()->set_work("count=3");
  e[17].mutable_accepted()->set_index(4);
  e[18].mutable_result_chunk()->set_data(std::string("\x00\x01\xff", 3));
  e[18].mutable_result_chunk()->set_more(true);
  auto* ended = e[19].mutable_unit_ended();
  ended->set_index(4);
  ended->set_seconds(0.25);
  ended->mutable_failure()->set_filter("stage");
  ended->add_streams()->set_buffers(9);
  e[20].mutable_stop();
  e[21].mutable_stopping()->set_units_left(2);
  // A double field may carry any 64 bits, a NaN among them (libFuzzer found one): it must
  // round-trip, although a NaN is never equal to itself.
  std::uint64_t nan_bits = 0xffffffffffff0010ULL;
  double nan;
  std::memcpy(&nan, &nan_bits, sizeof nan);
  e[22].mutable_unit_ended()->set_seconds(nan);
  return e;
}

int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok && failures++ < 10) std::cerr << "control_fuzz_smoke: FAILED: " << what << "\n";
}

sluice::control::DecodeOutcome decode(const std::string& s, std::size_t split, std::size_t max = 1 << 16) {
  return sluice::control::decode_checked(reinterpret_cast<const std::uint8_t*>(s.data()), s.size(), split, max);
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  std::mt19937_64 rng(argc > 2 ? std::strtoull(argv[2], nullptr, 10) : std::random_device{}());
  const std::vector<Envelope> originals = messages();
  std::vector<std::string> corpus;
  for (const auto& m : originals) corpus.push_back(sluice::control::encode(m));

  // The limits, once.
  expect(decode(std::string(4, '\0'), 2).rejected, "a frame of length 0 is rejected");
  const std::string huge = std::string("\x00\x01\x00\x01", 4) + "x";
  auto big = decode(huge, 4);
  expect(big.rejected && big.error.find("exceeds the limit") != std::string::npos,
         "a frame over the limit is rejected before its body arrives: " + big.error);

  std::uint64_t valid = 0, decoded = 0, rejected = 0, incomplete = 0, runs = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    ++runs;
    std::string input;
    const int kind = static_cast<int>(rng() % 5);
    if (kind == 1) {  // several valid frames back to back, split anywhere
      std::vector<std::size_t> sent;
      for (int i = 0, n = 1 + static_cast<int>(rng() % 4); i < n; ++i) {
        sent.push_back(rng() % corpus.size());
        input += corpus[sent.back()];
      }
      auto out = decode(input, rng() % (input.size() + 1));
      bool same = !out.rejected && out.left == 0 && out.messages.size() == sent.size();
      for (std::size_t i = 0; same && i < sent.size(); ++i) {
        same = sluice::control::same_message(out.messages[i], originals[sent[i]]);
      }
      expect(same, "valid frames decode to the messages that were encoded" +
                       (out.rejected ? ", not a rejection: " + out.error : std::string()));
      valid += same;
      continue;
    }
    if (kind == 0) {  // random bytes
      input.resize(rng() % 256);
      for (char& c : input) c = static_cast<char>(rng());
    } else {  // a mutated frame
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
    // decode_checked aborts when a rule breaks; here, count the outcomes.
    auto out = decode(input, input.empty() ? 0 : rng() % (input.size() + 1));
    if (out.rejected) {
      ++rejected;
    } else if (!out.messages.empty()) {
      ++decoded;
    } else if (out.left > 0) {
      ++incomplete;
    }
  }
  expect(valid > 0, "some valid frames were decoded");
  expect(decoded > 0, "some mutated inputs decoded to messages");
  expect(rejected > 0, "some mutated inputs were rejected");
  expect(incomplete > 0, "some mutated inputs were incomplete");
  std::cout << "control decoder: " << runs << " inputs in " << seconds << " s: " << valid
            << " runs of valid frames decoded exactly, " << decoded << " mutants decoded (and round-tripped), "
            << rejected << " rejected with a reason, " << incomplete << " incomplete\n";
  if (failures > 0) {
    std::cerr << "control_fuzz_smoke: " << failures << " check(s) failed\n";
    return 1;
  }
  return 0;
}
