// The safetensors reader: bounds the header, parses it with nlohmann::json (duplicate keys
// and nesting checked during the parse), validates every entry, its offsets and the notes,
// and only then hands out bytes; the writer lays a file out and streams it atomically.
#include "support/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "support/guarded_read.h"
#include "support/json_reader.h"

namespace presk {

using Json = nlohmann::json;

// The file's bytes: either owned or a read-only mapping, released with the last user.
struct SafetensorsFile::Bytes {
  std::vector<std::byte> owned;
  void* mapping = nullptr;
  size_t mapped_size = 0;
  const std::byte* data = nullptr;
  size_t size = 0;

  Bytes() = default;
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  ~Bytes() {
    if (mapping != nullptr) ::munmap(mapping, mapped_size);
  }
};

namespace {

// How a safetensors dtype maps onto presk: supported, or known but not supported.
struct DtypeRow {
  const char* dtype;
  std::optional<ElementType> type;
};

const DtypeRow kDtypes[] = {
    {"F64", ElementType::f64}, {"F32", ElementType::f32},      {"BF16", ElementType::bf16},
    {"I8", ElementType::i8},   {"I32", ElementType::i32},      {"I64", ElementType::i64},
    {"U8", ElementType::u8},   {"BOOL", ElementType::boolean}, {"F16", std::nullopt},
    {"I16", std::nullopt},     {"U16", std::nullopt},          {"U32", std::nullopt},
    {"U64", std::nullopt},     {"F8_E4M3", std::nullopt},      {"F8_E5M2", std::nullopt},
    {"C64", std::nullopt},     {"F8_E8M0", std::nullopt},      {"F4", std::nullopt},
    {"F6_E2M3", std::nullopt}, {"F6_E3M2", std::nullopt},
};

// A name from a file, printable: control bytes escaped, long names shortened.
std::string printable(std::string_view name) {
  std::string text = "`";
  for (size_t i = 0; i < name.size() && i < 80; ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      text += "\\x";
      text += kHex[c >> 4];
      text += kHex[c & 0xf];
    } else {
      text += static_cast<char>(c);
    }
  }
  if (name.size() > 80) text += "...";
  return text + "`";
}

// Checks the header while nlohmann parses it: no object repeats a key (the last one would
// silently win) and nothing nests deeper than a valid header can (which also keeps hostile
// inputs from building deep trees).
class HeaderChecker {
 public:
  explicit HeaderChecker(const std::string& file) : file_(file) {}
  bool operator()(int depth, Json::parse_event_t event, Json& parsed) {
    constexpr int kMaxDepth = 4;
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (depth >= kMaxDepth) {
          user_error("E0104").hint("a safetensors header nests at most three levels")
              << file_ << ": the header nests too deeply";
        }
        if (event == Json::parse_event_t::object_start) keys_.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        keys_.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!keys_.back().insert(parsed.get<std::string>()).second) report_duplicate(parsed);
        break;
      default:
        break;
    }
    return true;
  }

 private:
  void report_duplicate(const Json& key) const {
    const char* what = keys_.size() == 1 ? "tensor" : "key";
    user_error("E0118").hint("each tensor and each key may appear once in the header")
        << file_ << ": " << what << " " << printable(key.get<std::string>())
        << " appears twice in the header";
  }
  const std::string& file_;
  std::vector<std::set<std::string>> keys_;
};

Json parse_header(std::string_view text, const std::string& file) {
  HeaderChecker checker(file);
  Json header;
  try {
    header = Json::parse(text.begin(), text.end(), std::ref(checker));
  } catch (const Json::exception& error) {
    user_error("E0104").hint(
        "the header must be UTF-8 JSON; the file may be truncated or not "
        "a safetensors file")
        << file << ": the header is not valid JSON (" << json_error_detail(error) << ")";
  }
  return header;
}

uint64_t read_header_length(const std::byte* data, size_t size, const std::string& file) {
  if (size < 8) {
    user_error("E0102").hint("a safetensors file starts with an 8-byte header length")
        << file << ": the file has " << size << " bytes, too short for a safetensors header";
  }
  uint64_t length = 0;
  std::memcpy(&length, data, 8);  // little-endian (tensor.cpp asserts the host is too)
  if (length > kSafetensorsMaxHeaderBytes) {
    user_error("E0126").hint("the file is probably not a safetensors file")
        << file << ": the header length " << length << " exceeds the limit of "
        << kSafetensorsMaxHeaderBytes << " bytes";
  }
  if (length > size - 8) {
    user_error("E0103").hint("the file is probably truncated")
        << file << ": the header claims " << length << " bytes but only " << size - 8
        << " follow the length";
  }
  return length;
}

