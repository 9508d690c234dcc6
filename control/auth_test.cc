// The token file's messages say what to do (docs/operations.md).
#include "control/auth.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "sluice/error.h"

namespace {

// A directory made for the test holding a private (0600) token of the shortest allowed
// length, 'k' repeated; returns the token file's path.
std::string private_token_in(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/token";
  std::FILE* f = std::fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr) << path;
  if (f != nullptr) {
    std::fputs((std::string(sluice::control::kMinTokenBytes, 'k') + "\n").c_str(), f);
    std::fclose(f);
  }
  ::chmod(path.c_str(), 0600);
  return path;
}

TEST(TokenFile, MissingFileSaysToCopyTheDaemonsTokenFirst) {
  const std::string path = ::testing::TempDir() + "/sluice-no-such-token";
  try {
    sluice::control::read_token_file(path);
    FAIL() << "a missing token file was accepted";
  } catch (const sluice::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
    EXPECT_NE(message.find("copy the file the running ones were started with"), std::string::npos) << message;
    // Creating a new token is offered only for the first daemon, after the copy.
    EXPECT_LT(message.find("copy"), message.find("create one")) << message;
    EXPECT_NE(message.find("only before starting the first of them"), std::string::npos) << message;
  }
}

// The command the message offers works as pasted, also where the token's directory does not
// exist yet (~/.config/sluice on a fresh machine), and makes a file the reader accepts.
TEST(TokenFile, TheOfferedCommandMakesTheDirectoryAndAPrivateToken) {
  const std::string dir = ::testing::TempDir() + "/sluice-token-dir-" + std::to_string(::getpid());
  const std::string path = dir + "/config/sluice/token";
  std::string message;
  try {
    sluice::control::read_token_file(path);
    FAIL() << "a missing token file was accepted";
  } catch (const sluice::Error& e) {
    message = e.what();
  }
  const std::string marker = "create one with: ";
  const auto at = message.find(marker);
  ASSERT_NE(at, std::string::npos) << message;
  const std::string command = message.substr(at + marker.size());
  ASSERT_EQ(std::system(("/bin/sh -c '" + command + "'").c_str()), 0) << command;
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0) << command;
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_GE(sluice::control::read_token_file(path).size(), 40u);  // 32 random bytes in base64
  std::filesystem::remove_all(dir);
}

// A token short enough to guess offline from one recorded handshake is refused, saying how
// to make a good one; one of the minimum length is taken.
TEST(TokenFile, AShortTokenIsRefused) {
  const std::string path = ::testing::TempDir() + "/sluice-short-token-" + std::to_string(::getpid());
  const auto write = [&](const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
    ::chmod(path.c_str(), 0600);
  };
  write("short\n");
  try {
    sluice::control::read_token_file(path);
    ADD_FAILURE() << "a 5-character token was accepted";
  } catch (const sluice::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("5 characters, too short"), std::string::npos) << message;
    EXPECT_NE(message.find("head -c 32 /dev/urandom | base64"), std::string::npos) << message;
  }
  write(std::string(sluice::control::kMinTokenBytes, 'k') + "\n");
  EXPECT_EQ(sluice::control::read_token_file(path), std::string(sluice::control::kMinTokenBytes, 'k'));
  std::remove(path.c_str());
}

// A private token in a directory any user may write to is refused (another user could put
// their token in its place); a sticky one, as /tmp, is fine.
TEST(TokenFile, ADirectoryOthersMayWriteToIsRefusedUnlessSticky) {
  const std::string dir = ::testing::TempDir() + "/sluice-open-dir-" + std::to_string(::getpid());
  const std::string path = private_token_in(dir);
  ::chmod(dir.c_str(), 0777);
  try {
    sluice::control::read_token_file(path);
    ADD_FAILURE() << "a token in a directory of mode 777 was accepted";
  } catch (const sluice::Error& e) {
    const std::string message = e.what();
    const std::string shown = std::filesystem::path(dir).lexically_normal().string();
    EXPECT_NE(message.find("is in a directory other users may write to ('" + shown + "', mode 777)"), std::string::npos)
        << message;
    EXPECT_NE(message.find("chmod o-w " + shown), std::string::npos) << message;
  }
  ::chmod(dir.c_str(), 01777);
  EXPECT_EQ(sluice::control::read_token_file(path), std::string(sluice::control::kMinTokenBytes, 'k'));
  ::chmod(dir.c_str(), 0755);
  EXPECT_EQ(sluice::control::read_token_file(path), std::string(sluice::control::kMinTokenBytes, 'k'));
  std::filesystem::remove_all(dir);
}

