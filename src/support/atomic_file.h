// Atomic file output: every file presk writes goes to a temporary beside it, is flushed and
// fsynced, and is renamed into place, so a crash leaves the old file or the new one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace presk {

// Writes one file atomically. Bytes go to the temporary `PATH.presk-tmp` in the same
// folder; commit() fsyncs it, renames it onto PATH and fsyncs the folder. Destroying the
// writer before commit() removes the temporary and leaves PATH untouched.
//
// The temporary has a fixed name, locked (flock) while a writer owns it. A writer killed
// mid-write can leave that one `PATH.presk-tmp` behind, never more: the next write of PATH
// takes it over (truncates it) and renames it away. Two processes writing the same PATH
// take turns on the lock; the last rename wins, and neither sees the other's bytes.
// An existing PATH keeps its permission bits; a new one gets 0666 minus the umask.
//
// Errors are user errors: E0130 (cannot create the temporary: missing folder, no
// permission), E0131 (write failed: disk full, quota), E0132 (fsync failed),
// E0133 (rename failed, e.g. PATH is a folder), E0141 (PATH is a symlink, FIFO, device or socket).
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, size_t size);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  // Makes the file durable and puts it in place. At most once.
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temporary_path() const { return temporary_path_; }

 private:
  void fail(const char* code, const std::string& what, int error_number);

  std::string path_;
  std::string temporary_path_;
  int fd_ = -1;
  bool committed_ = false;
};

// The temporary name a write of `path` uses: `path` + ".presk-tmp".
std::string atomic_temporary_path(const std::string& path);

// Writes `bytes` to `path` atomically (AtomicFileWriter in one call).
void write_file_atomically(const std::string& path, std::string_view bytes);

// A file a command reads or writes, with the option that named it (`--data`), for messages.
struct CommandFile {
  std::string option;
  std::string path;  // empty: not given (skipped)
};

// Refuses an output path that exists and is not a regular file: E0141 for a symbolic link, a
// FIFO, a device or a socket (the rename would replace it with a regular file), E0133 for a
// folder. AtomicFileWriter checks its own path with it; `option` names the path in messages.
void require_file_target(const std::string& path, const std::string& option = "the output");

// What a command checks before it starts work: every output passes require_file_target, and
// no output is one of `inputs` or another output (E0140). "The same" means the same file
// (device and inode), so another spelling, `./x`, or a hard link counts; an input that is
// the output's temporary (`PATH.presk-tmp`) counts too.
void check_output_files(const std::vector<CommandFile>& outputs, const std::vector<CommandFile>& inputs);

}  // namespace presk