// The declared dtype, as a presk element type.
ElementType parse_dtype(const Json& value, const std::string& where) {
  if (!value.is_string()) {
    user_error("E0107").hint("each tensor needs \"dtype\": a string such as \"F32\"")
        << where << ": \"dtype\" is missing or not a string";
  }
  const std::string& dtype = value.get_ref<const std::string&>();
  const DtypeRow* found = nullptr;
  for (const DtypeRow& row : kDtypes) {
    if (dtype == row.dtype) found = &row;
  }
  if (found == nullptr) {
    user_error("E0110").hint("known dtypes: F64, F32, BF16, I8, I32, I64, U8, BOOL")
        << where << ": unknown dtype " << printable(dtype);
  }
  if (!found->type) {
    user_error("E0111").hint(
        "presk reads F64, F32, BF16, I8, I32, I64, U8 and BOOL; convert "
        "the tensor to one of them")
        << where << ": dtype " << printable(dtype) << " is not supported by presk";
  }
  return *found->type;
}

// Dimensions, each in [0, 2^63), with their product.
std::vector<int64_t> parse_shape(const Json& value, const std::string& where,
                                 uint64_t& element_count) {
  if (!value.is_array()) {
    user_error("E0108").hint("\"shape\" is a list of non-negative integers, [] for a scalar")
        << where << ": \"shape\" is missing or not a list";
  }
  std::vector<int64_t> shape;
  element_count = 1;
  for (const Json& dim : value) {
    if (dim.is_number_integer() && !dim.is_number_unsigned() && dim.get<int64_t>() < 0) {
      user_error("E0112").hint("dimensions are non-negative")
          << where << ": dimension " << shape.size() << " is negative (" << dim.get<int64_t>()
          << ")";
    }
    if (!dim.is_number_unsigned()) {
      user_error("E0108").hint("\"shape\" is a list of non-negative integers, [] for a scalar")
          << where << ": dimension " << shape.size() << " is not an integer";
    }
    uint64_t size = dim.get<uint64_t>();
    bool too_large = size > uint64_t(std::numeric_limits<int64_t>::max()) ||
                     (size != 0 && element_count > std::numeric_limits<uint64_t>::max() / size);
    if (too_large) {
      user_error("E0113").hint("the shape is corrupt")
          << where << ": the shape's element count overflows 64 bits";
    }
    element_count *= size;
    shape.push_back(static_cast<int64_t>(size));
  }
  return shape;
}

void parse_offsets(const Json& value, const std::string& where, SafetensorsEntry& entry) {
  bool valid = value.is_array() && value.size() == 2 && value[0].is_number_unsigned() &&
               value[1].is_number_unsigned();
  if (!valid) {
    user_error("E0109").hint("\"data_offsets\" is [begin, end], two non-negative integers")
        << where << ": \"data_offsets\" is missing or not two non-negative integers";
  }
  entry.begin = value[0].get<uint64_t>();
  entry.end = value[1].get<uint64_t>();
}

const char* dtype_name_of(ElementType type) {
  for (const DtypeRow& row : kDtypes) {
    if (row.type == type) return row.dtype;
  }
  return "U8";  // i4: packed bytes
}

SafetensorsEntry parse_entry(const std::string& name, const Json& value, const std::string& file,
                             uint64_t data_size) {
  std::string where = file + ": tensor " + printable(name);
  if (!value.is_object()) {
    user_error("E0106").hint("each tensor is {\"dtype\", \"shape\", \"data_offsets\"}")
        << where << ": the entry is not a JSON object";
  }
  SafetensorsEntry entry;
  entry.name = name;
  entry.type = parse_dtype(value.contains("dtype") ? value["dtype"] : Json(), where);
  entry.file_dtype = dtype_name_of(entry.type);
  entry.shape =
      parse_shape(value.contains("shape") ? value["shape"] : Json(), where, entry.element_count);
  parse_offsets(value.contains("data_offsets") ? value["data_offsets"] : Json(), where, entry);
  std::optional<uint64_t> bytes = checked_storage_bytes(entry.type, entry.element_count);
  if (!bytes) {
    user_error("E0113").hint("the shape is corrupt")
        << where << ": the shape's byte count overflows 64 bits";
  }
  if (entry.begin > entry.end) {
    user_error("E0114").hint("data_offsets is [begin, end] with begin <= end")
        << where << ": data begins at " << entry.begin << " after it ends at " << entry.end;
  }
  if (entry.end > data_size) {
    user_error("E0115").hint("the file is probably truncated")
        << where << ": data ends at byte " << entry.end << " of a data region of " << data_size
        << " bytes";
  }
  if (entry.end - entry.begin != *bytes) {
    user_error("E0116").hint("the header and the data disagree; re-export the file")
        << where << ": " << format_shape(entry.shape) << " of " << entry.file_dtype << " needs "
        << *bytes << " bytes but data_offsets cover " << entry.end - entry.begin;
  }
  return entry;
}

