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

}  // namespace

void check_trusted_file(const std::string& path, const std::string& what, bool secret) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return;
  const std::string me = user_name(::geteuid());
  if (!owned_by_us(st)) {
    throw Error(what + " '" + path + "' belongs to " + user_name(st.st_uid) + ", not to " + me +
                " (who runs this) or root: its owner could replace it; make it yours with: chown " + me + " " +
                path);
  }
  if (secret && (st.st_mode & 007) != 0) {
    throw Error(what + " '" + path + "' is accessible by other users (mode " + mode_text(st.st_mode) +
                "); make it private with: chmod 600 " + path);
  }
  if (!secret && (st.st_mode & S_IWOTH) != 0) {
    throw Error(what + " '" + path + "' may be written by other users (mode " + mode_text(st.st_mode) +
                "): they could put their own in its place; make it theirs no more with: chmod o-w " + path);
  }
  // Every directory above it: whoever may rename an entry of one could swap the file.
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(path, ec).parent_path();
  if (ec) return;
  for (;;) {
    struct stat dir_st;
    if (::stat(dir.c_str(), &dir_st) != 0) break;
    if (!owned_by_us(dir_st)) {
      throw Error(what + " '" + path + "' is in a directory that belongs to " + user_name(dir_st.st_uid) +
                  " ('" + dir.string() + "'), not to " + me + " (who runs this) or root: its owner could " +
                  "replace the file; keep it in a directory of your own");
    }
    if (writable_by_others(dir_st)) {
      throw Error(what + " '" + path + "' is in a directory other users may write to ('" + dir.string() +
                  "', mode " + mode_text(dir_st.st_mode) + "): they could replace the file; make it theirs no " +
                  "more with: chmod o-w " + dir.string());
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
}

}  // namespace sluice::tls
