// The token file's messages say what to do (docs/operations.md).
#include "control/auth.h"

#include <gtest/gtest.h>

#include <string>

#include "sluice/error.h"

namespace {

TEST(TokenFile, MissingFileSaysToCopyTheDaemonsTokenFirst) {
  const std::string path = ::testing::TempDir() + "/sluice-no-such-token";
  try {
    sluice::control::read_token_file(path);
    FAIL() << "a missing token file was accepted";
  } catch (const sluice::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
    EXPECT_NE(message.find("copy the file the running daemons were started with"), std::string::npos)
        << message;
    // Creating a new token is offered only for the first daemon, after the copy.
    EXPECT_LT(message.find("copy"), message.find("create one")) << message;
    EXPECT_NE(message.find("only before starting the first daemon"), std::string::npos) << message;
  }
}

}  // namespace
