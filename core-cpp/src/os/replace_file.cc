#include "os/replace_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/write_all.h"
#include "sluice/error.h"

namespace sluice::os {

void replace_file(const std::string& path, std::string_view content, mode_t mode) {
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    throw Error("cannot write '" + path + "': cannot create a file beside it: " + std::strerror(errno) +
                "; is its directory there and writable?");
  }
  std::string why;
  errno = 0;
  if (::fchmod(fd, mode) != 0) why = std::strerror(errno);
  if (why.empty() && !write_all(fd, content.data(), content.size())) why = std::strerror(errno);
  if (::close(fd) != 0 && why.empty()) why = std::strerror(errno);
  if (why.empty() && std::rename(tmp.c_str(), path.c_str()) != 0) why = std::strerror(errno);
  if (!why.empty()) {
    ::unlink(tmp.c_str());
    throw Error("cannot write '" + path + "': " + why);
  }
}

}  // namespace sluice::os
