// Where `sluice submit --results` puts a unit's results: a file, stdout ("-"), or nowhere
// (an empty path: the bytes are only counted).
//
// A regular file is written under a temporary name beside it (FILE.XXXXXX.partial, made with
// mkstemps) and renamed over FILE only when the unit ends, finished or failed: a submit that
// never reached serve, was interrupted or lost its connection leaves an existing FILE as it
// was and no partial file behind. This user's own symbolic link is followed (the file it
// leads to is replaced); one another user owns, at FILE or on the way, is refused. A path
// that is not a regular file (a FIFO, /dev/stdout) or whose directory cannot take a
// temporary file is written in place, if it is this user's or root's
// (tls::open_output_in_place).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace sluice::console {

class ResultsFile {
 public:
  // Opens (creates) where the results go; ok() is false, with error(), when it cannot.
  explicit ResultsFile(std::string path);
  // Not committed: removes the temporary file (FILE stays as it was).
  ~ResultsFile();
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  bool ok() const { return error_.empty(); }
  // Why the last operation failed (strerror), empty while ok().
  const std::string& error() const { return error_; }

  // Appends a result's bytes; false (with error()) when they cannot be written.
  bool write(std::string_view data);
  // The unit ended: flushes and closes, and renames the temporary file over the path. False
  // (with error()) when that fails; the temporary file is then removed.
  bool commit();
  // True when the path stays untouched until commit() (a temporary file is in use).
  bool replaced_at_commit() const { return !temporary_.empty(); }

  std::uint64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  void discard();

  std::string path_;
  std::string target_;  // where the temporary file is renamed to: the path, or where its link leads
  std::string temporary_;  // empty: written in place (or stdout, or nowhere)
  FILE* file_ = nullptr;
  std::string error_;
  std::uint64_t bytes_ = 0;
};

}  // namespace sluice::console
