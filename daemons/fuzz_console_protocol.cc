// libFuzzer target for sluiced's stateful reader: what a console session does with
// arbitrary bytes, from the first one, before and after the hello. The bytes are those
// that come out of TLS (the layer under it: framing and the session's state machine,
// ConsoleProtocol; TLS itself is OpenSSL's). The session's rules (console_protocol_checker.h)
// are checked on every call; a broken rule aborts.
//
// Input: byte 0 sets the fake app daemon's behaviour (bit 0: launch fails; bit 1: it is
// not running after launch) and, in bits 2-7, the chunk size (1-64) the rest is fed in.
// Build with clang and -DSLUICE_BUILD_FUZZERS=ON; tests/daemons/libfuzzer_test.sh runs it
// with seeds that get past the hello.
#include <cstddef>
#include <cstdint>

#include "daemons/console_protocol.h"
#include "daemons/console_protocol_checker.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  sluice::sluiced::CheckedSession session;
  session.launch_fails = (data[0] & 1) != 0;
  session.app_stops_early = (data[0] & 2) != 0;
  const std::size_t chunk = 1 + (data[0] >> 2);
  sluice::sluiced::ConsoleProtocol protocol(session, session);
  for (std::size_t at = 1; at < size; at += chunk) {
    protocol.feed(data + at, std::min(chunk, size - at));
    if (protocol.closed() != session.closed) session.violation("the protocol and its session disagree on closed");
  }
  if (!protocol.closed() && protocol.end_of_input().empty()) session.violation("the end of input has no reason");
  return 0;
}
