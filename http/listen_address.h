// Where a small HTTP server of ours (the console's --ui, sluiced's --metrics) listens, and
// the rule that keeps it on this machine: loopback unless the user said otherwise.
//
// What is served there (a run's topology, its rates, a daemon's sessions) is not secret
// enough for a login, but it is nobody else's business either: an address that is not
// loopback (0.0.0.0, a LAN address, a name that resolves to one) is refused unless
// `allow_public` (--ui-public, --metrics-public) says the user means it.
#ifndef SLUICE_HTTP_LISTEN_ADDRESS_H_
#define SLUICE_HTTP_LISTEN_ADDRESS_H_

#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio/ip/tcp.hpp>

namespace sluice::http {

// Parses "ADDR:PORT", "[IPv6]:PORT" or "PORT" (then 127.0.0.1:PORT) by text/address.h's
// rules; ADDR may be a name ("localhost"), resolved here. PORT 0 picks a free port. Throws sluice::Error naming
// `option` (e.g. "--ui") and saying what would be right when the text is malformed, the
// name does not resolve, or the address is not loopback and `allow_public` is false
// (naming `public_option`, e.g. "--ui-public").
boost::asio::ip::tcp::endpoint parse_listen_address(const std::string& text, const std::string& option,
                                                    bool allow_public, const std::string& public_option);

// "127.0.0.1:8080", "[::1]:8080": an endpoint as a user would type it back.
std::string endpoint_text(const boost::asio::ip::tcp::endpoint& endpoint);

}  // namespace sluice::http

#endif  // SLUICE_HTTP_LISTEN_ADDRESS_H_
