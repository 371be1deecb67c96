// Tensor: an owning, 64-byte-aligned block of elements of one ElementType with a shape
// (and optional axis names), plus the one table of per-type facts every stage consults.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace presk {

// The element types presk stores. Layout of each, in memory and in files (little-endian):
//   f64, f32   IEEE 754 binary64 / binary32.
//   bf16       the top 16 bits of a binary32 (1 sign, 8 exponent, 7 fraction bits).
//   i8, i32, i64  two's complement.  u8  unsigned byte.
//   i4         two's complement in [-8, 7], two per byte, LOW NIBBLE FIRST: element 2k is
//              bits 0-3 of byte k, element 2k+1 bits 4-7. An odd count leaves the high
//              nibble of the last byte zero.
//   boolean    one byte, 0 (false) or 1 (true).
// Keep in the order of kElementTypeFacts.
enum class ElementType : uint8_t { f64, f32, bf16, i8, i4, i32, i64, u8, boolean };
inline constexpr size_t kElementTypeCount = 9;

struct ElementTypeFacts {
  ElementType type;
  const char* name;  // as in realizations and `presk tensors`: "f32", "i4", "bool"
  uint32_t bits;     // storage bits per element (i4: 4)
  bool is_float;
  bool is_signed;        // floats are signed
  double unit_roundoff;  // u = 2^-p for a float with p significand bits; 0 for integers
  double lowest;         // smallest finite value (floats: -max finite)
  double highest;        // largest finite value (i64: 2^63 - 1024, the largest double below 2^63)
};

// One row per type, indexed by the type's value (ggml style).
extern const std::array<ElementTypeFacts, kElementTypeCount> kElementTypeFacts;

inline const ElementTypeFacts& facts(ElementType type) {
  return kElementTypeFacts[static_cast<size_t>(type)];
}
inline const char* type_name(ElementType type) {
  return facts(type).name;
}
std::optional<ElementType> element_type_from_name(std::string_view name);

// Bytes that `count` elements of `type` occupy (i4: ceil(count / 2)). internal_assert on
// overflow; use checked_storage_bytes for untrusted counts.
size_t storage_bytes(ElementType type, uint64_t count);
// As storage_bytes, or nullopt when the byte count does not fit in 64 bits.
std::optional<uint64_t> checked_storage_bytes(ElementType type, uint64_t count);

// Element `index` of packed storage `data` of `type`, as a double (exact for every type
// except i64 beyond 2^53, which rounds to nearest even). Unaligned data is fine.
double load_element(ElementType type, const std::byte* data, uint64_t index);
// Stores round_to(value, type) (number_format.h) into element `index`.
void store_element(ElementType type, std::byte* data, uint64_t index, double value);
// Exact integer access for the integer types (internal_assert on floats); the store saturates.
int64_t load_integer(ElementType type, const std::byte* data, uint64_t index);
void store_integer(ElementType type, std::byte* data, uint64_t index, int64_t value);

class Tensor {
 public:
  static constexpr size_t kAlignment = 64;  // bytes; storage starts on a cache line

  // A scalar f32 zero.
  Tensor() : Tensor(ElementType::f32, {}) {}
  // Zero-filled. `axis_names` is empty or has one name per axis. Dimensions must be >= 0.
  Tensor(ElementType type, std::vector<int64_t> shape, std::vector<std::string> axis_names = {});

  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;

  ElementType type() const { return type_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  const std::vector<std::string>& axis_names() const { return axis_names_; }
  void set_axis_names(std::vector<std::string> names);
  uint64_t element_count() const { return element_count_; }
  size_t byte_size() const { return byte_size_; }

  std::byte* data() { return storage_.get(); }
  const std::byte* data() const { return storage_.get(); }
  std::span<const std::byte> bytes() const { return {data(), byte_size_}; }
  std::span<std::byte> bytes() { return {data(), byte_size_}; }

  // Typed view; internal_assert that T has the element's size (not for i4 or bf16-as-float).
  template <typename T>
  T* data_as() {
    check_view_size(sizeof(T));
    return reinterpret_cast<T*>(data());
  }
  template <typename T>
  const T* data_as() const {
    check_view_size(sizeof(T));
    return reinterpret_cast<const T*>(data());
  }

  // Element at row-major flat index, as a double; set() rounds with round_to.
  double get(uint64_t index) const;
  void set(uint64_t index, double value);
  int64_t get_integer(uint64_t index) const;
  void set_integer(uint64_t index, int64_t value);

 private:
  struct AlignedFree {
    void operator()(std::byte* p) const;
  };
  void check_view_size(size_t size) const;
  void check_index(uint64_t index) const;

  ElementType type_ = ElementType::f32;
  std::vector<int64_t> shape_;
  std::vector<std::string> axis_names_;
  uint64_t element_count_ = 1;
  size_t byte_size_ = 0;
  std::unique_ptr<std::byte[], AlignedFree> storage_;
};

// "[2, 3]"; "[]" for a scalar.
std::string format_shape(const std::vector<int64_t>& shape);

}  // namespace presk
