// Values of the executor: loading into a site's compute type and storing into its type.
#include "exec/native/value.h"

#include <bit>
#include <cmath>

#include "exec/native/contract_driver.h"

#include "exec/native/convert.h"
#include "support/diagnostics.h"

namespace presk::exec::native {

size_t element_count(const std::vector<int64_t>& shape) {
  size_t count = 1;
  for (int64_t extent : shape) count *= static_cast<size_t>(extent);
  return count;
}

std::vector<size_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<size_t> strides(shape.size(), 1);
  for (size_t a = shape.size(); a-- > 1;) strides[a - 1] = strides[a] * static_cast<size_t>(shape[a]);
  return strides;
}

size_t Value::count() const { return element_count(shape); }

float integer_to_float(int64_t z, int precision) {
  // |z| as an unsigned (INT64_MIN included), rounded to `precision` significant bits, ties
  // to even, in integer arithmetic: the result has ≤ precision bits and lies below 2^64, so
  // the float holds it exactly.
  const uint64_t magnitude = z < 0 ? uint64_t{0} - static_cast<uint64_t>(z) : static_cast<uint64_t>(z);
  const int width = magnitude == 0 ? 0 : 64 - std::countl_zero(magnitude);
  uint64_t kept = magnitude;
  int shift = 0;
  if (width > precision) {
    shift = width - precision;
    const uint64_t rest = magnitude & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
    kept = magnitude >> shift;
    if (rest > half || (rest == half && (kept & 1))) ++kept;
  }
  const float value = std::ldexp(static_cast<float>(kept), shift);
  return z < 0 ? -value : value;
}

double element(const Value& v, size_t index) {
  const Storage& s = *v.storage;
  const size_t i = v.offset + index;
  switch (v.kind) {
    case Value::Kind::integer: return static_cast<double>(s.ints[i]);
    case Value::Kind::boolean: return s.bools[i];
    case Value::Kind::quantized: return s.quant->value(i);
    case Value::Kind::real: break;
  }
  switch (v.type) {
    case RealType::f64: return s.f64[i];
    case RealType::f32: return s.f32[i];
    case RealType::bf16: return from_bf16(s.bf16[i]);
  }
  return 0;
}

void load_f64_into(const Value& v, double* out) {
  const size_t n = v.count();
  const Storage& s = *v.storage;
  if (v.kind == Value::Kind::real && v.type == RealType::f64) {
    std::copy(s.f64.begin() + v.offset, s.f64.begin() + v.offset + n, out);
  } else if (v.kind == Value::Kind::real && v.type == RealType::f32) {
    for (size_t i = 0; i < n; ++i) out[i] = s.f32[v.offset + i];
  } else if (v.kind == Value::Kind::real && v.type == RealType::bf16) {
    for (size_t i = 0; i < n; ++i) out[i] = from_bf16(s.bf16[v.offset + i]);
  } else if (v.kind == Value::Kind::integer) {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(s.ints[v.offset + i]);
  } else if (v.kind == Value::Kind::boolean) {
    for (size_t i = 0; i < n; ++i) out[i] = s.bools[v.offset + i];
  } else {
    for (size_t i = 0; i < n; ++i) out[i] = element(v, i);
  }
}

Buffer<double> load_f64(const Value& v) {
  Buffer<double> out(v.count());
  load_f64_into(v, out.data());
  return out;
}

