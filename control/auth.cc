#include "control/auth.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <openssl/rand.h>

#include "sluice/error.h"
#include "tls/trusted_file.h"

namespace sluice::control {

std::string read_token_file(const std::string& path, TokenReader reader) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && reader == TokenReader::kConsole) {
    throw Error("token file '" + path + "' does not exist; copy the token file of the running host daemons " +
                "(the file their --token-file names) to " + path + " and chmod 600 it, or pass --token-file " +
                "with its path; a new token would not match theirs");
  }
  if (::stat(path.c_str(), &st) != 0) {
    // The console and every daemon must hold the same token: a fresh one never matches
    // daemons already running, so copying theirs comes first. Its directory may not exist
    // yet (~/.config/sluice on a fresh machine): the commands make it first (mkdir -p -m:
    // private when made, an existing one keeps its mode).
    const std::string dir = std::filesystem::path(path).parent_path().string();
    const std::string make_dir = dir.empty() ? "" : "mkdir -p -m 700 " + dir + " && ";
    throw Error("token file '" + path + "' does not exist; every sluiced, the consoles that use them, " +
                "and a sluice serve with the programs that submit to it must share one token: copy the " +
                "file the running ones were started with (e.g. " + make_dir + "scp HOST:" + path + " " +
                path + " && chmod 600 " + path + "), or, only before starting the first of them, create " +
                "one with: " + make_dir + "head -c 32 /dev/urandom | base64 > " + path + " && chmod 600 " +
                path);
  }
  if (!S_ISREG(st.st_mode)) throw Error("token file '" + path + "' is not a regular file");
  // A private file that another user owns, or in a directory another user owns or any user
  // may write to, is not private: they could put their own token in its place before the
  // daemon starts (a sticky /tmp is fine).
  tls::check_trusted_file(path, "token file", /*secret=*/true);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read token file '" + path + "'; check its owner and permissions");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ' ||
                            token.back() == '\t')) {
    token.pop_back();
  }
  if (token.empty()) {
    throw Error("token file '" + path + "' is empty; put a secret in it, e.g. " +
                "head -c 32 /dev/urandom | base64 > " + path);
  }
  // The TLS-PSK binder of one recorded handshake lets anyone test guesses offline, as fast
  // as they can hash: a short token falls to that.
  if (token.size() < kMinTokenBytes) {
    throw Error("token file '" + path + "' holds a token of " + std::to_string(token.size()) +
                " characters, too short to resist offline guessing (one recorded handshake is enough to test " +
                "guesses); use at least " + std::to_string(kMinTokenBytes) + ", e.g. head -c 32 /dev/urandom | base64 > " +
                path + " (then give the new file to every host and console)");
  }
  return token;
}

std::string random_bytes(std::size_t size) {
  std::string out(size, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(size)) != 1) {
    throw Error("no random bytes available (OpenSSL RAND_bytes failed)");
  }
  return out;
}

std::string random_hex(std::size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : random_bytes(size)) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

}  // namespace sluice::control
