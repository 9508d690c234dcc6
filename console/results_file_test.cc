#include "console/results_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace sluice::console {
namespace {

namespace fs = std::filesystem;

class ResultsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/results_file_test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string contents(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void put(const std::string& file, const std::string& text) {
    std::ofstream(file, std::ios::binary) << text;
  }
  // The names in the directory: what a submit leaves behind.
  std::string listing() const {
    std::string names;
    for (const auto& e : fs::directory_iterator(dir_)) names += e.path().filename().string() + " ";
    return names;
  }

  fs::path dir_;
};

TEST_F(ResultsFileTest, AUnitThatDoesNotEndLeavesAnExistingFileAsItWas) {
  const std::string file = path("results");
  put(file, "the last unit's results");
  {
    ResultsFile results(file);
    ASSERT_TRUE(results.ok()) << results.error();
    EXPECT_TRUE(results.replaced_at_commit());
    ASSERT_TRUE(results.write("half of"));
    EXPECT_EQ(contents(file), "the last unit's results");  // not truncated while the unit runs
  }  // the connection broke: no commit
  EXPECT_EQ(contents(file), "the last unit's results");
  EXPECT_EQ(listing(), "results ");  // no partial file left behind
}

TEST_F(ResultsFileTest, AUnitThatEndsReplacesTheFileAndKeepsItsPermissions) {
  const std::string file = path("results");
  put(file, "old");
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  ResultsFile results(file);
  ASSERT_TRUE(results.write("new "));
  ASSERT_TRUE(results.write("results"));
  ASSERT_TRUE(results.commit()) << results.error();
  EXPECT_EQ(contents(file), "new results");
  EXPECT_EQ(results.bytes(), 11u);
  struct stat st{};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(listing(), "results ");
}

TEST_F(ResultsFileTest, ANewFileGetsTheModeFopenWouldGiveIt) {
  const mode_t old_mask = ::umask(022);
  const std::string file = path("fresh");
  {
    ResultsFile results(file);
    EXPECT_FALSE(fs::exists(file));  // appears only when the unit ends
    ASSERT_TRUE(results.commit());
  }
  ::umask(old_mask);
  struct stat st{};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(contents(file), "");
}

TEST_F(ResultsFileTest, AFifoIsWrittenInPlace) {
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so the writer's open returns
  ASSERT_GE(reader, 0);
  {
    ResultsFile results(fifo);
    ASSERT_TRUE(results.ok()) << results.error();
    EXPECT_FALSE(results.replaced_at_commit());
    ASSERT_TRUE(results.write("through the fifo"));
    ASSERT_TRUE(results.commit());
  }
  char got[64] = {};
  EXPECT_EQ(::read(reader, got, sizeof got), 16);
  EXPECT_STREQ(got, "through the fifo");
  ::close(reader);
  EXPECT_EQ(listing(), "fifo ");
}

// A symlink another user planted at FILE, or at a directory on the way (a shared directory):
// `sluice submit --results FILE` wrote the unit's results over the file it led to (an outside
// review overwrote its victim's ~/.bashrc). Refused before anything is sent; this user's own
// link is followed, as before.
TEST_F(ResultsFileTest, ASymlinkAnotherUserOwnsIsNotFollowed) {
  ASSERT_EQ(::geteuid(), 0u) << "needs root, to give a link to another user (make test runs as root)";
  const std::string target = path("bashrc");
  put(target, "precious");
  const std::string link = path("out.raw");
  fs::create_symlink(target, link);
  ASSERT_EQ(::lchown(link.c_str(), 65534, static_cast<gid_t>(-1)), 0);
  const std::string dir_link = path("their-dir");
  fs::create_symlink(dir_, dir_link);
  ASSERT_EQ(::lchown(dir_link.c_str(), 65534, static_cast<gid_t>(-1)), 0);
  for (const std::string& file : {link, dir_link + "/bashrc"}) {
    ResultsFile results(file);
    EXPECT_FALSE(results.ok()) << file;
    EXPECT_NE(results.error().find("belongs to nobody"), std::string::npos) << results.error();
    EXPECT_NE(results.error().find("not followed"), std::string::npos) << results.error();
    EXPECT_TRUE(results.write("overwritten"));  // counted, written nowhere
    EXPECT_FALSE(results.commit());
  }
  EXPECT_EQ(contents(target), "precious");
  ASSERT_EQ(::lchown(link.c_str(), 0, static_cast<gid_t>(-1)), 0);
  {
    ResultsFile results(link);
    ASSERT_TRUE(results.ok()) << results.error();
    ASSERT_TRUE(results.write("mine"));
    EXPECT_TRUE(results.commit());
  }
  EXPECT_EQ(contents(target), "mine") << "this user's own link is followed";
}

// What another user planted at FILE in a shared directory: their FIFO is not written (they
// would read the results), and their file is replaced by one of this user's, with the mode a
// new file gets, not theirs (a setuid 4777 mode was copied onto the partial file).
TEST_F(ResultsFileTest, AFifoOrFileAnotherUserPlantedIsNotWrittenThrough) {
  ASSERT_EQ(::geteuid(), 0u) << "needs root, to give files to another user (make test runs as root)";
  const std::string fifo = path("r2.raw");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0622), 0);
  ASSERT_EQ(::chown(fifo.c_str(), 65534, static_cast<gid_t>(-1)), 0);
  {
    ResultsFile results(fifo);
    EXPECT_FALSE(results.ok());
    EXPECT_NE(results.error().find("is a FIFO that belongs to nobody"), std::string::npos) << results.error();
  }
  const std::string planted = path("r1.raw");
  put(planted, "theirs");
  ASSERT_EQ(::chown(planted.c_str(), 65534, static_cast<gid_t>(-1)), 0);
  ASSERT_EQ(::chmod(planted.c_str(), 04777), 0);
  {
    ResultsFile results(planted);
    ASSERT_TRUE(results.ok()) << results.error();
    ASSERT_TRUE(results.write("mine"));
    ASSERT_TRUE(results.commit()) << results.error();
  }
  struct stat st{};
  ASSERT_EQ(::stat(planted.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid()) << "this user's file now";
  EXPECT_EQ(st.st_mode & 07000, 0u) << "not the planted file's setuid mode";
  EXPECT_EQ(contents(planted), "mine");
}

TEST_F(ResultsFileTest, AMissingDirectoryIsAnErrorBeforeAnythingIsSent) {
  ResultsFile results(path("no-such-dir/results"));
  EXPECT_FALSE(results.ok());
  EXPECT_NE(results.error().find("No such file"), std::string::npos) << results.error();
}

}  // namespace
}  // namespace sluice::console