// bf16 sites: a bf16 value widened (convert.h), an f32 one rounded once straight from its
// storage, an f64 one rounded once (never via f32); anything else converted to f32 first.
void load_f32_range(const Value& v, RealType site, size_t begin, size_t count, float* out) {
  internal_assert(site != RealType::f64 && begin + count <= v.count());
  const Storage& s = *v.storage;
  const bool to_bf16 = site == RealType::bf16;
  const size_t first = v.offset + begin;
  if (v.kind == Value::Kind::real && v.type == RealType::f64) {
    for (size_t i = 0; i < count; ++i) {
      const double x = s.f64[first + i];
      out[i] = to_bf16 ? from_bf16(native::to_bf16(x)) : static_cast<float>(x);
    }
  } else if (v.kind == Value::Kind::real && v.type == RealType::bf16) {
    widen_bf16(s.bf16.data() + first, out, count);
  } else if (v.kind == Value::Kind::real && v.type == RealType::f32) {
    if (to_bf16) {
      round_through_bf16(s.f32.data() + first, out, count);
    } else {
      std::copy(s.f32.begin() + first, s.f32.begin() + first + count, out);
    }
  } else if (v.kind == Value::Kind::integer) {
    // Integers convert with one rounding (RNE) into the site's type, never via f64 or f32.
    for (size_t i = 0; i < count; ++i) out[i] = integer_to_float(s.ints[first + i], to_bf16 ? 8 : 24);
  } else {
    // Booleans are 0/1, integer weights are f32(q·s).
    for (size_t i = 0; i < count; ++i) out[i] = static_cast<float>(element(v, begin + i));
    if (to_bf16) round_through_bf16(out, out, count);
  }
}

void load_f32_into(const Value& v, RealType site, float* out) { load_f32_range(v, site, 0, v.count(), out); }

Buffer<float> load_f32(const Value& v, RealType site) {
  Buffer<float> out(v.count());
  load_f32_into(v, site, out.data());
  return out;
}

Value store_f64(Buffer<double> data, std::vector<int64_t> shape) {
  auto storage = std::make_shared<Storage>();
  storage->f64 = std::move(data);
  return Value{Value::Kind::real, RealType::f64, std::move(shape), std::move(storage), 0};
}

Value store_f32(Buffer<float> data, std::vector<int64_t> shape, RealType site, int threads) {
  auto storage = std::make_shared<Storage>();
  if (site == RealType::bf16) {
    storage->bf16.resize(data.size());
    constexpr size_t kChunk = 32768;  // elements per task: each rounds on its own
    const size_t n = data.size(), tasks = threads > 1 ? (n + kChunk - 1) / kChunk : std::min<size_t>(n, 1);
    for_each_task(tasks, threads, [&](size_t task) {
      const size_t begin = tasks == 1 ? 0 : task * kChunk, count = tasks == 1 ? n : std::min(kChunk, n - begin);
      round_to_bf16(data.data() + begin, storage->bf16.data() + begin, count);
    });
  } else {
    internal_assert(site == RealType::f32);
    storage->f32 = std::move(data);
  }
  return Value{Value::Kind::real, site, std::move(shape), std::move(storage), 0};
}

Value make_integers(std::vector<int64_t> data, std::vector<int64_t> shape) {
  auto storage = std::make_shared<Storage>();
  storage->ints = std::move(data);
  return Value{Value::Kind::integer, RealType::f64, std::move(shape), std::move(storage), 0};
}

Value make_booleans(std::vector<uint8_t> data, std::vector<int64_t> shape) {
  auto storage = std::make_shared<Storage>();
  storage->bools = std::move(data);
  return Value{Value::Kind::boolean, RealType::f64, std::move(shape), std::move(storage), 0};
}

std::vector<int64_t> load_integers(const Value& v) {
  internal_assert(v.kind == Value::Kind::integer || v.kind == Value::Kind::boolean);
  const auto first = static_cast<long>(v.offset), last = first + static_cast<long>(v.count());
  if (v.kind == Value::Kind::integer) return std::vector<int64_t>(v.storage->ints.begin() + first, v.storage->ints.begin() + last);
  return std::vector<int64_t>(v.storage->bools.begin() + first, v.storage->bools.begin() + last);
}

std::vector<uint8_t> load_booleans(const Value& v) {
  internal_assert(v.kind == Value::Kind::boolean);
  return std::vector<uint8_t>(v.storage->bools.begin() + v.offset, v.storage->bools.begin() + v.offset + v.count());
}

namespace {

template <typename Vector>
Vector pick_rows(const Vector& from, size_t offset, const std::vector<size_t>& rows, size_t row_size) {
  Vector out(rows.size() * row_size);
  for (size_t i = 0; i < rows.size(); ++i) {
    std::copy_n(from.begin() + static_cast<long>(offset + rows[i] * row_size), row_size,
                out.begin() + static_cast<long>(i * row_size));
  }
  return out;
}

template <typename Vector>
Vector pick_strided(const Vector& from, size_t offset, const std::vector<int64_t>& shape,
                    const std::vector<size_t>& strides, size_t base) {
  Vector out(element_count(shape));
  copy_strided(from.data() + offset, shape, strides, base, out.data());
  return out;
}

}  // namespace

