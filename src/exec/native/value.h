// The executor's values: a shape and immutable storage in the value's own type (f64, f32,
// bf16 as 16-bit patterns, int64, bool bytes, or integer weights), shared between lets without
// copies (a parameter slice is an offset into its parameter's storage). Operands enter a site
// through load_as: a narrower type widened exactly, a wider one rounded once (RNE) to the site's
// type; store_as rounds the compute type's results into the site's storage type.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "exec/native/kernels.h"
#include "exec/native/numeric.h"
#include "ir/ir.h"

namespace presk::exec::native {

// Row-major strides of `shape`.
std::vector<size_t> strides_of(const std::vector<int64_t>& shape);
size_t element_count(const std::vector<int64_t>& shape);
// z rounded once (RNE) to `precision` significant bits (24: f32, 8: bf16), as a float.
float integer_to_float(int64_t z, int precision);

// std::allocator, except that value-initialization (vector(n), resize(n)) leaves the elements
// uninitialized: for buffers that are written in full right after (bf16 stores round into them).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    std::construct_at(p, std::forward<Args>(args)...);
  }
};
using Bf16Patterns = std::vector<uint16_t, UninitializedAllocator<uint16_t>>;
// A real value's elements (storage and the ops' compute buffers): not zero-filled on sizing,
// since every op writes each element of its result.
template <typename T>
using Buffer = std::vector<T, UninitializedAllocator<T>>;

// A `quantize` let's codes, where a realization's integer sums read them (ops_chip.h).
struct ActivationCodes;

struct Storage {
  Buffer<double> f64;
  Buffer<float> f32;
  Bf16Patterns bf16;
  std::vector<int64_t> ints;
  std::vector<uint8_t> bools;
  std::shared_ptr<const QuantizedWeights> quant;
  std::shared_ptr<const ActivationCodes> codes;  // per element, as f64/f32/bf16 index it …
  // … or, for a transpose of a whole quantize's result, storage axis i is the codes' axis
  // codes_axes[i] (the transpose's axes; empty: the codes' own order)
  std::vector<int64_t> codes_axes;
};

struct Value {
  enum class Kind : uint8_t { real, integer, boolean, quantized };
  Kind kind = Kind::real;
  RealType type = RealType::f32;  // real: the storage type; quantized: f32 (its meaning)
  std::vector<int64_t> shape;
  std::shared_ptr<const Storage> storage;
  size_t offset = 0;  // first element in storage (a slice of a stacked parameter)
  // The holder may write these elements in place: no other live handle reads them (the
  // executor's ownership rule, executor.cpp; only cache_write writes through it).
  bool writable = false;

  size_t count() const;
};

// A value's elements in the compute type of a site of type `site` (see file comment).
Buffer<double> load_f64(const Value& value);
Buffer<float> load_f32(const Value& value, RealType site);  // site f32 or bf16
// The same elements written to out[0 … count) (no intermediate buffer; out need not be zeroed).
void load_f64_into(const Value& value, double* out);
void load_f32_into(const Value& value, RealType site, float* out);
// Elements begin … begin + count − 1 of the same, into out[0 … count).
void load_f32_range(const Value& value, RealType site, size_t begin, size_t count, float* out);

template <typename C>
Buffer<C> load_as(const Value& value, RealType site) {
  if constexpr (std::is_same_v<C, double>) {
    return load_f64(value);
  } else {
    return load_f32(value, site);
  }
}

// A value's elements in the compute type of a site of type `site`, as load_as gives them, but
// read in place when no conversion is needed (f64 at f64, f32 at f32): `data` points into the
// value's storage then, else into `owned`. Valid while the value's storage lives.
template <typename C>
struct Loaded {
  std::unique_ptr<C[]> owned;  // not zero-filled: load_*_into writes every element
  const C* data = nullptr;
  size_t size = 0;
};

template <typename C>
Loaded<C> view_as(const Value& value, RealType site) {
  Loaded<C> out;
  out.size = value.count();
  if (value.kind == Value::Kind::real) {
    if constexpr (std::is_same_v<C, double>) {
      if (value.type == RealType::f64) out.data = value.storage->f64.data() + value.offset;
    } else {
      if (value.type == RealType::f32 && site == RealType::f32) out.data = value.storage->f32.data() + value.offset;
    }
  }
  if (!out.data) {
    out.owned = std::make_unique_for_overwrite<C[]>(out.size);
    if constexpr (std::is_same_v<C, double>) {
      load_f64_into(value, out.owned.get());
    } else {
      load_f32_into(value, site, out.owned.get());
    }
    out.data = out.owned.get();
  }
  return out;
}

