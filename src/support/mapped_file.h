// A whole file memory-mapped read-only, for readers of large inputs that copy out a part at a
// time (the ONNX importer's external data), and the release of pages already read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace presk {

class MappedFile {
 public:
  // Maps the file at `path`; nullptr with `why` set when it cannot be opened or mapped (an empty
  // file maps to no bytes).
  static std::shared_ptr<const MappedFile> open(const std::string& path, std::string& why);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, static_cast<size_t>(size_)}; }
  uint64_t size() const { return size_; }

 private:
  MappedFile() = default;
  const std::byte* data_ = nullptr;
  uint64_t size_ = 0;
};

// Hands back the resident pages that lie wholly inside `bytes`, a part of a MappedFile's bytes
// (they are read from the file again when touched): the resident memory of a reader that goes
// through a large mapping once stays the part it reads at a time.
void release_mapped_pages(std::span<const std::byte> bytes);

}  // namespace presk
