#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

namespace qvet {

namespace {

// Writes all of `data` to `fd`, resuming after short writes and interrupts; false with errno set.
bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), std::min(data.size(), size_t(1) << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    data.remove_prefix(size_t(n));
  }
  return true;
}

std::string directory_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The file a write to `path` should replace: the target of a symbolic link, else `path`.
std::string resolve_link(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real) return path;  // a dangling link: replace the link itself
  std::string r = real;
  std::free(real);
  return r;
}

// Opens a new file in `dir` under a name no other file has (O_EXCL); -1 with errno set.
int create_temp_in(const std::string& dir, std::string& temp) {
  static unsigned counter = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp = dir + "/.qvet-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp";
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

// Devices and pipes hold no data to lose: they are written directly.
bool write_in_place(const std::string& path, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return false;
  bool ok = write_all(fd, data);
  int saved = errno;
  if (::close(fd) != 0 && ok) return false;
  errno = saved;
  return ok;
}

// Writes `data` to the new file `fd` named `temp` and renames it over `target`; on failure the
// temporary file is removed and errno says why.
bool finish_temp(int fd, const std::string& temp, const std::string& target, const struct stat* old,
                 std::string_view data) {
  bool ok = (!old || ::fchmod(fd, old->st_mode & 07777) == 0) && write_all(fd, data) && ::fsync(fd) == 0;
  int saved = errno;
  if (::close(fd) != 0 && ok) ok = false, saved = errno;
  if (ok && ::rename(temp.c_str(), target.c_str()) != 0) ok = false, saved = errno;
  if (!ok) {
    ::unlink(temp.c_str());
    errno = saved;
  }
  return ok;
}

// Makes the rename durable; failures here cannot lose data any more, so they are ignored.
void sync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

namespace {

std::mutex inputs_mutex;
std::set<std::pair<dev_t, ino_t>>& inputs() {
  static std::set<std::pair<dev_t, ino_t>> s;
  return s;
}

bool is_input(const struct stat& st) {
  std::lock_guard<std::mutex> lock(inputs_mutex);
  return inputs().count({st.st_dev, st.st_ino}) != 0;
}

}  // namespace

void note_input_file(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
  std::lock_guard<std::mutex> lock(inputs_mutex);
  inputs().insert({st.st_dev, st.st_ino});
}

bool write_file_atomic(const std::string& path, std::string_view data, std::string& error, bool replaces_input) {
  std::signal(SIGXFSZ, SIG_IGN);  // past `ulimit -f`, write() then fails with EFBIG
  auto fail = [&](int err) {
    error = "cannot write '" + path + "': " + std::strerror(err);
    return false;
  };
  if (path.empty()) return fail(ENOENT);
  std::string target = resolve_link(path);
  struct stat old {};
  bool exists = ::stat(target.c_str(), &old) == 0;
  if (exists && S_ISDIR(old.st_mode)) return fail(EISDIR);
  if (exists && S_ISREG(old.st_mode) && !replaces_input && is_input(old)) {
    error = "cannot write '" + path + "': it is an input of this command, which an output never replaces";
    return false;
  }
  if (exists && !S_ISREG(old.st_mode)) return write_in_place(target, data) || fail(errno);
  std::string dir = directory_of(target), temp;
  int fd = create_temp_in(dir, temp);
  if (fd < 0) return fail(errno);
  if (!finish_temp(fd, temp, target, exists ? &old : nullptr, data)) return fail(errno);
  sync_directory(dir);
  return true;
}

}  // namespace qvet
