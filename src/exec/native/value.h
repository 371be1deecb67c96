// The executor's values: a shape and immutable storage in the value's own type (f64, f32,
// bf16 as 16-bit patterns, int64, bool bytes, or integer weights), shared between lets without
// copies (a parameter slice is an offset into its parameter's storage). Operands enter a site
// through load_as: a narrower type widened exactly, a wider one rounded once (RNE) to the site's
// type; store_as rounds the compute type's results into the site's storage type.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "exec/native/kernels.h"
#include "exec/native/numeric.h"
#include "ir/ir.h"

namespace presk::exec::native {

struct Storage {
  std::vector<double> f64;
  std::vector<float> f32;
  std::vector<uint16_t> bf16;
  std::vector<int64_t> ints;
  std::vector<uint8_t> bools;
  std::shared_ptr<const QuantizedWeights> quant;
};

struct Value {
  enum class Kind : uint8_t { real, integer, boolean, quantized };
  Kind kind = Kind::real;
  RealType type = RealType::f32;  // real: the storage type; quantized: f32 (its meaning)
  std::vector<int64_t> shape;
  std::shared_ptr<const Storage> storage;
  size_t offset = 0;  // first element in storage (a slice of a stacked parameter)

  size_t count() const;
};

// A value's elements in the compute type of a site of type `site` (see file comment).
std::vector<double> load_f64(const Value& value);
std::vector<float> load_f32(const Value& value, RealType site);  // site f32 or bf16

template <typename C>
std::vector<C> load_as(const Value& value, RealType site) {
  if constexpr (std::is_same_v<C, double>) {
    return load_f64(value);
  } else {
    return load_f32(value, site);
  }
}

// A real value of type `site` from compute-type results (bf16: rounded once, RNE).
Value store_f64(std::vector<double> data, std::vector<int64_t> shape);
Value store_f32(std::vector<float> data, std::vector<int64_t> shape, RealType site);
template <typename C>
Value store_as(std::vector<C> data, std::vector<int64_t> shape, RealType site) {
  if constexpr (std::is_same_v<C, double>) {
    return store_f64(std::move(data), std::move(shape));
  } else {
    return store_f32(std::move(data), std::move(shape), site);
  }
}

Value make_integers(std::vector<int64_t> data, std::vector<int64_t> shape);
Value make_booleans(std::vector<uint8_t> data, std::vector<int64_t> shape);
std::vector<int64_t> load_integers(const Value& value);  // integer or boolean (0/1)
std::vector<uint8_t> load_booleans(const Value& value);

// Element `index` as a double (exact for every kind; quantized: f32(q·s)).
double element(const Value& value, size_t index);

// The elements at `indices` (into the value's own elements), same kind and type: layout moves.
Value gather(const Value& value, const std::vector<size_t>& indices, std::vector<int64_t> shape);
// A real (or quantized) value in type `site`: unchanged when it already is one.
Value convert_real(const Value& value, RealType site);
// The same elements under another shape (a view).
Value reshaped(const Value& value, std::vector<int64_t> shape);

// Row-major strides of `shape`.
std::vector<size_t> strides_of(const std::vector<int64_t>& shape);
size_t element_count(const std::vector<int64_t>& shape);

}  // namespace presk::exec::native
