// The one reader of "ADDR:PORT": topology hosts, the data plane's listen and peer addresses,
// sluiced's --listen, the console's --hosts and the --ui/--listen/--metrics listen addresses.
// One set of rules, with the few choices a caller makes spelled out in AddressRules:
//   - "host:port", where host is an IPv4 address or a host name (letters, digits, '.', '-',
//     '_'), or "[v6]:port" with an IPv6 address in brackets (brackets required: "::1:7700"
//     is ambiguous and refused);
//   - port: a whole number from 1 to 65535, or from 0 when 0 means "any free port";
//   - host names only where the caller resolves them (AddressRules::names).
// Only the text is checked here: resolving a name, and policy such as "listen on loopback
// unless told otherwise" (http/listen_address.h), stay with the caller.
//
// Thread safety: pure functions.
#ifndef SLUICE_TEXT_ADDRESS_H_
#define SLUICE_TEXT_ADDRESS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::text {

struct AddressRules {
  // Whether a host name is accepted; false: an IP address only. Default: true.
  bool names = true;
  // Whether port 0 (any free port) is accepted, for addresses to listen on. Default: false.
  bool any_port = false;
  // Non-empty: a port alone ("8080") means this host ("127.0.0.1:8080"). Default: none.
  std::string bare_port_host;
  // The example errors show. Default: "127.0.0.1:7700".
  std::string example = "127.0.0.1:7700";
};

struct HostPort {
  std::string host;  // without brackets: "127.0.0.1", "::1", "node-3"
  std::uint16_t port = 0;

  // As a user writes it: "127.0.0.1:7700", "[::1]:7700".
  std::string text() const;
};

// `text` split into host and port when it follows `rules`; otherwise nullopt, and `*problem`
// (when not null) says what is wrong and what to write, e.g. "address '127.0.0.1' has no
// port; write host:port, e.g. 127.0.0.1:7700 or [::1]:7700".
std::optional<HostPort> parse_host_port(std::string_view text, const AddressRules& rules, std::string* problem);

// parse_host_port, or throws sluice::Error("<context>: <problem>") (just the problem when
// `context` is empty).
HostPort parse_host_port_or_throw(std::string_view text, const AddressRules& rules, std::string_view context);

// `host` as it reads in an address or a message: an IPv6 one in brackets ("[::1]").
std::string host_text(std::string_view host);

// "host:port", with brackets around an IPv6 host: the inverse of parse_host_port.
std::string host_port_text(std::string_view host, std::uint16_t port);

}  // namespace sluice::text

#endif  // SLUICE_TEXT_ADDRESS_H_
