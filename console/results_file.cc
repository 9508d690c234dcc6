#include "console/results_file.h"

#include <fcntl.h>
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
  try {
    // Not through a symbolic link another user owns (at FILE or on the way to it), which
    // would have results written over a file of their choosing (an outside review did).
    target_ = tls::replace_target(path_, "--results");
    struct stat st{};
    const bool exists = ::stat(path_.c_str(), &st) == 0;  // through this user's own links
    if (!target_.empty()) {
      // Beside where the path really leads, renamed over it at commit().
      std::string name = target_ + ".XXXXXX.partial";
      std::vector<char> buf(name.begin(), name.end());
      buf.push_back('\0');
      const int fd = ::mkstemps(buf.data(), static_cast<int>(std::strlen(".partial")));
      if (fd >= 0) {
        // An existing file of this user's keeps its permissions; a new one (or one another
        // user owned) gets what fopen would give it.
        ::fchmod(fd, exists && st.st_uid == ::geteuid() ? (st.st_mode & 07777) : new_file_mode());
        file_ = ::fdopen(fd, "wb");
        if (file_ != nullptr) {
          temporary_ = buf.data();
          return;
        }
        ::close(fd);
        ::unlink(buf.data());
      }
      if (!exists) {
        // No temporary file there: create the file itself, exclusively (no link is followed).
        const int created = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, new_file_mode());
        if (created < 0 || (file_ = ::fdopen(created, "wb")) == nullptr) error_ = std::strerror(errno);
        return;
      }
    }
    // A FIFO, a device, or a regular file whose directory takes no temporary file: in place,
    // if it is this user's (or root's).
    const int fd = tls::open_output_in_place(path_, "--results");
    if (fd < 0 || (file_ = ::fdopen(fd, "wb")) == nullptr) error_ = std::strerror(errno);
  } catch (const Error& e) {
    error_ = e.what();
  }
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
    if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
      error_ = std::strerror(errno);
      discard();
      return false;
    }
    temporary_.clear();
  }
  return true;
}

}  // namespace sluice::console
