#include "http/listen_address.h"

#include <gtest/gtest.h>

#include "sluice/error.h"

namespace sluice::http {
namespace {

std::string error_of(const std::string& text, bool allow_public = false) {
  try {
    parse_listen_address(text, "--ui", allow_public, "--ui-public");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ListenAddress, APortAloneMeansLoopback) {
  EXPECT_EQ(endpoint_text(parse_listen_address("8080", "--ui", false, "--ui-public")), "127.0.0.1:8080");
  EXPECT_EQ(endpoint_text(parse_listen_address("0", "--ui", false, "--ui-public")), "127.0.0.1:0");
}

TEST(ListenAddress, LoopbackAddressesAndNamesAreAccepted) {
  EXPECT_EQ(endpoint_text(parse_listen_address("127.0.0.2:9", "--ui", false, "--ui-public")), "127.0.0.2:9");
  EXPECT_EQ(endpoint_text(parse_listen_address("[::1]:9", "--ui", false, "--ui-public")), "[::1]:9");
  EXPECT_TRUE(parse_listen_address("localhost:0", "--ui", false, "--ui-public").address().is_loopback());
}

TEST(ListenAddress, OtherAddressesNeedThePublicOption) {
  const std::string why = error_of("0.0.0.0:8080");
  EXPECT_NE(why.find("--ui '0.0.0.0:8080' is not a loopback address"), std::string::npos) << why;
  EXPECT_NE(why.find("add --ui-public"), std::string::npos) << why;
  EXPECT_NE(error_of("[::]:8080").find("not a loopback address"), std::string::npos);
  EXPECT_NE(error_of("10.1.2.3:8080").find("not a loopback address"), std::string::npos);
  EXPECT_EQ(endpoint_text(parse_listen_address("0.0.0.0:8080", "--ui", true, "--ui-public")), "0.0.0.0:8080");
}

TEST(ListenAddress, MalformedTextSaysWhatWouldBeRight) {
  EXPECT_EQ(error_of("localhost"),
            "--ui: address 'localhost' has no port; write host:port or a port alone, e.g. 127.0.0.1:8080");
  EXPECT_EQ(error_of(":80"), "--ui: ':80' is not an address; write host:port or a port alone, e.g. 127.0.0.1:8080");
  EXPECT_NE(error_of("127.0.0.1:").find("is not a port; use a number from 0 to 65535 (0: any free port)"),
            std::string::npos);
  EXPECT_NE(error_of("127.0.0.1:65536").find("'65536' in '127.0.0.1:65536' is not a port"), std::string::npos);
  EXPECT_NE(error_of("127.0.0.1:http").find("'http' in '127.0.0.1:http' is not a port"), std::string::npos);
  EXPECT_NE(error_of("::1:80").find("needs brackets around the host, e.g. [::1]:7700"), std::string::npos);
}

}  // namespace
}  // namespace sluice::http