std::map<std::string, std::string> parse_metadata(const Json& value, const std::string& file) {
  std::map<std::string, std::string> metadata;
  bool valid = value.is_object();
  for (auto it = value.begin(); valid && it != value.end(); ++it) {
    valid = it->is_string();
    if (valid) metadata[it.key()] = it->get<std::string>();
  }
  if (!valid) {
    user_error("E0119").hint("__metadata__ maps strings to strings")
        << file << ": __metadata__ is not an object of strings";
  }
  return metadata;
}

// No two non-empty data ranges share a byte. Gaps and trailing bytes are allowed.
void check_no_overlap(const std::vector<SafetensorsEntry>& entries, const std::string& file) {
  std::vector<const SafetensorsEntry*> by_begin;
  for (const SafetensorsEntry& entry : entries) {
    if (entry.begin != entry.end) by_begin.push_back(&entry);
  }
  auto earlier = [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  };
  std::sort(by_begin.begin(), by_begin.end(), earlier);
  for (size_t i = 1; i < by_begin.size(); ++i) {
    if (by_begin[i]->begin < by_begin[i - 1]->end) {
      user_error("E0117").hint("each tensor's data must have its own bytes")
          << file << ": tensors " << printable(by_begin[i - 1]->name) << " and "
          << printable(by_begin[i]->name) << " overlap in the data region";
    }
  }
}

// The JSON of a note, or nullopt when it is not strict JSON (json_reader.h: also bounded in depth).
std::optional<Json> parse_note(const std::string& text) {
  try {
    return parse_user_json(text, {"a note", "E0104", ""});
  } catch (const UserError&) {
    return std::nullopt;
  }
}

SafetensorsEntry* find_entry(std::vector<SafetensorsEntry>& entries, std::string_view name) {
  auto by_name = [](const SafetensorsEntry& e, std::string_view n) { return e.name < n; };
  auto it = std::lower_bound(entries.begin(), entries.end(), name, by_name);
  return (it != entries.end() && it->name == name) ? &*it : nullptr;
}

// "presk:i4:NAME": NAME is a 1-D U8 holding ceil(count / 2) bytes of the noted shape.
void apply_i4_note(std::vector<SafetensorsEntry>& entries, std::string_view name,
                   const std::string& text, const std::string& file) {
  SafetensorsEntry* entry = find_entry(entries, name);
  std::optional<Json> shape_json = parse_note(text);
  bool valid = entry != nullptr && entry->type == ElementType::u8 && entry->shape.size() == 1 &&
               shape_json && shape_json->is_array();
  uint64_t count = 1;
  std::vector<int64_t> shape;
  for (size_t i = 0; valid && i < shape_json->size(); ++i) {
    const Json& dim = (*shape_json)[i];
    valid = dim.is_number_unsigned() && dim.get<uint64_t>() <= (uint64_t(1) << 62) &&
            (dim.get<uint64_t>() == 0 || count <= (uint64_t(1) << 62) / dim.get<uint64_t>());
    if (valid) count *= dim.get<uint64_t>();
    if (valid) shape.push_back(dim.get<int64_t>());
  }
  if (!valid || count / 2 + count % 2 != entry->element_count) {
    user_error("E0122").hint("the note is [dims...] of a 1-D U8 tensor with ceil(count/2) bytes")
        << file << ": the i4 note of tensor " << printable(name) << " does not match the tensor";
  }
  entry->type = ElementType::i4;
  entry->shape = std::move(shape);
  entry->element_count = count;
}

