// The element-type table, packed element access (including i4 nibbles) and Tensor storage.
#include "support/tensor.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "support/diagnostics.h"
#include "support/number_format.h"

namespace presk {

static_assert(std::endian::native == std::endian::little,
              "presk stores tensors little-endian and reads them with memcpy");

const std::array<ElementTypeFacts, kElementTypeCount> kElementTypeFacts = {{
    // type, name, bits, is_float, is_signed, unit roundoff, lowest, highest
    {ElementType::f64, "f64", 64, true, true, 0x1p-53, -0x1.fffffffffffffp1023,
     0x1.fffffffffffffp1023},
    {ElementType::f32, "f32", 32, true, true, 0x1p-24, -0x1.fffffep127, 0x1.fffffep127},
    {ElementType::bf16, "bf16", 16, true, true, 0x1p-8, -0x1.fep127, 0x1.fep127},
    {ElementType::i8, "i8", 8, false, true, 0, -128, 127},
    {ElementType::i4, "i4", 4, false, true, 0, -8, 7},
    {ElementType::i32, "i32", 32, false, true, 0, -2147483648.0, 2147483647.0},
    {ElementType::i64, "i64", 64, false, true, 0, -0x1p63, 0x1p63 - 1024},
    {ElementType::u8, "u8", 8, false, false, 0, 0, 255},
    {ElementType::boolean, "bool", 8, false, false, 0, 0, 1},
}};

namespace {

// The table is indexed by the type: row i describes ElementType(i).
[[maybe_unused]] const bool kTableChecked = [] {
  for (size_t i = 0; i < kElementTypeCount; ++i) {
    internal_assert(static_cast<size_t>(kElementTypeFacts[i].type) == i);
  }
  return true;
}();

template <typename T>
T load_as(const std::byte* data, uint64_t index) {
  T value;
  std::memcpy(&value, data + index * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void store_as(std::byte* data, uint64_t index, T value) {
  std::memcpy(data + index * sizeof(T), &value, sizeof(T));
}

// i4 element `index`: the low nibble of byte index/2 for even indices, the high one for odd,
// sign-extended from 4 bits.
int64_t load_i4(const std::byte* data, uint64_t index) {
  unsigned byte = std::to_integer<unsigned>(data[index / 2]);
  unsigned nibble = (index % 2 == 0) ? (byte & 0xfu) : (byte >> 4);
  return static_cast<int64_t>(nibble) - ((nibble & 0x8u) ? 16 : 0);
}

void store_i4(std::byte* data, uint64_t index, int64_t value) {
  unsigned nibble = static_cast<unsigned>(value) & 0xfu;
  unsigned byte = std::to_integer<unsigned>(data[index / 2]);
  byte = (index % 2 == 0) ? ((byte & 0xf0u) | nibble) : ((byte & 0x0fu) | (nibble << 4));
  data[index / 2] = static_cast<std::byte>(byte);
}

}  // namespace

std::optional<ElementType> element_type_from_name(std::string_view name) {
  for (const ElementTypeFacts& row : kElementTypeFacts) {
    if (name == row.name) return row.type;
  }
  return std::nullopt;
}

std::optional<uint64_t> checked_storage_bytes(ElementType type, uint64_t count) {
  uint32_t bits = facts(type).bits;
  if (bits == 4) return count / 2 + count % 2;
  uint64_t bytes_per_element = bits / 8;
  if (count > std::numeric_limits<uint64_t>::max() / bytes_per_element) return std::nullopt;
  return count * bytes_per_element;
}

size_t storage_bytes(ElementType type, uint64_t count) {
  std::optional<uint64_t> bytes = checked_storage_bytes(type, count);
  internal_assert(bytes && *bytes <= std::numeric_limits<size_t>::max());
  return static_cast<size_t>(*bytes);
}

double load_element(ElementType type, const std::byte* data, uint64_t index) {
  switch (type) {
    case ElementType::f64:
      return load_as<double>(data, index);
    case ElementType::f32:
      return load_as<float>(data, index);
    case ElementType::bf16:
      return f32_from_bf16(load_as<uint16_t>(data, index));
    default:
      return static_cast<double>(load_integer(type, data, index));
  }
}

void store_element(ElementType type, std::byte* data, uint64_t index, double value) {
  double rounded = round_to(value, type);
  switch (type) {
    case ElementType::f64:
      return store_as<double>(data, index, rounded);
    case ElementType::f32:
      return store_as<float>(data, index, static_cast<float>(rounded));
    case ElementType::bf16:
      // `rounded` is a bf16 value, so the f32 conversion and the bf16 one are both exact.
      return store_as<uint16_t>(data, index, bf16_from_f32(static_cast<float>(rounded)));
    default:
      return store_integer(type, data, index, static_cast<int64_t>(rounded));
  }
}

int64_t load_integer(ElementType type, const std::byte* data, uint64_t index) {
  switch (type) {
    case ElementType::i8:
      return load_as<int8_t>(data, index);
    case ElementType::i4:
      return load_i4(data, index);
    case ElementType::i32:
      return load_as<int32_t>(data, index);
    case ElementType::i64:
      return load_as<int64_t>(data, index);
    case ElementType::u8:
      return load_as<uint8_t>(data, index);
    case ElementType::boolean:
      return load_as<uint8_t>(data, index) != 0 ? 1 : 0;
    default:
      internal_assert(false && "load_integer of a float type");
  }
  return 0;
}

void store_integer(ElementType type, std::byte* data, uint64_t index, int64_t value) {
  auto saturate = [&](int64_t low, int64_t high) { return std::clamp(value, low, high); };
  switch (type) {
    case ElementType::i8:
      return store_as<int8_t>(data, index, int8_t(saturate(-128, 127)));
    case ElementType::i4:
      return store_i4(data, index, saturate(-8, 7));
    case ElementType::i32:
      return store_as<int32_t>(data, index, int32_t(saturate(INT32_MIN, INT32_MAX)));
    case ElementType::i64:
      return store_as<int64_t>(data, index, value);
    case ElementType::u8:
      return store_as<uint8_t>(data, index, uint8_t(saturate(0, 255)));
    case ElementType::boolean:
      return store_as<uint8_t>(data, index, uint8_t(saturate(0, 1)));
    default:
      internal_assert(false && "store_integer of a float type");
  }
}

void Tensor::AlignedFree::operator()(std::byte* p) const {
  std::free(p);
}

Tensor::Tensor(ElementType type, std::vector<int64_t> shape, std::vector<std::string> axis_names)
    : type_(type), shape_(std::move(shape)) {
  for (int64_t dim : shape_) {
    internal_assert(dim >= 0);
    bool overflows = dim != 0 && element_count_ > std::numeric_limits<uint64_t>::max() /
                                                      static_cast<uint64_t>(dim);
    internal_assert(!overflows);
    element_count_ *= static_cast<uint64_t>(dim);
  }
  set_axis_names(std::move(axis_names));
  byte_size_ = storage_bytes(type_, element_count_);
  // aligned_alloc needs a size that is a multiple of the alignment, and at least one block.
  size_t allocated =
      std::max<size_t>(kAlignment, (byte_size_ + kAlignment - 1) / kAlignment * kAlignment);
  internal_assert(allocated >= byte_size_);
  auto* memory = static_cast<std::byte*>(std::aligned_alloc(kAlignment, allocated));
  if (memory == nullptr) throw std::bad_alloc();
  std::memset(memory, 0, allocated);
  storage_.reset(memory);
}

Tensor::Tensor(const Tensor& other) : Tensor(other.type_, other.shape_, other.axis_names_) {
  if (byte_size_ != 0) std::memcpy(data(), other.data(), byte_size_);
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) *this = Tensor(other);
  return *this;
}

void Tensor::set_axis_names(std::vector<std::string> names) {
  internal_assert(names.empty() || names.size() == shape_.size());
  axis_names_ = std::move(names);
}

void Tensor::check_view_size(size_t size) const {
  internal_assert(facts(type_).bits == size * 8 && type_ != ElementType::i4);
}

void Tensor::check_index(uint64_t index) const {
  internal_assert(index < element_count_);
}

double Tensor::get(uint64_t index) const {
  check_index(index);
  return load_element(type_, data(), index);
}

void Tensor::set(uint64_t index, double value) {
  check_index(index);
  store_element(type_, data(), index, value);
}

int64_t Tensor::get_integer(uint64_t index) const {
  check_index(index);
  return load_integer(type_, data(), index);
}

void Tensor::set_integer(uint64_t index, int64_t value) {
  check_index(index);
  store_integer(type_, data(), index, value);
}

std::string format_shape(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace presk
