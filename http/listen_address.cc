#include "http/listen_address.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>

#include "sluice/error.h"

namespace sluice::http {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

tcp::endpoint parse_listen_address(const std::string& text, const std::string& option, bool allow_public,
                                   const std::string& public_option) {
  const std::string example = option + " 127.0.0.1:8080 (or " + option + " 8080, the same)";
  std::string host = "127.0.0.1";
  std::string port = text;
  if (!all_digits(text)) {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      throw Error(option + " '" + text + "' is not ADDR:PORT or PORT; e.g. " + example);
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  }
  if (!all_digits(port) || port.size() > 5 || std::stoul(port) > 65535) {
    throw Error(option + " '" + text + "': the port must be a number from 0 to 65535 (0: any free port); e.g. " +
                example);
  }
  boost::system::error_code ec;
  asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec) {
    asio::io_context io;
    tcp::resolver resolver(io);
    auto results = resolver.resolve(host, port, ec);
    if (ec || results.empty()) {
      throw Error(option + " '" + text + "': cannot resolve '" + host + "'" + (ec ? ": " + ec.message() : "") +
                  "; give an IP address, e.g. " + example);
    }
    address = results.begin()->endpoint().address();
  }
  if (!address.is_loopback() && !allow_public) {
    throw Error(option + " '" + text + "' is not a loopback address: anyone who can reach it could watch this " +
                "process; serve on 127.0.0.1 (e.g. " + example + "), or add " + public_option +
                " if every network that reaches " + address.to_string() + " may see it");
  }
  return tcp::endpoint(address, static_cast<unsigned short>(std::stoul(port)));
}

std::string endpoint_text(const tcp::endpoint& endpoint) {
  const asio::ip::address a = endpoint.address();
  const std::string host = a.is_v6() ? "[" + a.to_string() + "]" : a.to_string();
  return host + ":" + std::to_string(endpoint.port());
}

}  // namespace sluice::http
