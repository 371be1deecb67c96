// The capped reader of input_file.h.
#include "support/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

#include "support/diagnostics.h"

namespace presk {
namespace {

[[noreturn]] void refuse_unreadable(const std::string& path, const InputFileKind& kind, const std::string& why) {
  user_error(kind.unreadable_code).hint(kind.unreadable_hint) << "cannot read " << kind.what << " `" << path << "`: " << why;
}

[[noreturn]] void refuse_too_large(const std::string& path, const InputFileKind& kind, const std::string& size) {
  user_error("E0016").hint("pass the file meant; presk reads at most " + byte_count_text(kind.limit) + " of a " + kind.what)
      << kind.what << " `" << path << "` is " << size << ", beyond the " << byte_count_text(kind.limit) << " presk reads";
}

// Closes the descriptor on every way out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

InputFile::InputFile(const std::string& path, const InputFileKind& kind)
    : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
  if (fd_ < 0) refuse_unreadable(path, kind, std::strerror(errno));
  Descriptor closer{fd_};  // until the checks pass
  struct stat info {};
  if (::fstat(fd_, &info) != 0) refuse_unreadable(path, kind, std::strerror(errno));
  if (S_ISDIR(info.st_mode)) refuse_unreadable(path, kind, "it is a folder");
  if (S_ISREG(info.st_mode) && uint64_t(info.st_size) > kind.limit) {
    refuse_too_large(path, kind, byte_count_text(uint64_t(info.st_size)));
  }
  size_ = S_ISREG(info.st_mode) ? uint64_t(info.st_size) : 0;
  closer.fd = -1;
}

InputFile::~InputFile() { ::close(fd_); }

std::string read_input_file(const std::string& path, const InputFileKind& kind) {
  const InputFile file(path, kind);
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(file.fd(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) refuse_unreadable(path, kind, std::strerror(errno));
    if (got == 0) break;
    if (bytes.size() + size_t(got) > kind.limit) refuse_too_large(path, kind, "more than " + byte_count_text(kind.limit));
    bytes.append(buffer, size_t(got));
  }
  return bytes;
}

std::string byte_count_text(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = double(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return std::to_string(bytes) + " bytes";
  return fmt::format("{:.3g} {}", value, units[unit]);
}

}  // namespace presk
