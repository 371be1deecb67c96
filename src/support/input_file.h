// Reading a whole input file (a program, a realization, an envelope, a text corpus) with a size
// cap checked while it is read: a file larger than its kind can be (or endless, as /dev/zero
// or a FIFO that never closes) is E0016 after at most the cap's bytes, never a read without bound.
#pragma once

#include <cstdint>
#include <string>

namespace presk {

// Caps per kind of input, in bytes: far beyond what presk writes or a user writes by hand.
inline constexpr uint64_t kProgramFileLimit = uint64_t{16} << 20;  // a .psk or .pir source
inline constexpr uint64_t kJsonFileLimit = uint64_t{256} << 20;    // a realization or an envelope
inline constexpr uint64_t kTextFileLimit = uint64_t{1} << 30;      // a corpus for `data prepare`

// What a kind of input is called and the caller's code for a file that cannot be read.
struct InputFileKind {
  std::string what;             // "source file": "cannot read source file `PATH`"
  std::string unreadable_code;  // missing, no permission, a folder, an I/O error
  std::string unreadable_hint;
  uint64_t limit = kJsonFileLimit;
};

// The bytes of `path`: `kind.unreadable_code` when it cannot be opened or read (or is a
// folder), E0016 when it holds more than `kind.limit` bytes (checked before and while reading).
std::string read_input_file(const std::string& path, const InputFileKind& kind);

// `path` open for reading, checked as read_input_file checks it before it reads (the caller
// reads it itself, e.g. a parser that streams it, and keeps to kind.limit): closed with it.
class InputFile {
 public:
  InputFile(const std::string& path, const InputFileKind& kind);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  int fd() const { return fd_; }
  uint64_t size() const { return size_; }  // a regular file's size; else 0

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// "16 MiB", "1.5 GiB": a byte count for messages.
std::string byte_count_text(uint64_t bytes);

}  // namespace presk
