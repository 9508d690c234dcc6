#include "console/results_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "sluice/error.h"
#include "tls/trusted_file.h"

namespace sluice::console {

namespace {

// The permissions a new file gets from fopen (0666 less the umask), for the temporary file
// mkstemps makes 0600. Read before any thread starts (umask is process-wide).
mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

ResultsFile::ResultsFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) return;
  if (path_ == "-") {
    file_ = stdout;
    return;
  }
  // Not through a symbolic link another user owns (at FILE or on the way to it), which would
  // have results written over a file of their choosing (an outside review did).
  try {
    tls::check_output_path(path_, "--results");
  } catch (const Error& e) {
    error_ = e.what();
    return;
  }
  struct stat st{};
  const bool exists = ::lstat(path_.c_str(), &st) == 0;
  if (!exists || S_ISREG(st.st_mode)) {
    std::string name = path_ + ".XXXXXX.partial";
    std::vector<char> buf(name.begin(), name.end());
    buf.push_back('\0');
    const int fd = ::mkstemps(buf.data(), static_cast<int>(std::strlen(".partial")));
    if (fd >= 0) {
      // An existing file keeps its permissions; a new one gets what fopen would give it.
      ::fchmod(fd, exists ? (st.st_mode & 07777) : new_file_mode());
      file_ = ::fdopen(fd, "wb");
      if (file_ != nullptr) {
        temporary_ = buf.data();
        return;
      }
      ::close(fd);
      ::unlink(buf.data());
    }
  }
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) error_ = std::strerror(errno);
}

ResultsFile::~ResultsFile() {
  if (file_ != nullptr && file_ != stdout) std::fclose(file_);
  file_ = nullptr;
  discard();
}

void ResultsFile::discard() {
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  temporary_.clear();
}

bool ResultsFile::write(std::string_view data) {
  bytes_ += data.size();
  if (file_ == nullptr || data.empty()) return true;
  if (std::fwrite(data.data(), 1, data.size(), file_) != data.size()) {
    error_ = std::strerror(errno);
    return false;
  }
  return true;
}

bool ResultsFile::commit() {
  if (file_ != nullptr) {
    FILE* f = file_;
    file_ = nullptr;
    const bool flushed = std::fflush(f) == 0 && (f == stdout || std::fclose(f) == 0);
    if (!flushed && error_.empty()) error_ = std::strerror(errno);
  }
  if (!ok()) {
    discard();
    return false;
  }
  if (!temporary_.empty()) {
    if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
      error_ = std::strerror(errno);
      discard();
      return false;
    }
    temporary_.clear();
  }
  return true;
}

}  // namespace sluice::console
