// How a data connection's failure for silence reads, so that the console can tell it from a
// reset or a refused connection by its message alone (failures cross to the console as text):
// a silent connection may be a frozen app daemon at its other end, which that host's daemon
// names within 4 s, so the console waits longer for that root cause; a reset needs no wait.
//
// Thread safety: constants and a pure function.
#ifndef SLUICE_NET_SILENT_CONNECTION_H_
#define SLUICE_NET_SILENT_CONNECTION_H_

#include <string_view>

namespace sluice::net {

// What Connection::tick's message starts with, after the connection's own name.
inline constexpr std::string_view kNothingArrived = "nothing (no data, credit or heartbeat) arrived from ";

// True when `message` is (or quotes) the failure of a data connection gone silent.
inline bool names_a_silent_connection(std::string_view message) {
  return message.find(kNothingArrived) != std::string_view::npos;
}

}  // namespace sluice::net

#endif  // SLUICE_NET_SILENT_CONNECTION_H_