// A real value of type `site` from compute-type results (bf16: rounded once, RNE).
Value store_f64(Buffer<double> data, std::vector<int64_t> shape);
// `threads`: workers that may share a bf16 store's rounding (<= 1: the calling thread).
Value store_f32(Buffer<float> data, std::vector<int64_t> shape, RealType site, int threads = 1);
template <typename C>
Value store_as(Buffer<C> data, std::vector<int64_t> shape, RealType site, int threads = 1) {
  if constexpr (std::is_same_v<C, double>) {
    return store_f64(std::move(data), std::move(shape));
  } else {
    return store_f32(std::move(data), std::move(shape), site, threads);
  }
}

Value make_integers(std::vector<int64_t> data, std::vector<int64_t> shape);
Value make_booleans(std::vector<uint8_t> data, std::vector<int64_t> shape);
std::vector<int64_t> load_integers(const Value& value);  // integer or boolean (0/1)
std::vector<uint8_t> load_booleans(const Value& value);

// Element `index` as a double (exact for every kind; quantized: f32(q·s)).
double element(const Value& value, size_t index);

// Rows `rows` of the value's elements taken as rows of `row_size` (row r: elements
// r·row_size …), one after another, same kind and type (embed).
Value gather_rows(const Value& value, const std::vector<size_t>& rows, size_t row_size, std::vector<int64_t> shape);
// out[r·cols + c] = source[r + c·step] for r < rows, c < cols (a transposed matrix), in tiles
// of 16 × 16 so that the source lines of a tile stay in L1 (a column's lines, `step` apart,
// would otherwise fall into a few L1 sets).
template <typename E>
void copy_transposed(const E* source, size_t rows, size_t cols, size_t step, E* out) {
  constexpr size_t kTile = 16;
  for (size_t r0 = 0; r0 < rows; r0 += kTile) {
    for (size_t c0 = 0; c0 < cols; c0 += kTile) {
      const size_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (size_t r = r0; r < r1; ++r) {
        for (size_t c = c0; c < c1; ++c) out[r * cols + c] = source[r + c * step];
      }
    }
  }
}

// out[i] = source[base + Σ index[a]·strides[a]] for the i-th index of `shape` (row-major),
// walked a row (the last axis) at a time, or a matrix (the last two axes) at a time where
// they are a transposed one (the row strided, the axis before it contiguous).
template <typename E>
void copy_strided(const E* source, const std::vector<int64_t>& shape, const std::vector<size_t>& strides, size_t base,
                  E* out) {
  const size_t n = element_count(shape);
  if (n == 0) return;
  if (shape.empty()) {
    out[0] = source[base];
    return;
  }
  const size_t rank = shape.size(), row = static_cast<size_t>(shape[rank - 1]), step = strides[rank - 1];
  const bool matrices = rank >= 2 && step != 1 && strides[rank - 2] == 1;
  const size_t walked = matrices ? rank - 2 : rank - 1;  // the axes walked by `index`
  const size_t block = matrices ? row * static_cast<size_t>(shape[rank - 2]) : row;
  std::vector<int64_t> index(walked, 0);
  size_t position = base;
  for (size_t i = 0; i < n; i += block) {
    if (matrices) {
      copy_transposed(source + position, static_cast<size_t>(shape[rank - 2]), row, step, out + i);
    } else if (step == 1) {
      std::copy_n(source + position, row, out + i);
    } else if (step == 0) {  // a broadcast row
      std::fill_n(out + i, row, source[position]);
    } else {
      for (size_t j = 0; j < row; ++j) out[i + j] = source[position + j * step];
    }
    for (size_t a = walked; a-- > 0;) {
      position += strides[a];
      if (++index[a] < shape[a]) break;
      position -= strides[a] * static_cast<size_t>(shape[a]);
      index[a] = 0;
    }
  }
}

// The elements at base + Σ index[a]·strides[a] for each index of `shape` (row-major), same kind
// and type: gather's result for that index list, without building it (transpose, slice, broadcast).
Value gather_strided(const Value& value, std::vector<int64_t> shape, const std::vector<size_t>& strides, size_t base);
// A real (or quantized) value in type `site`: unchanged when it already is one.
Value convert_real(const Value& value, RealType site);
// The same elements under another shape (a view).
Value reshaped(const Value& value, std::vector<int64_t> shape);

// Stacks (fold_trace's layer inputs, fold_vjp's per-layer cotangents): `layers[l]` becomes
// layer l of a real value of `shape` ([L, ...]) stored in `site`, each layer entering by the
// load rule (exact when its type is `site`, as under a uniform realization; a narrower one
// widened exactly, a wider one rounded once).
Value stacked(const std::vector<Value>& layers, std::vector<int64_t> shape, RealType site);
// Layer `layer` of a stack [L, ...]: a view of its elements, shape [...], no copy.
Value layer_view(const Value& stack, int64_t layer);


}  // namespace presk::exec::native
