// replace_file: writes a whole small file so that readers see the old content or the new,
// never a part, and so that nothing planted at the path is followed.
//
// The content goes into a temporary file of a fresh name beside `path` (mkstemp: created
// exclusively, so a symlink someone planted in the directory is never written through),
// which is then renamed over `path`: a symlink at `path` itself is replaced, not followed
// (an outside review had `sluice run --metrics FILE` overwrite another user's file through one).
#ifndef SLUICE_OS_REPLACE_FILE_H_
#define SLUICE_OS_REPLACE_FILE_H_

#include <sys/types.h>

#include <string>
#include <string_view>

namespace sluice::os {

// Throws sluice::Error "cannot write '<path>': <reason>" (the temporary file removed); a
// full disk or a short write is reported, not left to a destructor.
void replace_file(const std::string& path, std::string_view content, mode_t mode);

}  // namespace sluice::os

#endif  // SLUICE_OS_REPLACE_FILE_H_
