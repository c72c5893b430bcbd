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
// Refuses (false, "cannot write 'PATH': it is an input of this command") to replace a file
// that note_input_file recorded, however it is named, unless `replaces_input` (`fix -o FILE`
// repairing FILE in place, which the user asks for by naming it).
bool write_file_atomic(const std::string& path, std::string_view data, std::string& error, bool replaces_input = false);

// Records the regular file open at `fd` as an input of this process (by device and inode), so
// that no output can replace it. Thread-safe; files that are not regular are not recorded.
void note_input_file(int fd);

}  // namespace qvet
