// Paths another local user could redirect.
//
// check_trusted_file: who may change the files that decide whom a daemon or console trusts (a
// token, a private key, a CA certificate). Checked the way OpenSSH's StrictModes checks
// authorized_keys: the file and every directory above it, as named and where its symbolic
// links really lead, and each such link, must belong to this process's user or to root, and
// none may be writable by other users: not by all (a world-writable directory with the sticky
// bit, /tmp, is fine: others cannot replace what is in it), nor by a group with anyone else in
// it (a user's private group is fine). Otherwise another local user could put their own token
// or CA in place and, at the next start, run code as this user.
//
// check_output_path: a file sluice writes at a path the user gave (--metrics, --results,
// --ready-file) must not be reached through a symbolic link another user owns, at the file
// itself or at a directory on the way: through one planted in a shared directory, the console
// would write over a file of that user's choosing. Links of this user's or root's are followed.
#ifndef SLUICE_TLS_TRUSTED_FILE_H_
#define SLUICE_TLS_TRUSTED_FILE_H_

#include <string>

namespace sluice::tls {

// Throws sluice::Error naming `what` ("token file", "private key (--key)", ...), the file,
// directory or link at fault, its owner or mode, and the command that fixes it. A path that
// does not exist passes (the caller reports that in its own words). `secret`: the file must
// also not be readable by other users (mode & 007; its group may read it, on purpose).
void check_trusted_file(const std::string& path, const std::string& what, bool secret);

// Throws sluice::Error "<what> '<path>' is reached through a symbolic link that belongs to
// <user> ('<link>'), not followed; ..." for such a link; a path that does not exist yet passes.
void check_output_path(const std::string& path, const std::string& what);

// Where an output at `path` is written as a whole new file, after check_output_path: the
// place a temporary file beside it is renamed over (the path itself, or where this user's own
// link there leads), when the path names a regular file or nothing yet; "" when it names a
// FIFO or a device, which open_output_in_place opens instead. The rename replaces whatever has
// the name by then, never writing through something swapped in meanwhile.
std::string replace_target(const std::string& path, const std::string& what);

// check_output_path, and the entry the lookup ends at (if any) is this user's or root's: what
// open_output_in_place checks before it opens, for a caller that must not open yet (another
// user's FIFO would wait for them).
void check_output_in_place(const std::string& path, const std::string& what);

// Where an output at `path` that is not a regular file (a FIFO, a device: written in place,
// not replaced) is opened for writing: after check_output_path, the entry itself must be this
// user's or root's (another user's FIFO would read what is written; their file would take it),
// and it is opened without following a link at the last step, then checked again on the
// descriptor (a swap between the two). Returns the descriptor; throws sluice::Error as above.
int open_output_in_place(const std::string& path, const std::string& what);

}  // namespace sluice::tls

#endif  // SLUICE_TLS_TRUSTED_FILE_H_
