// Writing output files without ever losing what was there: the data goes to a new file beside
// the target, every write, the fsync and the close are checked, and only then is it renamed over
// the target. On any failure the temporary file is removed and the target is untouched.
#pragma once
#include <string>
#include <string_view>

namespace qvet {

// Writes `data` to `path` atomically. On failure returns false and sets `error` to
// "cannot write 'PATH': REASON". A target that exists and is not a regular file (a terminal,
// /dev/null, a pipe) is written in place, since there is nothing on it to lose; a symbolic link
// keeps pointing where it did and its target is replaced. The replaced file keeps its mode.
// Ignores SIGXFSZ (once, for the process) so that a file-size limit is an error, not a crash.
bool write_file_atomic(const std::string& path, std::string_view data, std::string& error);

}  // namespace qvet
