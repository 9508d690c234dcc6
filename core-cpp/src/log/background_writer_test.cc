// BackgroundWriter: a descriptor that takes nothing does not stop the thread that logs; what
// does not fit is dropped and counted, said in a note once the descriptor takes lines again,
// and every line kept is written whole, in order.
#include "log/background_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace sluice::logging {
namespace {

using namespace std::chrono_literals;

std::string numbered(int i) { return "line " + std::to_string(i) + " " + std::string(100, 'x') + "\n"; }

TEST(BackgroundWriter, AReaderThatTakesNothingCostsLinesNotTheLogger) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_GT(::fcntl(fds[1], F_SETPIPE_SZ, 4096), 0);  // a small pipe, and nobody reading it
  // Never destroyed (its thread may be stuck in write(2)); this one is, once the pipe closes.
  auto* writer = new BackgroundWriter(fds[1], 16 << 10, [](std::uint64_t n) { return "dropped " + std::to_string(n) + "\n"; });

  constexpr int kLines = 1000;  // ~110 KiB: far more than the pipe and the queue hold
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kLines; ++i) writer->add(numbered(i));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "add() waited for the reader";
  const std::uint64_t dropped = writer->dropped();
  EXPECT_GT(dropped, 0u);
  EXPECT_FALSE(writer->flush(100ms)) << "nothing can be written while the pipe is full";

  // The reader wakes up: what was kept arrives, then the note where the lines were dropped,
  // then later lines.
  std::string text;
  std::thread reader([&] {
    char chunk[4096];
    for (ssize_t n; (n = ::read(fds[0], chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<std::size_t>(n));
  });
  writer->add("after\n");
  EXPECT_TRUE(writer->flush(10s));
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);

  std::size_t at = 0;
  int next = 0;
  while (text.compare(at, 5, "line ") == 0) {
    const std::size_t end = text.find('\n', at) + 1;
    ASSERT_EQ(text.substr(at, end - at), numbered(next)) << "lines are whole and in order";
    at = end;
    ++next;
  }
  EXPECT_EQ(static_cast<std::uint64_t>(next) + dropped, static_cast<std::uint64_t>(kLines))
      << "every line was written or counted";
  EXPECT_EQ(text.substr(at), "dropped " + std::to_string(dropped) + "\nafter\n");
}

// A reader that is slow (10 KB/s, a serial console) but takes lines holds the logger back
// instead: nothing is dropped.
TEST(BackgroundWriter, AReaderThatKeepsReadingGetsEveryLine) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_GT(::fcntl(fds[1], F_SETPIPE_SZ, 4096), 0);
  auto* writer = new BackgroundWriter(fds[1], 16 << 10, [](std::uint64_t n) { return "dropped " + std::to_string(n) + "\n"; });
  std::string text;
  std::thread reader([&] {
    char chunk[512];
    for (ssize_t n; (n = ::read(fds[0], chunk, sizeof chunk)) > 0;) {
      text.append(chunk, static_cast<std::size_t>(n));
      std::this_thread::sleep_for(50ms);  // 512 B every 50 ms: a write waits for a page's worth
    }
  });
  std::string expected;
  for (int i = 0; i < 200; ++i) {
    writer->add(numbered(i));
    expected += numbered(i);
  }
  EXPECT_TRUE(writer->flush(30s));
  EXPECT_EQ(writer->dropped(), 0u);
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  EXPECT_EQ(text, expected);
}

// A descriptor that refuses lines (a full disk) loses them, as a direct write would, but they
// are counted (sluiced_log_lines_dropped_total) and said in a note before the next line it
// takes (an outside review: sluiced's log on a full disk lost whole runs, counted 0).
TEST(BackgroundWriter, LinesAFullDiskRefusedAreCountedAndSaidWhereWritingResumes) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int log_fd = ::dup(fds[1]);
  ASSERT_GE(log_fd, 0);
  const int full = ::open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0);
  auto* writer = new BackgroundWriter(log_fd, 16 << 10, [](std::uint64_t n) { return "dropped " + std::to_string(n) + "\n"; });
  writer->add("before\n");
  ASSERT_TRUE(writer->flush(10s));
  ASSERT_EQ(::dup2(full, log_fd), log_fd);  // the disk fills
  for (int i = 0; i < 3; ++i) writer->add(numbered(i));
  ASSERT_TRUE(writer->flush(10s));
  EXPECT_EQ(writer->dropped(), 3u);
  ASSERT_EQ(::dup2(fds[1], log_fd), log_fd);  // space again
  writer->add("after\n");
  ASSERT_TRUE(writer->flush(10s));
  ::close(fds[1]);
  ::close(full);
  std::string text;
  char chunk[256];
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  for (ssize_t n; (n = ::read(fds[0], chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<std::size_t>(n));
  ::close(fds[0]);
  EXPECT_EQ(text, "before\ndropped 3\nafter\n");
}

// A line longer than the whole queue is written (alone), not dropped.
TEST(BackgroundWriter, ALineLongerThanTheQueueIsWrittenWhole) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  auto* writer = new BackgroundWriter(fds[1], 16 << 10, [](std::uint64_t n) { return "dropped " + std::to_string(n) + "\n"; });
  std::string text;
  std::thread reader([&] {
    char chunk[4096];
    for (ssize_t n; (n = ::read(fds[0], chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<std::size_t>(n));
  });
  const std::string big = std::string(100 << 10, 'y') + "\n";
  writer->add("before\n");
  writer->add(big);
  writer->add("after\n");
  EXPECT_TRUE(writer->flush(10s));
  EXPECT_EQ(writer->dropped(), 0u);
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  EXPECT_EQ(text, "before\n" + big + "after\n");
}

}  // namespace
}  // namespace sluice::logging
