#include "console/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include "sluice/error.h"

namespace sluice::console {
namespace {

namespace fs = std::filesystem;

TEST(Child, DoesNotFollowASymlinkPlantedAtItsLogFile) {
  char pattern[] = "/tmp/subprocess_test.XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  const std::string victim = (dir / "victim").string();
  std::ofstream(victim) << "precious\n";
  const std::string log = (dir / "salloc-run.log").string();
  fs::create_symlink(victim, log);
  EXPECT_THROW(Child({"/bin/echo", "appended"}, log, log), sluice::Error);
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), "precious\n");
  fs::remove_all(dir);
}

// A descriptor the console holds without close-on-exec (Asio's sockets: serve's --listen)
// does not reach the child: srun kept serve's ports after serve was gone.
TEST(RunAndCapture, TheChildInheritsNoDescriptorButItsStandardOnes) {
  const int opened = ::open("/dev/null", O_RDONLY);
  const int held = ::fcntl(opened, F_DUPFD, 100);  // no close-on-exec; clear of what ls opens
  ::close(opened);
  ASSERT_GE(held, 100);
  const CommandOutput listed = run_and_capture({"sh", "-c", "ls /proc/self/fd"});
  ::close(held);
  ASSERT_TRUE(listed.ok()) << listed.err;
  std::set<std::string> fds;
  std::istringstream lines(listed.out);
  for (std::string fd; lines >> fd;) fds.insert(fd);
  // 0, 1, 2, and the descriptor ls itself opened to read the directory.
  EXPECT_EQ(fds.count(std::to_string(held)), 0u) << listed.out;
  EXPECT_LE(fds.size(), 4u) << listed.out;
}

TEST(Child, WritesItsOutputToAFileItMakes) {
  char pattern[] = "/tmp/subprocess_test.XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  const std::string log = (dir / "out.log").string();
  {
    Child child({"/bin/echo", "written"}, log, log);
    EXPECT_TRUE(child.wait_for(std::chrono::seconds(10)));
    EXPECT_EQ(child.exit_status(), 0);
  }
  std::ifstream in(log);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), "written\n");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sluice::console