// A token file another user owns, or one in a directory another user owns, is refused: its
// owner could put their own token in its place and, at the next start, run code as whoever
// runs the daemon (root, say). Root or this process's user may own them.
TEST(TokenFile, AFileOrDirectoryAnotherUserOwnsIsRefused) {
  ASSERT_EQ(::geteuid(), 0u) << "needs root, to give a file to another user (make test runs as root)";
  constexpr uid_t kOther = 65534;  // nobody
  const std::string dir = ::testing::TempDir() + "/sluice-owned-dir-" + std::to_string(::getpid());
  const std::string path = private_token_in(dir);
  ::chmod(dir.c_str(), 0755);
  // What reading it says: the refusal, or the token.
  const auto refusal = [&] {
    try {
      return sluice::control::read_token_file(path);
    } catch (const sluice::Error& e) {
      return std::string(e.what());
    }
  };
  ASSERT_EQ(::chown(path.c_str(), kOther, static_cast<gid_t>(-1)), 0);
  std::string message = refusal();
  EXPECT_NE(message.find("token file '" + path + "' belongs to nobody, not to root (who runs this): its owner could replace it"),
            std::string::npos) << message;
  EXPECT_NE(message.find("chown root " + path), std::string::npos) << message;

  ASSERT_EQ(::chown(path.c_str(), 0, static_cast<gid_t>(-1)), 0);
  ASSERT_EQ(::chown(dir.c_str(), kOther, static_cast<gid_t>(-1)), 0);
  message = refusal();
  EXPECT_NE(message.find("is in a directory that belongs to nobody ('" +
                         std::filesystem::path(dir).lexically_normal().string() + "')"),
            std::string::npos)
      << message;

  ASSERT_EQ(::chown(dir.c_str(), 0, static_cast<gid_t>(-1)), 0);
  EXPECT_EQ(refusal(), std::string(sluice::control::kMinTokenBytes, 'k'));
  std::filesystem::remove_all(dir);
}

// Symlinks on the way count too: a link of this user's that leads into a directory another
// user owns, and a link another user owns (they may point it elsewhere), are refused.
TEST(TokenFile, ASymlinkIntoAnotherUsersDirectoryOrOfAnotherUserIsRefused) {
  ASSERT_EQ(::geteuid(), 0u) << "needs root, to give a file to another user (make test runs as root)";
  constexpr uid_t kOther = 65534;  // nobody
  const std::string base = ::testing::TempDir() + "/sluice-linked-" + std::to_string(::getpid());
  const std::string theirs = base + "/theirs";
  const std::string target = private_token_in(theirs);
  ASSERT_EQ(::chown(theirs.c_str(), kOther, static_cast<gid_t>(-1)), 0);
  const std::string mine = base + "/mine";
  std::filesystem::create_directories(mine);
  const std::string link = mine + "/token";
  std::filesystem::create_symlink(target, link);
  const auto refusal = [](const std::string& path) {
    try {
      return sluice::control::read_token_file(path);
    } catch (const sluice::Error& e) {
      return std::string(e.what());
    }
  };
  std::string message = refusal(link);
  const std::string real = std::filesystem::canonical(theirs).string();
  EXPECT_NE(message.find("is in a directory that belongs to nobody ('" + real + "')"), std::string::npos) << message;

  ASSERT_EQ(::chown(theirs.c_str(), 0, static_cast<gid_t>(-1)), 0);
  EXPECT_EQ(refusal(link), std::string(sluice::control::kMinTokenBytes, 'k')) << "all of it root's or this user's";
  ASSERT_EQ(::lchown(link.c_str(), kOther, static_cast<gid_t>(-1)), 0);
  message = refusal(link);
  EXPECT_NE(message.find("is reached through a symbolic link that belongs to nobody ('" +
                         std::filesystem::path(link).lexically_normal().string() + "')"),
            std::string::npos)
      << message;
  std::filesystem::remove_all(base);
}

// A directory its group may write to is refused when anyone else is in the group, as a
// member or by having it as their primary group (a shared `users` group: an outside review
// swapped the token in such a directory); the owner's own group is fine. And a link in the
// middle of a chain of links is checked too.
TEST(TokenFile, AGroupWithOthersInItAndALinkInTheMiddleOfAChainAreRefused) {
  ASSERT_EQ(::geteuid(), 0u) << "needs root, to give files to other users (make test runs as root)";
  const std::string base = ::testing::TempDir() + "/sluice-group-" + std::to_string(::getpid());
  const std::string dir = base + "/team";
  const std::string path = private_token_in(dir);
  const auto refusal = [](const std::string& p) {
    try {
      return sluice::control::read_token_file(p);
    } catch (const sluice::Error& e) {
      return std::string(e.what());
    }
  };
  const group* nogroup = ::getgrnam("nogroup");  // nobody's primary group
  ASSERT_NE(nogroup, nullptr);
  ASSERT_EQ(::chown(dir.c_str(), 0, nogroup->gr_gid), 0);
  ::chmod(dir.c_str(), 0775);
  std::string message = refusal(path);
  EXPECT_NE(message.find("is in a directory its group may write to"), std::string::npos) << message;
  EXPECT_NE(message.find("chmod g-w "), std::string::npos) << message;
  ASSERT_EQ(::chown(dir.c_str(), 0, 0), 0);  // root's own group: nobody else in it
  EXPECT_EQ(refusal(path), std::string(sluice::control::kMinTokenBytes, 'k')) << "a private group may write";

  // mine/token -> theirs/link (nobody's) -> team/token
  const std::string theirs = base + "/theirs";
  std::filesystem::create_directories(theirs);
  const std::string middle = theirs + "/link";
  std::filesystem::create_symlink(path, middle);
  ASSERT_EQ(::lchown(middle.c_str(), 65534, static_cast<gid_t>(-1)), 0);
  const std::string mine = base + "/mine";
  std::filesystem::create_directories(mine);
  std::filesystem::create_symlink(middle, mine + "/token");
  message = refusal(mine + "/token");
  EXPECT_NE(message.find("is reached through a symbolic link that belongs to nobody ('" +
                         std::filesystem::path(middle).lexically_normal().string() + "')"),
            std::string::npos)
      << message;
  std::filesystem::remove_all(base);
}

}  // namespace
