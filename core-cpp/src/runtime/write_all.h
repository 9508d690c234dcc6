// write_all: every byte to a file descriptor, retrying after EINTR and partial writes; stops
// at the first error (a reader gone, a closed descriptor, a full disk) and returns false, with
// errno saying why (EIO for a write that took nothing). Async-signal-safe: the crash handler
// writes its report with it (and need not look at the result).
#ifndef SLUICE_RUNTIME_WRITE_ALL_H_
#define SLUICE_RUNTIME_WRITE_ALL_H_

#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace sluice {

inline bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace sluice

#endif  // SLUICE_RUNTIME_WRITE_ALL_H_
