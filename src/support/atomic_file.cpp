// AtomicFileWriter: a locked temporary beside the target, fsync, rename, fsync the folder.
#include "support/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "support/diagnostics.h"
#include "support/ranks.h"

namespace presk {
namespace {

std::string folder_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Opens and exclusively locks the temporary. The lock is taken on the inode we opened; if a
// previous owner renamed that inode onto the target meanwhile, the name now points
// elsewhere (or nowhere) and we start again, so we never truncate a committed file.
int open_locked_temporary(const std::string& temporary_path) {
  for (;;) {
    // Never through a link planted at the temporary's name, never blocking on a FIFO there.
    int fd = ::open(temporary_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
    if (fd < 0) return -errno;
    int locked;
    do {
      locked = ::flock(fd, LOCK_EX);
    } while (locked != 0 && errno == EINTR);
    struct stat opened {
    }, named{};
    bool same = locked == 0 && ::fstat(fd, &opened) == 0 &&
                ::stat(temporary_path.c_str(), &named) == 0 && opened.st_dev == named.st_dev &&
                opened.st_ino == named.st_ino;
    if (same) return fd;
    int error = errno;
    ::close(fd);
    if (locked != 0) return -error;
  }
}

}  // namespace

std::string atomic_temporary_path(const std::string& path) {
  return path + ".presk-tmp";
}

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), temporary_path_(atomic_temporary_path(path_)) {
  require_file_target(path_);
  require_file_target(temporary_path_, "the temporary");  // a leftover link would be written through
  if (!ranks::writes_outputs()) {  // a rank but 0 of a distributed run: rank 0 writes (support/ranks.h)
    temporary_path_.clear();        // the mark of a discarded write
    return;
  }
  int fd = open_locked_temporary(temporary_path_);
  if (fd < 0) fail("E0130", "cannot create the temporary file", -fd);
  fd_ = fd;
  // A leftover of a killed writer: start it afresh (only a regular file can be truncated).
  struct stat temporary {};
  if (::fstat(fd_, &temporary) == 0 && S_ISREG(temporary.st_mode) && ::ftruncate(fd_, 0) != 0) {
    fail("E0131", "cannot truncate the temporary file", errno);
  }
  struct stat existing {};
  if (::stat(path_.c_str(), &existing) == 0 && S_ISREG(existing.st_mode)) {
    ::fchmod(fd_, existing.st_mode & 07777);  // best effort: keep the old file's mode
  }
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    if (!committed_) ::unlink(temporary_path_.c_str());  // still ours: we hold the lock
    ::close(fd_);
  }
}

void AtomicFileWriter::fail(const char* code, const std::string& what, int error_number) {
  if (fd_ >= 0) {
    if (!committed_) ::unlink(temporary_path_.c_str());
    ::close(fd_);
    fd_ = -1;
  }
  user_error(code).hint("check that the folder exists, is writable and has free space")
      << "cannot write `" << path_ << "`: " << what << " (" << std::strerror(error_number) << ")";
}

void AtomicFileWriter::write(const void* data, size_t size) {
  if (temporary_path_.empty()) return;  // discarded (the constructor)
  internal_assert(fd_ >= 0 && !committed_);
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t written = ::write(fd_, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) fail("E0131", "writing failed", written < 0 ? errno : ENOSPC);
    bytes += written;
    size -= static_cast<size_t>(written);
  }
}

void AtomicFileWriter::commit() {
  if (temporary_path_.empty()) return;  // discarded (the constructor)
  internal_assert(fd_ >= 0 && !committed_);
  if (::fsync(fd_) != 0) fail("E0132", "fsync of the temporary file failed", errno);
  if (::rename(temporary_path_.c_str(), path_.c_str()) != 0) {
    fail("E0133", "cannot rename the temporary file into place", errno);
  }
  committed_ = true;
  // The rename is durable once the folder is synced. Some file systems refuse fsync on a
  // folder (EINVAL); the file is in place all the same, so that is not an error.
  int folder = ::open(folder_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder >= 0) {
    int synced = ::fsync(folder);
    int error = errno;
    ::close(folder);
    if (synced != 0 && error != EINVAL && error != EROFS) {
      fail("E0132", "fsync of the folder failed", error);
    }
  }
  ::close(fd_);  // releases the lock
  fd_ = -1;
}

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The file `path` names (following links), if it exists.
std::optional<std::pair<dev_t, ino_t>> file_identity(const std::string& path) {
  struct stat status {};
  if (path.empty() || ::stat(path.c_str(), &status) != 0) return std::nullopt;
  return std::make_pair(status.st_dev, status.st_ino);
}

// Where an output that may not exist yet goes: its folder's identity and its own name.
std::optional<std::pair<std::pair<dev_t, ino_t>, std::string>> place_of(const std::string& path) {
  std::filesystem::path place(path);
  std::string folder = place.parent_path().empty() ? "." : place.parent_path().string();
  auto identity = file_identity(folder);
  if (!identity) return std::nullopt;
  return std::make_pair(*identity, place.filename().string());
}

[[noreturn]] void report_alias(const CommandFile& output, const CommandFile& other, bool other_is_output) {
  user_error("E0140").hint("write the output to a new path; presk never replaces a file the same command reads")
      << output.option << " `" << output.path << "` is the same file as " << other.option << " `" << other.path
      << "`" << (other_is_output ? " (another output of this command)" : ", which this command reads");
}

}  // namespace

void require_file_target(const std::string& path, const std::string& option) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0 || S_ISREG(status.st_mode)) return;
  if (S_ISDIR(status.st_mode)) {
    user_error("E0133").hint("choose a file path, not a folder")
        << "cannot write " << option << " `" << path << "`: it is a folder";
  }
  user_error("E0141").hint("choose the path of a regular file (or of none yet); presk writes by renaming a new file "
                           "into place, which would replace it")
      << "cannot write " << option << " `" << path << "`: it is " << kind_of(status.st_mode) << ", not a regular file";
}

void check_output_files(const std::vector<CommandFile>& outputs, const std::vector<CommandFile>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const CommandFile& output = outputs[i];
    if (output.path.empty()) continue;
    require_file_target(output.path, output.option);
    auto identity = file_identity(output.path);
    auto temporary = file_identity(atomic_temporary_path(output.path));
    for (const CommandFile& input : inputs) {
      auto theirs = file_identity(input.path);
      if (theirs && ((identity && *theirs == *identity) || (temporary && *theirs == *temporary))) {
        report_alias(output, input, false);
      }
    }
    auto place = place_of(output.path);
    for (size_t j = 0; j < i; ++j) {
      if (outputs[j].path.empty()) continue;
      auto other = place_of(outputs[j].path);
      bool same = (identity && identity == file_identity(outputs[j].path)) || (place && other && *place == *other);
      if (same) report_alias(output, outputs[j], true);
    }
  }
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  AtomicFileWriter writer(path);
  writer.write(bytes);
  writer.commit();
}

}  // namespace presk