// "presk:axes:NAME": one string per axis of NAME.
void apply_axes_note(std::vector<SafetensorsEntry>& entries, std::string_view name,
                     const std::string& text, const std::string& file) {
  SafetensorsEntry* entry = find_entry(entries, name);
  std::optional<Json> names = parse_note(text);
  bool valid =
      entry != nullptr && names && names->is_array() && names->size() == entry->shape.size();
  std::vector<std::string> axis_names;
  for (size_t i = 0; valid && i < names->size(); ++i) {
    valid = (*names)[i].is_string();
    if (valid) axis_names.push_back((*names)[i].get<std::string>());
  }
  if (!valid) {
    user_error("E0123").hint("the note is a list of one name per axis of an existing tensor")
        << file << ": the axes note of tensor " << printable(name) << " does not match the tensor";
  }
  entry->axis_names = std::move(axis_names);
}

void apply_notes(std::vector<SafetensorsEntry>& entries,
                 const std::map<std::string, std::string>& metadata, const std::string& file) {
  // i4 notes first: they change the shape that the axes notes are checked against.
  for (const auto& [key, text] : metadata) {
    if (key.starts_with(kI4NotePrefix)) {
      apply_i4_note(entries, std::string_view(key).substr(kI4NotePrefix.size()), text, file);
    }
  }
  for (const auto& [key, text] : metadata) {
    if (key.starts_with(kAxesNotePrefix)) {
      apply_axes_note(entries, std::string_view(key).substr(kAxesNotePrefix.size()), text, file);
    }
  }
}

void check_bool_byte(const SafetensorsEntry& entry, std::byte byte, uint64_t index,
                     const std::string& file) {
  if (std::to_integer<unsigned>(byte) > 1) {
    user_error("E0121").hint("BOOL elements are the bytes 0 and 1")
        << file << ": tensor " << printable(entry.name) << " element " << index << " is "
        << std::to_integer<unsigned>(byte) << ", not a BOOL";
  }
}

}  // namespace

SafetensorsFile parse_safetensors_source(std::shared_ptr<const SafetensorsFile::Bytes> bytes,
                                         std::string name) {
  SafetensorsFile file;
  file.name_ = std::move(name);
  file.bytes_ = std::move(bytes);
  const std::byte* data = file.bytes_->data;
  size_t size = file.bytes_->size;
  std::byte length_bytes[8] = {};
  if (size >= 8) file.copy_out(length_bytes, data, 8);
  uint64_t header_length = read_header_length(length_bytes, size, file.name_);
  file.data_begin_ = 8 + header_length;
  std::string header_text(header_length, '\0');
  file.copy_out(header_text.data(), data + 8, header_length);
  Json header = parse_header(header_text, file.name_);
  if (!header.is_object()) {
    user_error("E0105").hint("the header maps tensor names to their dtype, shape and offsets")
        << file.name_ << ": the header is not a JSON object";
  }
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      file.metadata_ = parse_metadata(value, file.name_);
    } else {
      file.entries_.push_back(parse_entry(key, value, file.name_, size - file.data_begin_));
    }
  }
  check_no_overlap(file.entries_, file.name_);
  std::sort(file.entries_.begin(), file.entries_.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  apply_notes(file.entries_, file.metadata_, file.name_);
  return file;
}

SafetensorsFile parse_safetensors(std::span<const uint8_t> bytes, std::string name_for_errors) {
  auto owned = std::make_shared<SafetensorsFile::Bytes>();
  owned->owned.resize(bytes.size());
  if (!bytes.empty()) std::memcpy(owned->owned.data(), bytes.data(), bytes.size());
  owned->data = owned->owned.data();
  owned->size = bytes.size();
  return parse_safetensors_source(std::move(owned), std::move(name_for_errors));
}

