#include "tls/trusted_file.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <deque>
#include <filesystem>

#include "sluice/error.h"

namespace sluice::tls {

namespace {

namespace fs = std::filesystem;

constexpr int kMaxLinks = 40;  // as the kernel's own limit on symlinks in one lookup

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%03o", static_cast<unsigned>(mode & 0777));
  return buf;
}

std::string user_name(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid)) return pw->pw_name;
  return "uid " + std::to_string(uid);
}

std::string group_name(gid_t gid) {
  if (const group* gr = ::getgrgid(gid)) return gr->gr_name;
  return "gid " + std::to_string(gid);
}

// Owned by this process's user or by root.
bool owned_by_us(const struct stat& st) { return st.st_uid == ::geteuid() || st.st_uid == 0; }

// Nobody but the owner is in the file's group: no member listed, and no other user has it as
// their primary group (Debian's user private groups; a shared `users` group is not one).
bool private_group(const struct stat& st) {
  const group* gr = ::getgrgid(st.st_gid);
  if (gr == nullptr) return false;
  const std::string owner = user_name(st.st_uid);
  for (char** member = gr->gr_mem; *member != nullptr; ++member) {
    if (owner != *member) return false;
  }
  ::setpwent();
  bool alone = true;
  while (const passwd* pw = ::getpwent()) {
    if (pw->pw_gid == st.st_gid && pw->pw_uid != st.st_uid) {
      alone = false;
      break;
    }
  }
  ::endpwent();
  return alone;
}

// An access control list with entries beyond the mode bits (when it has them, the group bits
// are its mask): another user or group may be granted writing there.
bool has_acl(const std::string& path) {
  return ::lgetxattr(path.c_str(), "system.posix_acl_access", nullptr, 0) > 0;
}

// Someone else may write to it: all users, a group with others in it, or an access control
// list. A directory with the sticky bit is safe from them (they cannot rename or remove what
// is not theirs).
const char* written_by_others(const std::string& path, const struct stat& st) {
  if (S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0) return nullptr;
  if ((st.st_mode & S_IWOTH) != 0) return "other users";
  if ((st.st_mode & S_IWGRP) != 0 && has_acl(path)) return "users its access control list names";
  if ((st.st_mode & S_IWGRP) != 0 && !private_group(st)) return "its group";
  return nullptr;
}

// Says who may write to `p` and how to stop it.
[[noreturn]] void throw_written(const std::string& lead, const std::string& p, const struct stat& st, const char* who) {
  const std::string w(who);
  const bool all = w == "other users";
  throw Error(lead + " ('" + p + "', mode " + mode_text(st.st_mode) +
              (all ? std::string("") : ", group " + group_name(st.st_gid)) + "): they could replace the file; " +
              "make it theirs no more with: " +
              (w == "users its access control list names" ? "setfacl -b " : all ? "chmod o-w " : "chmod g-w ") + p);
}

// Who may own them, as the messages say it.
std::string who_may_own() {
  return ::geteuid() == 0 ? "root (who runs this)" : user_name(::geteuid()) + " (who runs this) or root";
}

