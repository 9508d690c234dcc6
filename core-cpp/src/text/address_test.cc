#include "text/address.h"

#include <gtest/gtest.h>

#include "sluice/error.h"

namespace sluice::text {
namespace {

struct Case {
  const char* text;
  const char* host;     // expected host, or nullptr when the text is refused
  int port;             // expected port
  const char* problem;  // expected part of the problem when refused
};

AddressRules connect_rules() { return {}; }
AddressRules listen_rules() {
  AddressRules r;
  r.any_port = true;
  return r;
}
AddressRules ip_rules() {
  AddressRules r;
  r.names = false;
  r.any_port = true;
  return r;
}
AddressRules bare_port_rules() {
  AddressRules r;
  r.any_port = true;
  r.bare_port_host = "127.0.0.1";
  r.example = "127.0.0.1:8080";
  return r;
}

void check(const AddressRules& rules, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    std::string problem;
    const std::optional<HostPort> got = parse_host_port(c.text, rules, &problem);
    if (c.host != nullptr) {
      ASSERT_TRUE(got.has_value()) << c.text << ": " << problem;
      EXPECT_EQ(got->host, c.host) << c.text;
      EXPECT_EQ(got->port, c.port) << c.text;
    } else {
      EXPECT_FALSE(got.has_value()) << c.text << " was accepted as " << got->text();
      EXPECT_NE(problem.find(c.problem), std::string::npos) << c.text << ": " << problem;
    }
  }
}

TEST(TextAddress, ConnectAddresses) {
  check(connect_rules(), {
      {"127.0.0.1:7700", "127.0.0.1", 7700, ""},
      {"[::1]:7700", "::1", 7700, ""},
      {"[fe80::1]:1", "fe80::1", 1, ""},
      {"node-3.cluster_a:65535", "node-3.cluster_a", 65535, ""},
      {"localhost:7700", "localhost", 7700, ""},
      {"127.0.0.1", nullptr, 0, "address '127.0.0.1' has no port; write host:port, e.g. 127.0.0.1:7700 or [::1]:7700"},
      {"x:0", nullptr, 0, "'0' in 'x:0' is not a port; use a number from 1 to 65535"},
      {"x:65536", nullptr, 0, "'65536' in 'x:65536' is not a port"},
      {"x:70000", nullptr, 0, "'70000' in 'x:70000' is not a port"},
      {"x:http", nullptr, 0, "'http' in 'x:http' is not a port"},
      {"x:", nullptr, 0, "'' in 'x:' is not a port"},
      {"x:+80", nullptr, 0, "is not a port"},
      {"x:-1", nullptr, 0, "is not a port"},
      {"x: 80", nullptr, 0, "is not a port"},
      {"::1:7700", nullptr, 0, "IPv6 address '::1:7700' needs brackets around the host, e.g. [::1]:7700"},
      {"[::1]7700", nullptr, 0, "'[::1]7700' is not an address; write host:port"},
      {"[::1:7700", nullptr, 0, "'[::1:7700' is not an address"},
      {"[1.2.3.4]:7700", nullptr, 0, "'1.2.3.4' in '[1.2.3.4]:7700' is not an IPv6 address"},
      {"[]:7700", nullptr, 0, "is not an IPv6 address"},
      {":7700", nullptr, 0, "':7700' is not an address"},
      {"a b:7700", nullptr, 0, "'a b:7700' is not an address"},
      {"a/b:7700", nullptr, 0, "'a/b:7700' is not an address"},
      {"", nullptr, 0, "address '' has no port"},
      {"7700", nullptr, 0, "'7700' is a port alone; write the host too, e.g. 127.0.0.1:7700"},
      {"http://127.0.0.1:7700", nullptr, 0,
       "'http://127.0.0.1:7700' is a URL; write the host and port alone, e.g. 127.0.0.1:7700"},
  });
}

TEST(TextAddress, ListenAddressesMayAskForAnyPort) {
  check(listen_rules(), {
      {"127.0.0.1:0", "127.0.0.1", 0, ""},
      {"[::]:0", "::", 0, ""},
      {"0.0.0.0:7700", "0.0.0.0", 7700, ""},
      {"x:65536", nullptr, 0, "use a number from 0 to 65535 (0: any free port)"},
  });
}

TEST(TextAddress, IpOnlyWhereNamesAreNotResolved) {
  check(ip_rules(), {
      {"10.0.0.1:0", "10.0.0.1", 0, ""},
      {"[::1]:0", "::1", 0, ""},
      {"localhost:0", nullptr, 0, "'localhost' in 'localhost:0' is not an IP address; write one, e.g."},
      {"10.0.0:0", nullptr, 0, "is not an IP address"},
  });
}

TEST(TextAddress, APortAloneWhereTheCallerSaysWhichHost) {
  check(bare_port_rules(), {
      {"8080", "127.0.0.1", 8080, ""},
      {"0", "127.0.0.1", 0, ""},
      {"localhost:9", "localhost", 9, ""},
      {"localhost", nullptr, 0, "address 'localhost' has no port; write host:port or a port alone, e.g. 127.0.0.1:8080"},
      {"99999", nullptr, 0, "'99999' in '99999' is not a port; use a number from 0 to 65535"},
  });
  // Without bare_port_host a number alone is a port without an address.
  check(connect_rules(), {{"8080", nullptr, 0, "'8080' is a port alone; write the host too, e.g. 127.0.0.1:8080"}});
}

TEST(TextAddress, TextIsTheInverse) {
  EXPECT_EQ(host_port_text("127.0.0.1", 7700), "127.0.0.1:7700");
  EXPECT_EQ(host_port_text("::1", 7700), "[::1]:7700");
  EXPECT_EQ(host_text("::1"), "[::1]");
  EXPECT_EQ(host_text("node-3"), "node-3");
  for (const char* text : {"127.0.0.1:7700", "[::1]:1", "node:2"}) {
    EXPECT_EQ(parse_host_port(text, connect_rules(), nullptr)->text(), text);
  }
}

TEST(TextAddress, ThrowingFormNamesItsContext) {
  try {
    parse_host_port_or_throw("127.0.0.1", connect_rules(), "--listen");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--listen: address '127.0.0.1' has no port; write host:port, e.g. 127.0.0.1:7700 or [::1]:7700");
  }
}

}  // namespace
}  // namespace sluice::text
