// What the C emitter's parts share: the storage types of exported values, a let's code
// context, and the loads and stores of exec/native/value.cpp as C expressions.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "exec/native/realization.h"
#include "ir/ir.h"

namespace presk::export_c {

using exec::native::Order;
using exec::native::RealType;

// How an exported value is stored: a real type of the menu, int64 (Z), a byte (B), or integer
// weights as their int8 or int4 codes and f32 scales (a parameter's view, `pk_qview`), each
// element read as its meaning f32(q·s).
enum class Store : uint8_t { f64, f32, bf16, i64, b8, q8, q4 };
const char* c_type(Store store);             // "double", "float", "uint16_t", "int64_t", "uint8_t", "pk_qview"
const char* store_name(Store store);         // "f64", …, "i64", "bool", "int8", "int4"
const char* safetensors_dtype(Store store);  // "F64", "F32", "BF16", "I64", "BOOL" (not for q8, q4)
Store store_of(RealType type);
bool is_quantized(Store store);

// A value of a generated function: its C variable, storage type and shape.
struct CValue {
  std::string name;
  Store store = Store::f32;
  std::vector<int64_t> shape;
};

// One let's code: its operands and result (allocated by the caller), the site's type and the
// realization's order; `out` is the function body.
struct LetCode {
  const ir::Let& let;
  std::string site_name;
  std::vector<CValue> operands;
  CValue result;
  RealType site;
  Order order;
  std::ostringstream& out;
};

// Element `offset` (C text) of a stored value: name[offset], or integer weights' meaning f32(q·s).
std::string read_at(const CValue& value, const std::string& offset);
// Element `x` of storage type `from` in the compute type of a site of type `site` (value.cpp's
// load rules: wider rounded once, narrower widened exactly, integers rounded once).
std::string load(Store from, RealType site, const std::string& x);
// A compute-type expression stored into the site's type (bf16: RNE).
std::string store(RealType site, const std::string& expression);
// "double" for an f64 site, else "float"; the math functions' suffix "_d" / "_f".
std::string compute_type(RealType site);
std::string math_suffix(RealType site);

// Row-major strides, and Σ index[a]·strides[a] as C text ("0" when empty).
std::vector<int64_t> row_strides(const std::vector<int64_t>& shape);
int64_t element_count(const std::vector<int64_t>& shape);
std::string offset_text(const std::vector<std::string>& indices,
                        const std::vector<int64_t>& strides);
// Opens nested loops `for (long <prefix>a = 0; …)` over `shape` (returns the index names) and
// closes them.
std::vector<std::string> open_loops(std::ostringstream& out, const std::vector<int64_t>& shape,
                                    const std::string& prefix);
void close_loops(std::ostringstream& out, size_t count);

// The code of every op but param and the control ops (c_ops.cpp, c_ops_sums.cpp). An op or type
// the export does not cover is E1541 naming it.
void emit_op(LetCode& code);
void emit_reduction(LetCode& code);
void emit_normalization(LetCode& code);
void emit_cross_entropy(LetCode& code);
void emit_contract(LetCode& code);
// cache_write into code.result: the cache operand itself when `in_place`, else a fresh buffer.
void emit_cache_write(LetCode& code, bool in_place);
[[noreturn]] void unsupported(const LetCode& code, const std::string& what);

}  // namespace presk::export_c