// Follows `path` one component at a time from the root, as the kernel does, and checks every
// entry the lookup passes through: each symbolic link (on the path as named, in a link's
// target, or in the middle of a chain of links) must be ours or root's; with `links_only`
// false, so must each directory it goes through, none of them writable by others, and the
// file itself (not checked here: the caller stats it).
void walk(const std::string& path, const std::string& what, bool links_only) {
  std::error_code ec;
  const fs::path start = fs::absolute(path, ec);
  if (ec) return;
  std::deque<std::string> todo;
  for (const fs::path& part : start.relative_path()) todo.push_back(part.string());
  fs::path at = "/";
  int links = 0;
  while (!todo.empty()) {
    const std::string name = todo.front();
    todo.pop_front();
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      at = at.parent_path();
      continue;
    }
    // `at` is a directory the lookup goes through: checked when it was reached.
    const fs::path next = at / name;
    struct stat st;
    if (::lstat(next.c_str(), &st) != 0) return;  // not there (yet): nothing past it to check
    if (!owned_by_us(st) && (S_ISLNK(st.st_mode) || !links_only)) {
      const bool file = todo.empty() && !S_ISLNK(st.st_mode);
      throw Error(what + " '" + path + "' is " +
                  (S_ISLNK(st.st_mode) ? std::string("reached through a symbolic link")
                   : file              ? std::string("a file")
                                       : std::string("in a directory")) +
                  " that belongs to " + user_name(st.st_uid) + " ('" + next.string() + "'), not to " + who_may_own() +
                  (links_only ? std::string(", not followed: its owner chooses where it leads; remove it, or give a "
                                            "path without it")
                              : ": its owner could replace the file; keep it in a directory of your own"));
    }
    if (S_ISLNK(st.st_mode)) {
      if (++links > kMaxLinks) return;  // a loop: the open fails and says so
      std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
      const ssize_t n = ::readlink(next.c_str(), target.data(), target.size());
      if (n < 0) return;
      target.resize(static_cast<std::size_t>(n));
      const fs::path to(target);
      std::deque<std::string> parts;
      for (const fs::path& part : to.relative_path()) parts.push_back(part.string());
      todo.insert(todo.begin(), parts.begin(), parts.end());
      if (to.is_absolute()) at = "/";
      continue;
    }
    if (!links_only && S_ISDIR(st.st_mode) && !todo.empty()) {
      if (const char* who = written_by_others(next.string(), st)) {
        throw_written(what + " '" + path + "' is in a directory " + who + " may write to", next.string(), st, who);
      }
    }
    at = next;
  }
}

}  // namespace

void check_trusted_file(const std::string& path, const std::string& what, bool secret) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return;
  if (!owned_by_us(st)) {
    throw Error(what + " '" + path + "' belongs to " + user_name(st.st_uid) + ", not to " + who_may_own() +
                ": its owner could replace it; make it yours with: chown " + user_name(::geteuid()) + " " + path);
  }
  if (secret && (st.st_mode & 007) != 0) {
    throw Error(what + " '" + path + "' is accessible by other users (mode " + mode_text(st.st_mode) +
                "); make it private with: chmod 600 " + path);
  }
  if (const char* who = written_by_others(path, st); who != nullptr && !secret) {
    throw_written(what + " '" + path + "' may be written by " + std::string(who), path, st, who);
  }
  // Whoever may rename an entry of a directory the lookup goes through, or repoint a link on
  // the way, could swap the file.
  walk(path, what, /*links_only=*/false);
}

void check_output_path(const std::string& path, const std::string& what) { walk(path, what, /*links_only=*/true); }

std::string replace_target(const std::string& path, const std::string& what) {
  check_output_path(path, what);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return path;  // nothing yet (or a link of ours to nothing)
  if (!S_ISREG(st.st_mode)) return "";
  char real[PATH_MAX];
  return ::realpath(path.c_str(), real) != nullptr ? std::string(real) : path;
}

namespace {

// The entry an output's lookup ends at is this user's or root's: another user's FIFO would
// read what is written there, their file would take it.
void refuse_foreign(const std::string& path, const std::string& what, const struct stat& st) {
  if (owned_by_us(st)) return;
  throw Error(what + " '" + path + "' is a " + (S_ISFIFO(st.st_mode) ? "FIFO" : "file") + " that belongs to " +
              user_name(st.st_uid) + ", not to " + who_may_own() + ": not written (its owner would read what " +
              "is written there); remove it, or give another path");
}

}  // namespace

void check_output_in_place(const std::string& path, const std::string& what) {
  check_output_path(path, what);
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) refuse_foreign(path, what, st);
}

int open_output_in_place(const std::string& path, const std::string& what) {
  check_output_in_place(path, what);
  // A link of ours at the last step was checked by the walk: follow it (it is where the user
  // meant); anything else is opened as it is, not through a link swapped in since. The
  // descriptor is checked again: the entry may have been swapped between the two.
  struct stat st;
  const bool ours_linked = ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (ours_linked ? 0 : O_NOFOLLOW));
  if (fd < 0) return fd;
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  if (!owned_by_us(st)) {
    ::close(fd);
    refuse_foreign(path, what, st);
  }
  return fd;
}

}  // namespace sluice::tls
