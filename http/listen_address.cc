#include "http/listen_address.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>

#include "sluice/error.h"
#include "text/address.h"

namespace sluice::http {

namespace asio = boost::asio;
using asio::ip::tcp;

tcp::endpoint parse_listen_address(const std::string& text, const std::string& option, bool allow_public,
                                   const std::string& public_option) {
  const std::string example = option + " 127.0.0.1:8080 (or " + option + " 8080, the same)";
  // The text: text/address.h's rules, with a port alone meaning loopback and 0 any free port.
  text::AddressRules rules;
  rules.any_port = true;
  rules.bare_port_host = "127.0.0.1";
  rules.example = "127.0.0.1:8080";
  const text::HostPort where = text::parse_host_port_or_throw(text, rules, option);
  boost::system::error_code ec;
  asio::ip::address address = asio::ip::make_address(where.host, ec);
  if (ec) {
    asio::io_context io;
    tcp::resolver resolver(io);
    auto results = resolver.resolve(where.host, std::to_string(where.port), ec);
    if (ec || results.empty()) {
      throw Error(option + " '" + text + "': cannot resolve '" + where.host + "'" + (ec ? ": " + ec.message() : "") +
                  "; give an IP address, e.g. " + example);
    }
    address = results.begin()->endpoint().address();
  }
  // Policy, not parsing: loopback unless the user said otherwise.
  if (!address.is_loopback() && !allow_public) {
    throw Error(option + " '" + text + "' is not a loopback address: anyone who can reach it could watch this " +
                "process; serve on 127.0.0.1 (e.g. " + example + "), or add " + public_option +
                " if every network that reaches " + address.to_string() + " may see it");
  }
  return tcp::endpoint(address, where.port);
}

std::string endpoint_text(const tcp::endpoint& endpoint) {
  return text::host_port_text(endpoint.address().to_string(), endpoint.port());
}

}  // namespace sluice::http
