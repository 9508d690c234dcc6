#include "tls/trusted_file.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "sluice/error.h"

namespace sluice::tls {

namespace {

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%03o", static_cast<unsigned>(mode & 0777));
  return buf;
}

std::string user_name(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid)) return pw->pw_name;
  return "uid " + std::to_string(uid);
}

// Owned by this process's user or by root.
bool owned_by_us(const struct stat& st) { return st.st_uid == ::geteuid() || st.st_uid == 0; }

// Any user could replace an entry of this directory. (A group-writable one is the owner's
// choice to share with that group, as with its files.)
bool writable_by_others(const struct stat& st) { return (st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0; }

// The file (as named, a symlink included) and every directory above it, each seen with lstat:
// a symlink on the way that another user owns is as bad as their directory, since they may
// point it elsewhere.
void check_path(const std::string& path, const std::string& what, const std::filesystem::path& named,
                const std::string& me) {
  for (std::filesystem::path p = named;; p = p.parent_path()) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) return;
    const bool file = p == named;
    if (!owned_by_us(st)) {
      throw Error(what + " '" + path + "' is " +
                  (file ? std::string("a symbolic link") : S_ISLNK(st.st_mode) ? "reached through a symbolic link"
                                                                               : "in a directory") +
                  " that belongs to " + user_name(st.st_uid) + " ('" + p.string() + "'), not to " + me +
                  ": its owner could replace the file; keep it in a directory of your own");
    }
    if (!file && S_ISDIR(st.st_mode) && writable_by_others(st)) {
      throw Error(what + " '" + path + "' is in a directory other users may write to ('" + p.string() + "', mode " +
                  mode_text(st.st_mode) + "): they could replace the file; make it theirs no more with: chmod o-w " +
                  p.string());
    }
    if (!p.has_parent_path() || p.parent_path() == p) return;
  }
}

}  // namespace

void check_trusted_file(const std::string& path, const std::string& what, bool secret) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return;
  // Who may own them, as the messages say it.
  const std::string name = user_name(::geteuid());
  const std::string me = ::geteuid() == 0 ? "root (who runs this)" : name + " (who runs this) or root";
  if (!owned_by_us(st)) {
    throw Error(what + " '" + path + "' belongs to " + user_name(st.st_uid) + ", not to " + me +
                ": its owner could replace it; make it yours with: chown " + name + " " + path);
  }
  if (secret && (st.st_mode & 007) != 0) {
    throw Error(what + " '" + path + "' is accessible by other users (mode " + mode_text(st.st_mode) +
                "); make it private with: chmod 600 " + path);
  }
  if (!secret && (st.st_mode & S_IWOTH) != 0) {
    throw Error(what + " '" + path + "' may be written by other users (mode " + mode_text(st.st_mode) +
                "): they could put their own in its place; make it theirs no more with: chmod o-w " + path);
  }
  // Whoever may rename an entry of a directory on the way, or repoint a symlink on it, could
  // swap the file: the path as named, and where it really leads.
  std::error_code ec;
  const std::filesystem::path named = std::filesystem::absolute(path, ec);
  if (!ec) check_path(path, what, named, me);
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (!ec && real != named) check_path(path, what, real, me);
}

}  // namespace sluice::tls
