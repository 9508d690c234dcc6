#include "console/subprocess.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
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