namespace {

// The whole file, mapped when large, read otherwise.
std::shared_ptr<SafetensorsFile::Bytes> load_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    user_error("E0100").hint("check the path and its permissions")
        << "cannot open `" << path << "`: " << std::strerror(errno);
  }
  auto bytes = std::make_shared<SafetensorsFile::Bytes>();
  struct stat info {};
  int error = ::fstat(fd, &info) == 0 ? 0 : errno;
  if (error == 0 && !S_ISREG(info.st_mode)) error = EISDIR;
  if (error == 0 && uint64_t(info.st_size) >= kSafetensorsMapThreshold) {
    void* mapping = ::mmap(nullptr, size_t(info.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping == MAP_FAILED)
      error = errno;
    else {
      bytes->mapping = mapping;
      bytes->mapped_size = size_t(info.st_size);
      bytes->data = static_cast<const std::byte*>(mapping);
      bytes->size = size_t(info.st_size);
    }
  } else if (error == 0) {
    bytes->owned.resize(size_t(info.st_size));
    size_t done = 0;
    while (error == 0 && done < bytes->owned.size()) {
      ssize_t got = ::read(fd, bytes->owned.data() + done, bytes->owned.size() - done);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0)
        error = got < 0 ? errno : EIO;  // the file shrank while we read it
      else
        done += size_t(got);
    }
    bytes->data = bytes->owned.data();
    bytes->size = bytes->owned.size();
  }
  ::close(fd);
  if (error != 0) {
    user_error(error == EISDIR ? "E0100" : "E0101").hint("check that it is a readable file")
        << "cannot read `" << path << "`: " << std::strerror(error);
  }
  return bytes;
}

}  // namespace

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  return parse_safetensors_source(load_file(path), path);
}

uint64_t SafetensorsFile::file_size() const {
  return bytes_->size;
}

bool SafetensorsFile::is_memory_mapped() const {
  return bytes_->mapping != nullptr;
}

const SafetensorsEntry* SafetensorsFile::find(std::string_view tensor_name) const {
  auto it =
      std::lower_bound(entries_.begin(), entries_.end(), tensor_name,
                       [](const SafetensorsEntry& e, std::string_view n) { return e.name < n; });
  return (it != entries_.end() && it->name == tensor_name) ? &*it : nullptr;
}

const SafetensorsEntry& SafetensorsFile::entry(std::string_view tensor_name) const {
  const SafetensorsEntry* found = find(tensor_name);
  if (found != nullptr) return *found;
  std::string names;
  for (size_t i = 0; i < entries_.size() && i < 20; ++i) {
    names += i == 0 ? "" : ", ";
    names += printable(entries_[i].name);
  }
  if (entries_.size() > 20) names += ", ...";
  user_error("E0120").hint(entries_.empty() ? std::string("the file has no tensors")
                                            : "the file has: " + names)
      << name_ << ": no tensor named " << printable(tensor_name);
  return *found;  // not reached: user_error throws
}

std::span<const std::byte> SafetensorsFile::raw_bytes(const SafetensorsEntry& entry) const {
  internal_assert(entry.begin <= entry.end && data_begin_ + entry.end <= bytes_->size);
  return {bytes_->data + data_begin_ + entry.begin, size_t(entry.end - entry.begin)};
}

void SafetensorsFile::copy_out(void* destination, const std::byte* source, size_t size) const {
  if (bytes_->mapping == nullptr) {
    if (size > 0) std::memcpy(destination, source, size);
    return;
  }
  if (!guarded_copy(destination, source, size)) {
    user_error("E0101").hint("the file changed while presk read it; let its writer finish, or copy it and retry")
        << "cannot read `" << name_ << "`: it shrank while it was read (a page of bytes "
        << source - bytes_->data << " to " << source - bytes_->data + ptrdiff_t(size) << " is gone)";
  }
}

void SafetensorsFile::copy_bytes(const SafetensorsEntry& entry, uint64_t offset, void* destination,
                                 size_t size) const {
  internal_assert(offset <= entry.end - entry.begin && size <= entry.end - entry.begin - offset);
  copy_out(destination, raw_bytes(entry).data() + offset, size);
}

// Element `index`'s storage bytes copied to `element` (8 bytes); returns its index there (i4:
// the nibble, else 0). E0121 for a BOOL byte other than 0 or 1.
uint64_t SafetensorsFile::copy_element(const SafetensorsEntry& entry, uint64_t index, std::byte* element) const {
  internal_assert(index < entry.element_count);
  const uint32_t bits = facts(entry.type).bits;
  const uint64_t byte_index = index * bits / 8;
  copy_bytes(entry, byte_index, element, bits < 8 ? 1 : bits / 8);
  if (entry.type == ElementType::boolean) check_bool_byte(entry, element[0], index, name_);
  return index - byte_index * 8 / bits;
}

double SafetensorsFile::value(const SafetensorsEntry& entry, uint64_t index) const {
  std::byte element[8] = {};
  const uint64_t index_in_bytes = copy_element(entry, index, element);
  return load_element(entry.type, element, index_in_bytes);
}

int64_t SafetensorsFile::integer(const SafetensorsEntry& entry, uint64_t index) const {
  internal_assert(!facts(entry.type).is_float);
  std::byte element[8] = {};
  const uint64_t index_in_bytes = copy_element(entry, index, element);
  return load_integer(entry.type, element, index_in_bytes);
}