Value gather_strided(const Value& v, std::vector<int64_t> shape, const std::vector<size_t>& strides, size_t base) {
  if (v.kind == Value::Kind::quantized) return gather_strided(convert_real(v, RealType::f32), std::move(shape), strides, base);
  auto storage = std::make_shared<Storage>();
  const Storage& s = *v.storage;
  if (v.kind == Value::Kind::integer) {
    storage->ints = pick_strided(s.ints, v.offset, shape, strides, base);
  } else if (v.kind == Value::Kind::boolean) {
    storage->bools = pick_strided(s.bools, v.offset, shape, strides, base);
  } else if (v.type == RealType::f64) {
    storage->f64 = pick_strided(s.f64, v.offset, shape, strides, base);
  } else if (v.type == RealType::f32) {
    storage->f32 = pick_strided(s.f32, v.offset, shape, strides, base);
  } else {
    storage->bf16 = pick_strided(s.bf16, v.offset, shape, strides, base);
  }
  return Value{v.kind, v.type, std::move(shape), std::move(storage), 0};
}

Value gather_rows(const Value& v, const std::vector<size_t>& rows, size_t row_size, std::vector<int64_t> shape) {
  if (v.kind == Value::Kind::quantized) return gather_rows(convert_real(v, RealType::f32), rows, row_size, std::move(shape));
  auto storage = std::make_shared<Storage>();
  const Storage& s = *v.storage;
  if (v.kind == Value::Kind::integer) {
    storage->ints = pick_rows(s.ints, v.offset, rows, row_size);
  } else if (v.kind == Value::Kind::boolean) {
    storage->bools = pick_rows(s.bools, v.offset, rows, row_size);
  } else if (v.type == RealType::f64) {
    storage->f64 = pick_rows(s.f64, v.offset, rows, row_size);
  } else if (v.type == RealType::f32) {
    storage->f32 = pick_rows(s.f32, v.offset, rows, row_size);
  } else {
    storage->bf16 = pick_rows(s.bf16, v.offset, rows, row_size);
  }
  return Value{v.kind, v.type, std::move(shape), std::move(storage), 0};
}

Value convert_real(const Value& v, RealType site) {
  if (v.kind == Value::Kind::real && v.type == site) return v;
  if (site == RealType::f64) return store_f64(load_f64(v), v.shape);
  return store_f32(load_f32(v, site), v.shape, site);
}

Value stacked(const std::vector<Value>& layers, std::vector<int64_t> shape, RealType site) {
  const size_t per_layer = layers.empty() ? 0 : element_count(shape) / layers.size();
  internal_assert(per_layer * layers.size() == element_count(shape));
  auto storage = std::make_shared<Storage>();
  auto append = [&](auto& into, const auto& from, size_t offset) {
    into.insert(into.end(), from.begin() + static_cast<long>(offset), from.begin() + static_cast<long>(offset + per_layer));
  };
  for (const Value& layer : layers) {
    internal_assert(layer.count() == per_layer);
    const Value v = convert_real(layer, site);
    switch (site) {
      case RealType::f64: append(storage->f64, v.storage->f64, v.offset); break;
      case RealType::f32: append(storage->f32, v.storage->f32, v.offset); break;
      case RealType::bf16: append(storage->bf16, v.storage->bf16, v.offset); break;
    }
  }
  return Value{Value::Kind::real, site, std::move(shape), std::move(storage), 0};
}

Value layer_view(const Value& stack, int64_t layer) {
  internal_assert(!stack.shape.empty() && layer >= 0 && layer < stack.shape[0]);
  Value view = stack;
  view.shape.erase(view.shape.begin());
  view.offset += static_cast<size_t>(layer) * element_count(view.shape);
  return view;
}

Value reshaped(const Value& v, std::vector<int64_t> shape) {
  Value out = v;
  out.shape = std::move(shape);
  return out;
}

}  // namespace presk::exec::native
