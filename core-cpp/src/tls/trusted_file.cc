#include "tls/trusted_file.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "sluice/error.h"

namespace sluice::tls {

namespace {

namespace fs = std::filesystem;

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

// The file's group holds nobody but its owner: the owner's own group (Debian's user private
// groups), with no other members listed.
bool private_group(const struct stat& st) {
  const group* gr = ::getgrgid(st.st_gid);
  const passwd* pw = ::getpwuid(st.st_uid);
  if (gr == nullptr || pw == nullptr || pw->pw_gid != st.st_gid) return false;
  for (char** member = gr->gr_mem; *member != nullptr; ++member) {
    if (pw->pw_name != std::string(*member)) return false;
  }
  return true;
}

// Someone else may write to it: all users, or a group with others in it. A directory with the
// sticky bit is safe from them (they cannot rename or remove what is not theirs).
const char* written_by_others(const struct stat& st) {
  if (S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0) return nullptr;
  if ((st.st_mode & S_IWOTH) != 0) return "other users";
  if ((st.st_mode & S_IWGRP) != 0 && !private_group(st)) return "its group";
  return nullptr;
}

std::string group_name(gid_t gid) {
  if (const group* gr = ::getgrgid(gid)) return gr->gr_name;
  return "gid " + std::to_string(gid);
}

// Says who may write to `p` and how to stop it.
[[noreturn]] void throw_written(const std::string& lead, const fs::path& p, const struct stat& st, const char* who) {
  const bool all = std::string(who) == "other users";
  throw Error(lead + " ('" + p.string() + "', mode " + mode_text(st.st_mode) +
              (all ? std::string("") : ", group " + group_name(st.st_gid)) + "): they could replace the file; " +
              "make it theirs no more with: chmod " + (all ? "o-w " : "g-w ") + p.string());
}

// `named` (a symlink itself, if it is one) and every directory above it, each seen with lstat.
// `links_only`: only a symlink another user owns is refused (where sluice writes); else every
// entry on the way must be ours or root's and none writable by others (what sluice trusts).
void check_path(const std::string& path, const std::string& what, const fs::path& named, const std::string& me,
                bool links_only) {
  for (fs::path p = named;; p = p.parent_path()) {
    struct stat st;
    if (::lstat(p.c_str(), &st) == 0) {
      const bool file = p == named;
      const bool link = S_ISLNK(st.st_mode);
      if (!owned_by_us(st) && (link || !links_only)) {
        throw Error(what + " '" + path + "' is " +
                    (link ? std::string(file ? "a symbolic link" : "reached through a symbolic link")
                          : "in a directory") +
                    " that belongs to " + user_name(st.st_uid) + " ('" + p.string() + "'), not to " + me +
                    (links_only ? std::string(", not followed: its owner chooses where it leads; remove it, or "
                                              "give a path without it")
                                : ": its owner could replace the file; keep it in a directory of your own"));
      }
      if (!links_only && !file && S_ISDIR(st.st_mode)) {
        if (const char* who = written_by_others(st)) {
          throw_written(what + " '" + path + "' is in a directory " + who + " may write to", p, st, who);
        }
      }
    }
    if (!p.has_parent_path() || p.parent_path() == p) return;
  }
}

// Who may own them, as the messages say it.
std::string who_may_own() {
  return ::geteuid() == 0 ? "root (who runs this)" : user_name(::geteuid()) + " (who runs this) or root";
}

}  // namespace

void check_trusted_file(const std::string& path, const std::string& what, bool secret) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return;
  const std::string me = who_may_own();
  if (!owned_by_us(st)) {
    throw Error(what + " '" + path + "' belongs to " + user_name(st.st_uid) + ", not to " + me +
                ": its owner could replace it; make it yours with: chown " + user_name(::geteuid()) + " " + path);
  }
  if (secret && (st.st_mode & 007) != 0) {
    throw Error(what + " '" + path + "' is accessible by other users (mode " + mode_text(st.st_mode) +
                "); make it private with: chmod 600 " + path);
  }
  if (const char* who = written_by_others(st); who != nullptr && !secret) {
    throw_written(what + " '" + path + "' may be written by " + std::string(who), path, st, who);
  }
  // Whoever may rename an entry of a directory on the way, or repoint a symlink on it, could
  // swap the file: the path as named, and where it really leads.
  std::error_code ec;
  const fs::path named = fs::absolute(path, ec);
  if (!ec) check_path(path, what, named, me, /*links_only=*/false);
  const fs::path real = fs::canonical(path, ec);
  if (!ec && real != named) check_path(path, what, real, me, /*links_only=*/false);
}

void check_output_path(const std::string& path, const std::string& what) {
  std::error_code ec;
  const fs::path named = fs::absolute(path, ec);
  if (!ec) check_path(path, what, named, who_may_own(), /*links_only=*/true);
}

}  // namespace sluice::tls
