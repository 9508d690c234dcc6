#include "net/listener.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sluice/error.h"

namespace sluice::net {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// `count` consecutive loopback ports, each bound (and listening) by an acceptor of the test,
// so that nothing else takes them while the test runs.
std::vector<std::unique_ptr<tcp::acceptor>> hold_consecutive_ports(asio::io_context& io, int count) {
  for (int base = 41000; base < 60000; base += 97) {
    std::vector<std::unique_ptr<tcp::acceptor>> held;
    for (int i = 0; i < count; ++i) {
      auto a = std::make_unique<tcp::acceptor>(io);
      boost::system::error_code ec;
      const tcp::endpoint at(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(base + i));
      a->open(at.protocol(), ec);
      if (!ec) a->bind(at, ec);
      if (!ec) a->listen(8, ec);
      if (ec) break;
      held.push_back(std::move(a));
    }
    if (static_cast<int>(held.size()) == count) return held;
  }
  ADD_FAILURE() << "no " << count << " consecutive free ports on loopback";
  return {};
}

int port_of(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

TEST(Listener, TakesTheFreePortOfItsRange) {
  asio::io_context io;
  RateLimitedLog log("test: ");
  auto held = hold_consecutive_ports(io, 3);
  ASSERT_EQ(held.size(), 3u);
  const auto first = static_cast<std::uint16_t>(held[0]->local_endpoint().port());
  held[1].reset();  // the middle one is free, the two others in use
  for (int i = 0; i < 5; ++i) {  // whichever port it tries first
    Listener listener(io, "127.0.0.1:0", log, text::PortRange{first, static_cast<std::uint16_t>(first + 2)});
    EXPECT_EQ(port_of(listener.address()), first + 1);
  }
}

TEST(Listener, ARangeWithEveryPortInUseIsRefusedNamingTheRangeAndWhatToDo) {
  asio::io_context io;
  RateLimitedLog log("test: ");
  auto held = hold_consecutive_ports(io, 2);
  ASSERT_EQ(held.size(), 2u);
  const auto first = static_cast<std::uint16_t>(held[0]->local_endpoint().port());
  const text::PortRange range{first, static_cast<std::uint16_t>(first + 1)};
  try {
    Listener listener(io, "127.0.0.1:0", log, range);
    FAIL() << "bound " << listener.address() << " although every port of " << range.text() << " is in use";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "data plane: no free port on 127.0.0.1 in --data-ports " + range.text() +
                  ": all 2 are in use (each application across hosts holds one for each of its logical hosts "
                  "here while it runs, a sluice serve for its whole life; ss -ltnp shows what holds them); widen "
                  "--data-ports");
  }
}

TEST(Listener, WithoutARangeAnyFreePortAndAGivenPortAsAsked) {
  asio::io_context io;
  RateLimitedLog log("test: ");
  Listener any(io, "127.0.0.1:0", log);
  EXPECT_GT(port_of(any.address()), 0);
  auto held = hold_consecutive_ports(io, 1);
  ASSERT_EQ(held.size(), 1u);
  const int port = held[0]->local_endpoint().port();
  held[0].reset();
  // A listen address with a port of its own takes that port; with a range, the range wins
  // (a launch message cannot open a port the host's --data-ports does not).
  Listener given(io, "127.0.0.1:" + std::to_string(port), log);
  EXPECT_EQ(port_of(given.address()), port);
}

TEST(Listener, ARangeWinsOverThePortTheListenAddressNames) {
  asio::io_context io;
  RateLimitedLog log("test: ");
  auto held = hold_consecutive_ports(io, 2);
  ASSERT_EQ(held.size(), 2u);
  const auto first = static_cast<std::uint16_t>(held[0]->local_endpoint().port());
  held.clear();
  Listener listener(io, "127.0.0.1:" + std::to_string(first + 1), log, text::PortRange{first, first});
  EXPECT_EQ(port_of(listener.address()), first);
}

}  // namespace
}  // namespace sluice::net