Tensor SafetensorsFile::read(const SafetensorsEntry& entry) const {
  std::span<const std::byte> raw = raw_bytes(entry);
  Tensor tensor(entry.type, entry.shape, entry.axis_names);
  internal_assert(tensor.byte_size() == raw.size());
  copy_out(tensor.data(), raw.data(), raw.size());
  if (entry.type == ElementType::boolean) {
    for (uint64_t i = 0; i < entry.element_count; ++i) {
      check_bool_byte(entry, tensor.data()[i], i, name_);
    }
  }
  return tensor;
}

const char* safetensors_dtype(ElementType type) {
  return dtype_name_of(type);
}

namespace {

// The header entry of one tensor at `offset`; adds its i4 and axes notes to `notes`.
nlohmann::ordered_json entry_json(const SafetensorsLayout& item, uint64_t offset, nlohmann::ordered_json& notes) {
  nlohmann::ordered_json shape = item.shape;
  if (item.type == ElementType::i4) {
    notes[std::string(kI4NotePrefix) + item.name] = shape.dump();
    shape = nlohmann::ordered_json::array({item.byte_size});
  }
  if (!item.axis_names.empty()) {
    notes[std::string(kAxesNotePrefix) + item.name] = nlohmann::ordered_json(item.axis_names).dump();
  }
  return {{"dtype", safetensors_dtype(item.type)},
          {"shape", shape},
          {"data_offsets", {offset, offset + item.byte_size}}};
}

// The padded header: __metadata__ (user entries, then presk's notes) and one entry per
// tensor with consecutive data offsets in the given order.
std::string build_header(const std::vector<SafetensorsLayout>& tensors,
                         const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json notes = nlohmann::ordered_json::object();
  for (const auto& [key, text] : metadata) {
    if (!key.starts_with(kI4NotePrefix) && !key.starts_with(kAxesNotePrefix)) notes[key] = text;
  }
  std::set<std::string> names;
  uint64_t offset = 0;
  nlohmann::ordered_json entries = nlohmann::ordered_json::object();
  for (const SafetensorsLayout& item : tensors) {
    if (item.name.empty() || item.name == "__metadata__" || !names.insert(item.name).second) {
      user_error("E0134").hint("tensor names are distinct, non-empty and not __metadata__")
          << "cannot write tensor " << printable(item.name)
          << ": the name is empty, reserved or used twice";
    }
    entries[item.name] = entry_json(item, offset, notes);
    offset += item.byte_size;
  }
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!notes.empty()) header["__metadata__"] = notes;
  header.update(entries);
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::ordered_json::exception&) {
    user_error("E0134").hint("tensor names and metadata are UTF-8 text")
        << "cannot write the safetensors header: a name or metadata entry is not valid UTF-8";
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // the data region starts 8-byte aligned
  return text;
}

std::vector<SafetensorsLayout> layouts_of(const std::vector<NamedTensor>& tensors) {
  std::vector<SafetensorsLayout> layouts;
  for (const NamedTensor& item : tensors) {
    layouts.push_back({item.name, item.tensor.type(), item.tensor.shape(), item.tensor.axis_names(), item.tensor.byte_size()});
  }
  return layouts;
}

std::string length_prefix(uint64_t length) {
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &length, 8);  // little-endian host
  return bytes;
}

}  // namespace

std::string safetensors_prefix(const std::vector<SafetensorsLayout>& tensors,
                               const std::map<std::string, std::string>& metadata) {
  std::string header = build_header(tensors, metadata);
  return length_prefix(header.size()) + header;
}

std::string serialize_safetensors(const std::vector<NamedTensor>& tensors,
                                  const std::map<std::string, std::string>& metadata) {
  std::string header = build_header(layouts_of(tensors), metadata);
  std::string bytes = length_prefix(header.size()) + header;
  for (const NamedTensor& item : tensors) {
    bytes.append(reinterpret_cast<const char*>(item.tensor.data()), item.tensor.byte_size());
  }
  return bytes;
}

void write_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::string header = build_header(layouts_of(tensors), metadata);
  AtomicFileWriter writer(path);
  writer.write(length_prefix(header.size()));
  writer.write(header);
  for (const NamedTensor& item : tensors) {
    writer.write(item.tensor.data(), item.tensor.byte_size());
  }
  writer.commit();
}

}  // namespace presk
