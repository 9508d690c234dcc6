// write_all: every byte to a file descriptor, retrying after EINTR and partial writes; stops
// at the first error (a reader gone, a closed descriptor: nowhere to write). Async-signal-safe:
// the crash handler writes its report with it.
#ifndef SLUICE_RUNTIME_WRITE_ALL_H_
#define SLUICE_RUNTIME_WRITE_ALL_H_

#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace sluice {

inline void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace sluice

#endif  // SLUICE_RUNTIME_WRITE_ALL_H_
