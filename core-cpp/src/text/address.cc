#include "text/address.h"

#include <arpa/inet.h>

#include <algorithm>

#include "sluice/error.h"
#include "text/integer.h"

namespace sluice::text {

namespace {

bool is_ipv4(const std::string& host) {
  in_addr a{};
  return ::inet_pton(AF_INET, host.c_str(), &a) == 1;
}

bool is_ipv6(const std::string& host) {
  in6_addr a{};
  return ::inet_pton(AF_INET6, host.c_str(), &a) == 1;
}

// Letters, digits, '.', '-' and '_' (what getaddrinfo can look up, and every IPv4 address).
bool is_host_name(std::string_view host) {
  return !host.empty() && std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_';
  });
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::nullopt_t fail(std::string* problem, std::string message) {
  if (problem != nullptr) *problem = std::move(message);
  return std::nullopt;
}

}  // namespace

std::string HostPort::text() const { return host_port_text(host, port); }

std::string host_text(std::string_view host) {
  const std::string h(host);
  return h.find(':') != std::string::npos ? "[" + h + "]" : h;
}

std::string host_port_text(std::string_view host, std::uint16_t port) {
  return host_text(host) + ":" + std::to_string(port);
}

std::optional<HostPort> parse_host_port(std::string_view text, const AddressRules& rules, std::string* problem) {
  const std::string quoted = "'" + std::string(text) + "'";
  const std::string form = rules.bare_port_host.empty()
                               ? "; write host:port, e.g. " + rules.example + " or [::1]:7700"
                               : "; write host:port or a port alone, e.g. " + rules.example;
  std::string host;
  std::string_view port;
  if (const std::size_t scheme = text.find("://"); scheme != std::string_view::npos) {
    return fail(problem, quoted + " is a URL; write the host and port alone, e.g. " + rules.example);
  }
  if (rules.bare_port_host.empty() && all_digits(text)) {
    return fail(problem, quoted + " is a port alone; write the host too, e.g. 127.0.0.1:" + std::string(text));
  }
  if (!rules.bare_port_host.empty() && all_digits(text)) {
    host = rules.bare_port_host;
    port = text;
  } else if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos || text.compare(close, 2, "]:") != 0) {
      return fail(problem, quoted + " is not an address" + form);
    }
    host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
    if (!is_ipv6(host)) {
      return fail(problem, "'" + host + "' in " + quoted + " is not an IPv6 address" + form);
    }
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return fail(problem, "address " + quoted + " has no port" + form);
    host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
    if (host.find(':') != std::string::npos) {
      return fail(problem, "IPv6 address " + quoted + " needs brackets around the host, e.g. [::1]:7700");
    }
    if (!is_host_name(host)) return fail(problem, quoted + " is not an address" + form);
    if (!rules.names && !is_ipv4(host)) {
      return fail(problem, "'" + host + "' in " + quoted + " is not an IP address; write one, e.g. " +
                               rules.example + " or [::1]:7700");
    }
  }
  const std::uint16_t lowest = rules.any_port ? 0 : 1;
  const std::optional<std::uint16_t> n = parse_integer<std::uint16_t>(port, lowest, 65535);
  if (!n) {
    return fail(problem, "'" + std::string(port) + "' in " + quoted + " is not a port; use a number from " +
                             std::to_string(lowest) + " to 65535" + (rules.any_port ? " (0: any free port)" : ""));
  }
  return HostPort{std::move(host), *n};
}

HostPort parse_host_port_or_throw(std::string_view text, const AddressRules& rules, std::string_view context) {
  std::string problem;
  std::optional<HostPort> address = parse_host_port(text, rules, &problem);
  if (!address) throw Error(context.empty() ? problem : std::string(context) + ": " + problem);
  return *address;
}

}  // namespace sluice::text
