// Who may change the files that decide whom a daemon or console trusts: a token, a private
// key, a CA certificate. Checked the way OpenSSH's StrictModes checks authorized_keys: the
// file and every directory above it must belong to this process's user or to root, and none
// may be writable by all users (a world-writable directory with the sticky bit, /tmp, is
// fine: others cannot replace what is in it; a group-writable one is its owner's choice). Otherwise another local user could put their
// own token or CA in place and, at the next start, run code as this user.
#ifndef SLUICE_TLS_TRUSTED_FILE_H_
#define SLUICE_TLS_TRUSTED_FILE_H_

#include <string>

namespace sluice::tls {

// Throws sluice::Error naming `what` ("token file", "private key '--key'", ...), the file or
// directory at fault, its owner or mode, and the command that fixes it. A path that does not
// exist passes (the caller reports that in its own words). `secret`: the file must also not
// be readable by other users (mode & 007).
void check_trusted_file(const std::string& path, const std::string& what, bool secret);

}  // namespace sluice::tls

#endif  // SLUICE_TLS_TRUSTED_FILE_H_
