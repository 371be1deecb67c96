// Safetensors files: a validating reader (memory-mapped for large files) and a writer that
// goes through the atomic writer. Format: an 8-byte little-endian header length N, N bytes
// of JSON header, then the raw little-endian tensor data; docs/errors.md lists every
// way a file is refused.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/tensor.h"

namespace presk {

// Files at least this large are memory-mapped (read-only) instead of read into memory.
inline constexpr uint64_t kSafetensorsMapThreshold = 1 << 20;  // bytes
// Largest header accepted (as the reference implementation): guards against hostile lengths.
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100 << 20;  // bytes

// Metadata notes presk adds (keys of `__metadata__`, values JSON text):
//   "presk:i4:NAME"   = "[3, 5]"          NAME is stored as dtype U8 holding the packed
//                                         i4 nibbles (tensor.h) and has this logical shape;
//                                         other readers see the raw bytes.
//   "presk:axes:NAME" = "[\"row\", \"col\"]"  the axis names of NAME, one per axis.
// On write, metadata keys with these prefixes are replaced by the ones the tensors imply.
inline constexpr std::string_view kI4NotePrefix = "presk:i4:";
inline constexpr std::string_view kAxesNotePrefix = "presk:axes:";

// One tensor of a file, as validated.
struct SafetensorsEntry {
  std::string name;
  ElementType type = ElementType::f32;  // i4 when an i4 note says so
  std::string file_dtype;               // as in the header: "F32", "U8", ...
  std::vector<int64_t> shape;           // logical shape (for i4: the note's shape)
  std::vector<std::string> axis_names;  // empty or one per axis
  uint64_t element_count = 0;
  uint64_t begin = 0;  // byte offsets in the data region (after the header), [begin, end)
  uint64_t end = 0;
};

class SafetensorsFile {
 public:
  // Opens and validates a file: E0100 (cannot open), E0101 (cannot read), then every
  // malformation code of parse_safetensors. A mapped file that shrinks while open is E0101
  // at the read that reaches past its new end (read, value, copy_bytes; support/guarded_read.h).
  static SafetensorsFile open(const std::string& path);

  const std::string& name() const { return name_; }
  uint64_t file_size() const;
  bool is_memory_mapped() const;
  // Tensors sorted by name.
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }
  const SafetensorsEntry* find(std::string_view tensor_name) const;
  // As find, or E0120 naming the tensors the file has.
  const SafetensorsEntry& entry(std::string_view tensor_name) const;
  // `__metadata__`, presk's notes included (empty when absent).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // An owning copy of a tensor's values. E0121 for a BOOL byte other than 0 or 1.
  Tensor read(const SafetensorsEntry& entry) const;
  Tensor read(std::string_view tensor_name) const { return read(entry(tensor_name)); }
  // One element without copying the tensor (index < element_count), as load_element.
  double value(const SafetensorsEntry& entry, uint64_t index) const;
  // One element of an integer or BOOL tensor, exactly (a double holds I64 only to 2^53).
  int64_t integer(const SafetensorsEntry& entry, uint64_t index) const;
  // Copies `size` stored bytes of a tensor from byte `offset` of its data to `destination`
  // (offset + size within the tensor's bytes); E0101 when the mapped file shrank meanwhile.
  void copy_bytes(const SafetensorsEntry& entry, uint64_t offset, void* destination, size_t size) const;
  // The stored bytes of a tensor (may be unaligned). Unguarded: a mapped file that shrinks
  // faults on access; readers use read, value or copy_bytes.
  std::span<const std::byte> raw_bytes(const SafetensorsEntry& entry) const;

  struct Bytes;  // the file's bytes: owned or mapped

 private:
  friend SafetensorsFile parse_safetensors_source(std::shared_ptr<const Bytes> bytes,
                                                  std::string name);
  uint64_t copy_element(const SafetensorsEntry& entry, uint64_t index, std::byte* element) const;
  // memcpy from the file's bytes, guarded when they are mapped (E0101 on a fault).
  void copy_out(void* destination, const std::byte* source, size_t size) const;
  std::string name_;
  std::shared_ptr<const Bytes> bytes_;
  uint64_t data_begin_ = 0;  // file offset of the data region
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

// Validates a whole file held in memory (copied); `name_for_errors` stands for the file in
// messages. Throws UserError with codes E0102-E0119, E0122, E0123, E0126.
SafetensorsFile parse_safetensors(std::span<const uint8_t> bytes, std::string name_for_errors);

// A tensor to write and its name (the tensor is not copied).
struct NamedTensor {
  std::string name;
  const Tensor& tensor;
};

// The bytes of a safetensors file holding `tensors` in the given order, header padded with
// spaces to a multiple of 8 bytes, no padding between tensors. Names must be distinct,
// non-empty and not `__metadata__` (E0134). i4 tensors become U8 plus an i4 note; axis
// names become axes notes.
std::string serialize_safetensors(const std::vector<NamedTensor>& tensors,
                                  const std::map<std::string, std::string>& metadata = {});
// Writes the same bytes to `path` through AtomicFileWriter (codes E0130-E0133).
void write_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// A tensor's place in a file to be written, without its values (a file streamed by its
// writer: the header first, then each tensor's bytes in order).
struct SafetensorsLayout {
  std::string name;
  ElementType type = ElementType::f32;
  std::vector<int64_t> shape;
  std::vector<std::string> axis_names;  // empty or one per axis
  uint64_t byte_size = 0;               // storage_bytes of the type and element count
};
// The first bytes of a file holding `tensors` in the given order: the length and the padded
// header, as serialize_safetensors writes them (E0134 as there). The data follows unpadded.
std::string safetensors_prefix(const std::vector<SafetensorsLayout>& tensors,
                               const std::map<std::string, std::string>& metadata = {});

// The safetensors dtype a type is stored as ("F32"; i4 -> "U8").
const char* safetensors_dtype(ElementType type);

}  // namespace presk
