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

// Each test holds `count` consecutive loopback ports (acceptors of its own, listening) so
// that nothing else takes them while it runs, and frees those it wants free.
class ListenerTest : public ::testing::Test {
 protected:
  // Holds `count` consecutive ports; returns the first (0 and a failure when none are free).
  std::uint16_t hold(int count) {
    for (int base = 41000; base < 60000; base += 97) {
      held_.clear();
      for (int i = 0; i < count; ++i) {
        auto a = std::make_unique<tcp::acceptor>(io_);
        boost::system::error_code ec;
        const tcp::endpoint at(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(base + i));
        a->open(at.protocol(), ec);
        if (!ec) a->bind(at, ec);
        if (!ec) a->listen(8, ec);
        if (ec) break;
        held_.push_back(std::move(a));
      }
      if (static_cast<int>(held_.size()) == count) return static_cast<std::uint16_t>(base);
    }
    ADD_FAILURE() << "no " << count << " consecutive free ports on loopback";
    return 0;
  }
  void free_port(int i) { held_[static_cast<std::size_t>(i)].reset(); }
  void free_all() { held_.clear(); }

  static int port_of(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

  asio::io_context io_;
  RateLimitedLog log_{"test: "};
  std::vector<std::unique_ptr<tcp::acceptor>> held_;
};

TEST_F(ListenerTest, TakesTheFreePortOfItsRange) {
  const std::uint16_t first = hold(3);
  ASSERT_NE(first, 0);
  free_port(1);  // the middle one is free, the two others in use
  for (int i = 0; i < 5; ++i) {  // whichever port it tries first
    Listener listener(io_, "127.0.0.1:0", log_, text::PortRange{first, static_cast<std::uint16_t>(first + 2)});
    EXPECT_EQ(port_of(listener.address()), first + 1);
  }
}

TEST_F(ListenerTest, ARangeWithEveryPortInUseIsRefusedNamingTheRangeAndWhatToDo) {
  const std::uint16_t first = hold(2);
  ASSERT_NE(first, 0);
  const text::PortRange range{first, static_cast<std::uint16_t>(first + 1)};
  try {
    Listener listener(io_, "127.0.0.1:0", log_, range);
    FAIL() << "bound " << listener.address() << " although every port of " << range.text() << " is in use";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "data plane: no free port on 127.0.0.1 in --data-ports " + range.text() +
                  ": all 2 are in use (each application across hosts holds one for each of its logical hosts "
                  "here while it runs, a sluice serve for its whole life; ss -ltnp shows what holds them); widen "
                  "--data-ports");
  }
}

TEST_F(ListenerTest, WithoutARangeAnyFreePortOrTheOneAsked) {
  Listener any(io_, "127.0.0.1:0", log_);
  EXPECT_GT(port_of(any.address()), 0);
  const std::uint16_t port = hold(1);
  ASSERT_NE(port, 0);
  free_all();
  Listener given(io_, "127.0.0.1:" + std::to_string(port), log_);
  EXPECT_EQ(port_of(given.address()), port);
}

// A launch message cannot open a port the host's --data-ports does not.
TEST_F(ListenerTest, ARangeWinsOverThePortTheListenAddressNames) {
  const std::uint16_t first = hold(2);
  ASSERT_NE(first, 0);
  free_all();
  Listener listener(io_, "127.0.0.1:" + std::to_string(first + 1), log_, text::PortRange{first, first});
  EXPECT_EQ(port_of(listener.address()), first);
}

}  // namespace
}  // namespace sluice::net
