// The C code of sources, elementwise, layout and gather ops: each element loaded into the
// site's compute type, computed, stored into the site's type, exactly as exec/native's
// ops_elementwise.cpp and ops_layout.cpp do (numpy broadcasting by strides of 0).
#include <cinttypes>

#include "export/c_code.h"
#include "export/c_text.h"
#include "support/diagnostics.h"
#include "support/exact_real.h"
#include "support/number_format.h"

namespace presk::export_c {

const char* c_type(Store store) {
  switch (store) {
    case Store::f64:
      return "double";
    case Store::f32:
      return "float";
    case Store::bf16:
      return "uint16_t";
    case Store::i64:
      return "int64_t";
    case Store::b8:
      return "uint8_t";
    case Store::q8:
    case Store::q4:
      return "pk_qview";
  }
  return "?";
}
const char* store_name(Store store) {
  static const char* const names[] = {"f64", "f32", "bf16", "i64", "bool", "int8", "int4"};
  return names[static_cast<int>(store)];
}
const char* safetensors_dtype(Store store) {
  static const char* const names[] = {"F64", "F32", "BF16", "I64", "BOOL", "?", "?"};
  return names[static_cast<int>(store)];
}
Store store_of(RealType type) {
  return type == RealType::f64 ? Store::f64 : type == RealType::f32 ? Store::f32 : Store::bf16;
}
bool is_quantized(Store store) {
  return store == Store::q8 || store == Store::q4;
}

std::string read_at(const CValue& value, const std::string& offset) {
  return is_quantized(value.store) ? "pk_qat(" + value.name + ", " + offset + ")" : value.name + "[" + offset + "]";
}

std::string load(Store from, RealType site, const std::string& x) {
  if (is_quantized(from)) from = Store::f32;  // read_at gives the meaning f32(q·s)
  if (site == RealType::f64) {
    if (from == Store::f64) return x;
    if (from == Store::bf16) return "(double)pk_f32_from_bf16(" + x + ")";
    return "(double)" + x;
  }
  const bool bf16 = site == RealType::bf16;
  switch (from) {
    case Store::f64:
      return bf16 ? "pk_f32_from_bf16(pk_bf16_from_f64(" + x + "))" : "(float)" + x;
    case Store::f32:
      return bf16 ? "pk_round_bf16(" + x + ")" : x;
    case Store::bf16:
      return "pk_f32_from_bf16(" + x + ")";
    case Store::i64:
      return std::string("pk_float_from_i64(") + x + (bf16 ? ", 8)" : ", 24)");
    case Store::b8:
      return "(float)" + x;
    case Store::q8:
    case Store::q4:
      break;  // as f32, above
  }
  return x;
}

std::string store(RealType site, const std::string& expression) {
  return site == RealType::bf16 ? "pk_bf16_from_f32(" + expression + ")" : expression;
}
std::string compute_type(RealType site) {
  return site == RealType::f64 ? "double" : "float";
}
std::string math_suffix(RealType site) {
  return site == RealType::f64 ? "_d" : "_f";
}

std::vector<int64_t> row_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t a = shape.size(); a-- > 1;) strides[a - 1] = strides[a] * shape[a];
  return strides;
}
int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

std::string offset_text(const std::vector<std::string>& indices,
                        const std::vector<int64_t>& strides) {
  std::string text;
  for (size_t a = 0; a < indices.size(); ++a) {
    if (strides[a] == 0) continue;
    text += (text.empty() ? "" : " + ") + indices[a] +
            (strides[a] == 1 ? "" : " * " + std::to_string(strides[a]));
  }
  return text.empty() ? "0" : text;
}

std::vector<std::string> open_loops(std::ostringstream& out, const std::vector<int64_t>& shape,
                                    const std::string& prefix) {
  std::vector<std::string> names;
  for (size_t a = 0; a < shape.size(); ++a) {
    names.push_back(prefix + std::to_string(a));
    out << "  for (pk_index " << names.back() << " = 0; " << names.back() << " < " << shape[a]
        << "; ++" << names.back() << ")\n";
  }
  out << "  {\n";
  return names;
}
void close_loops(std::ostringstream& out, size_t) {
  out << "  }\n";
}

void unsupported(const LetCode& code, const std::string& what) {
  user_error("E1541").hint("export another entry, or run this one with `presk run --realize`")
      << "`presk export c` does not cover " << what << " (`" << ir::op_name(code.let.op)
      << "` at site " << code.site_name << ")";
}

namespace {

// The strides by which `from` (numpy-broadcast onto `to`, right-aligned) is read per axis of `to`.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& from,
                                       const std::vector<int64_t>& to) {
  std::vector<int64_t> strides(to.size(), 0);
  const std::vector<int64_t> own = row_strides(from);
  const size_t offset = to.size() - from.size();
  for (size_t a = 0; a < from.size(); ++a) strides[offset + a] = from[a] == 1 ? 0 : own[a];
  return strides;
}

std::string element(const CValue& value, const std::vector<std::string>& indices,
                    const std::vector<int64_t>& to) {
  return read_at(value, offset_text(indices, broadcast_strides(value.shape, to)));
}

// The compute-type expression of a real elementwise op on a (and b).
std::string real_expression(const LetCode& code, const std::string& a, const std::string& b) {
  const std::string s = math_suffix(code.site);
  const bool f64 = code.site == RealType::f64;
  switch (code.let.op) {
    case ir::Op::add:
      return "(" + a + " + " + b + ")";
    case ir::Op::sub:
      return "(" + a + " - " + b + ")";
    case ir::Op::mul:
      return "(" + a + " * " + b + ")";
    case ir::Op::div:
      return "(" + a + " / " + b + ")";
    case ir::Op::max:
      return "pk_max" + s + "(" + a + ", " + b + ")";
    case ir::Op::min:
      return "pk_min" + s + "(" + a + ", " + b + ")";
    case ir::Op::neg:
      return "(-" + a + ")";
    case ir::Op::abs:
      return (f64 ? "fabs(" : "fabsf(") + a + ")";
    case ir::Op::relu:
      return "pk_max" + s + "(" + a + (f64 ? ", 0.0)" : ", 0.0f)");
    case ir::Op::convert:
      return a;  // the conversion is the load
    case ir::Op::sqrt:
      return (f64 ? "sqrt(" : "sqrtf(") + a + ")";
    case ir::Op::exp:
    case ir::Op::log:
    case ir::Op::tanh:
    case ir::Op::rsqrt:
    case ir::Op::gelu_tanh:
    case ir::Op::gelu_tanh_grad:
    case ir::Op::gelu_erf:
    case ir::Op::gelu_erf_grad:
    case ir::Op::erf:
    case ir::Op::erf_grad:
      return std::string("pk_") + ir::op_name(code.let.op) + s + "(" + a + ")";
    default:
      unsupported(code, "this real op");
  }
}

std::string integer_expression(const LetCode& code, const std::string& a, const std::string& b) {
  switch (code.let.op) {
    case ir::Op::add:
      return "pk_add_i64(cx, " + a + ", " + b + ")";
    case ir::Op::sub:
      return "pk_sub_i64(cx, " + a + ", " + b + ")";
    case ir::Op::mul:
      return "pk_mul_i64(cx, " + a + ", " + b + ")";
    case ir::Op::max:
      return "pk_max_i64(" + a + ", " + b + ")";
    case ir::Op::min:
      return "pk_min_i64(" + a + ", " + b + ")";
    case ir::Op::neg:
      return "pk_neg_i64(cx, " + a + ")";
    case ir::Op::abs:
      return "pk_abs_i64(cx, " + a + ")";
    case ir::Op::relu:
      return "pk_max_i64(" + a + ", 0)";
    default:
      unsupported(code, "this integer op");
  }
}

const char* comparison_operator(ir::Op op) {
  switch (op) {
    case ir::Op::lt:
      return " < ";
    case ir::Op::le:
      return " <= ";
    case ir::Op::gt:
      return " > ";
    case ir::Op::ge:
      return " >= ";
    case ir::Op::eq:
      return " == ";
    default:
      return " != ";
  }
}

// A stored value read exactly as a double (comparisons of anything but two integers).
std::string as_double(const CValue& value, const std::string& x) {
  return value.store == Store::bf16 ? "(double)pk_f32_from_bf16(" + x + ")" : "(double)" + x;
}

void elementwise(LetCode& code) {
  const ir::Let& let = code.let;
  const std::vector<int64_t>& shape = code.result.shape;
  std::ostringstream& out = code.out;
  const std::vector<std::string> i = open_loops(out, shape, "i");
  const std::string target = code.result.name + "[" + offset_text(i, row_strides(shape)) + "]";
  std::vector<std::string> x;
  for (const CValue& operand : code.operands) x.push_back(element(operand, i, shape));
  const bool comparison = let.op == ir::Op::lt || let.op == ir::Op::le || let.op == ir::Op::gt ||
                          let.op == ir::Op::ge || let.op == ir::Op::eq || let.op == ir::Op::ne;
  if (comparison) {
    const CValue &a = code.operands[0], &b = code.operands[1];
    const bool integers = a.store == Store::i64 && b.store == Store::i64;
    out << "    " << target << " = (uint8_t)(" << (integers ? x[0] : as_double(a, x[0]))
        << comparison_operator(let.op) << (integers ? x[1] : as_double(b, x[1])) << ");\n";
  } else if (code.result.store == Store::i64) {
    if (let.op == ir::Op::where) {
      out << "    " << target << " = " << x[0] << " ? " << x[1] << " : " << x[2] << ";\n";
    } else {
      out << "    " << target << " = " << integer_expression(code, x[0], x.size() > 1 ? x[1] : "")
          << ";\n";
    }
  } else if (code.result.store == Store::b8) {
    unsupported(code, "boolean arithmetic");
  } else if (let.op == ir::Op::where) {
    out << "    " << target << " = "
        << store(code.site, x[0] + " ? " + load(code.operands[1].store, code.site, x[1]) + " : " +
                                load(code.operands[2].store, code.site, x[2]))
        << ";\n";
  } else {
    const std::string a = load(code.operands[0].store, code.site, x[0]);
    const std::string b = x.size() > 1 ? load(code.operands[1].store, code.site, x[1]) : "";
    out << "    " << target << " = " << store(code.site, real_expression(code, a, b)) << ";\n";
  }
  close_loops(out, i.size());
}

// A value moved into the site's type: the same bits when the types agree, else loaded and stored.
std::string moved(const LetCode& code, const CValue& from, const std::string& x) {
  if (code.result.store == from.store || code.result.store == Store::i64 ||
      code.result.store == Store::b8)
    return x;
  return store(code.site, load(from.store, code.site, x));
}

// Each result element read from operand 0 at Σ index·strides + base.
void strided_copy(LetCode& code, const std::vector<int64_t>& strides, int64_t base) {
  std::ostringstream& out = code.out;
  const std::vector<std::string> i = open_loops(out, code.result.shape, "i");
  const std::string source = read_at(code.operands[0], std::to_string(base) + " + " + offset_text(i, strides));
  out << "    " << code.result.name << "[" << offset_text(i, row_strides(code.result.shape))
      << "] = " << moved(code, code.operands[0], source) << ";\n";
  close_loops(out, i.size());
}

void layout(LetCode& code) {
  const ir::Let& let = code.let;
  const std::vector<int64_t> in = row_strides(code.operands[0].shape);
  switch (let.op) {
    case ir::Op::reshape:
      return strided_copy(code, row_strides(code.result.shape), 0);
    case ir::Op::broadcast:
      return strided_copy(code, broadcast_strides(code.operands[0].shape, code.result.shape), 0);
    case ir::Op::transpose: {
      std::vector<int64_t> strides;
      for (int64_t axis : let.attrs.axes) strides.push_back(in[static_cast<size_t>(axis)]);
      return strided_copy(code, strides, 0);
    }
    case ir::Op::slice: {
      int64_t base = 0;
      for (size_t k = 0; k < let.attrs.axes.size(); ++k)
        base += let.attrs.starts[k] * in[static_cast<size_t>(let.attrs.axes[k])];
      return strided_copy(code, in, base);
    }
    default:
      break;
  }
  std::ostringstream& out = code.out;
  if (let.op == ir::Op::causal_mask || let.op == ir::Op::causal_mask_at) {  // _at: rows from position `at`
    const size_t rank = code.result.shape.size();
    const std::string shift = let.op == ir::Op::causal_mask_at ? code.operands[1].name + "[0] + " : "";
    const std::vector<std::string> i = open_loops(out, code.result.shape, "i");
    const std::string at = offset_text(i, row_strides(code.result.shape));
    const std::string fill =
        let.attrs.literal.empty()
            ? (code.site == RealType::f64 ? "-(double)INFINITY" : "-(float)INFINITY")
            : "0";
    out << "    " << code.result.name << "[" << at << "] = " << i[rank - 1] << " > " << shift << i[rank - 2]
        << " ? " << store(code.site, fill) << " : "
        << store(code.site,
                 load(code.operands[0].store, code.site, read_at(code.operands[0], at)))
        << ";\n";
    close_loops(out, i.size());
    return;
  }
  // concat along `axis`: each part's elements at its place in the result.
  const size_t axis = static_cast<size_t>(let.attrs.axes.at(0));
  const std::vector<int64_t> to = row_strides(code.result.shape);
  int64_t along = 0;
  for (const CValue& part : code.operands) {
    const std::vector<std::string> i = open_loops(out, part.shape, "i");
    out << "    " << code.result.name << "[" << along * to[axis] << " + " << offset_text(i, to)
        << "] = "
        << moved(code, part, read_at(part, offset_text(i, row_strides(part.shape))))
        << ";\n";
    close_loops(out, i.size());
    along += part.shape[axis];
  }
}

void embed(LetCode& code) {
  const CValue &table = code.operands[0], &index = code.operands[1];
  const int64_t rows = table.shape.at(0), row = rows ? element_count(table.shape) / rows : 0;
  std::ostringstream& out = code.out;
  out << "  for (pk_index p = 0; p < " << element_count(index.shape) << "; ++p) {\n"
      << "    const int64_t r = " << index.name << "[p];\n"
      << "    if (r < 0 || r >= " << rows << ") pk_fail(cx, \"embed index outside the table's "
      << rows << " rows\");\n"
      << "    for (pk_index j = 0; j < " << row << "; ++j) " << code.result.name << "[p * " << row
      << " + j] = " << moved(code, table, read_at(table, "r * " + std::to_string(row) + " + j"))
      << ";\n  }\n";
}

}  // namespace

// cache_write(c, rows, at): the result is c itself (in place) or a copy of it in the site's type;
// the rows, rounded once into that type, written at positions at … at+n−1 of the axis.
void emit_cache_write(LetCode& code, bool in_place) {
  const CValue &cache = code.operands[0], &rows = code.operands[1], &at = code.operands[2];
  const size_t axis = static_cast<size_t>(code.let.attrs.axes.at(0));
  const int64_t extent = cache.shape[axis], n = rows.shape[axis];
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < axis; ++a) outer *= cache.shape[a];
  for (size_t a = axis + 1; a < cache.shape.size(); ++a) inner *= cache.shape[a];
  std::ostringstream& out = code.out;
  out << "  if (" << at.name << "[0] < 0 || " << at.name << "[0] > " << extent - n
      << ") pk_fail(cx, \"cache_write: position outside the cache's " << extent << " positions ("
      << code.site_name << ")\");\n";
  if (!in_place) {
    out << "  for (pk_index i = 0; i < " << element_count(cache.shape) << "; ++i) " << code.result.name
        << "[i] = " << moved(code, cache, read_at(cache, "i")) << ";\n";
  }
  out << "  for (pk_index o = 0; o < " << outer << "; ++o)\n    for (pk_index r = 0; r < " << n * inner
      << "; ++r) " << code.result.name << "[(o * " << extent << " + " << at.name << "[0]) * " << inner
      << " + r] = " << moved(code, rows, read_at(rows, "o * " + std::to_string(n * inner) + " + r")) << ";\n";
}

namespace {

void literal(LetCode& code) {
  const int64_t n = element_count(code.result.shape);
  std::string value;
  if (code.result.store == Store::i64) {
    value = code.let.attrs.literal + "LL";
  } else if (code.result.store == Store::b8) {
    value = code.let.attrs.literal == "true" || code.let.attrs.literal == "1" ? "1" : "0";
  } else {
    const BinaryFormat format = code.site == RealType::f64   ? kBinary64
                                : code.site == RealType::f32 ? kBinary32
                                                             : kBfloat16;
    const std::optional<double> rounded = round_literal(code.let.attrs.literal, format);
    if (!rounded) unsupported(code, "the literal `" + code.let.attrs.literal + "`");
    if (code.site == RealType::bf16) {
      char bits[16];
      std::snprintf(bits, sizeof bits, "0x%04x", bf16_from_f32(static_cast<float>(*rounded)));
      value = bits;
    } else {
      value = c_real_literal(*rounded, code.site == RealType::f32);
    }
  }
  code.out << "  for (pk_index i = 0; i < " << n << "; ++i) " << code.result.name
           << "[i] = " << value << ";\n";
}

void iota(LetCode& code) {
  const size_t axis = static_cast<size_t>(code.let.attrs.axes.at(0));
  const std::vector<int64_t> strides = row_strides(code.result.shape);
  code.out << "  for (pk_index i = 0; i < " << element_count(code.result.shape) << "; ++i) "
           << code.result.name << "[i] = (i / " << strides[axis] << ") % "
           << code.result.shape[axis] << ";\n";
}

}  // namespace

void emit_op(LetCode& code) {
  if (code.let.op == ir::Op::dropout) unsupported(code, "dropout (a training compile)");
  switch (ir::op_info(code.let.op).family) {
    case ir::OpFamily::Source:
      if (code.let.op == ir::Op::iota) return iota(code);
      return literal(code);
    case ir::OpFamily::Elementwise:
      return elementwise(code);
    case ir::OpFamily::Reduction:
      return emit_reduction(code);
    case ir::OpFamily::Contraction:
      return emit_contract(code);
    case ir::OpFamily::Normalization:
      if (code.let.op == ir::Op::quantize) unsupported(code, "a chip's quantize");
      return emit_normalization(code);
    case ir::OpFamily::Gather:
      return embed(code);
    case ir::OpFamily::Layout:
      return layout(code);
    case ir::OpFamily::Loss:
      return emit_cross_entropy(code);
    case ir::OpFamily::Control:
      break;
  }
  unsupported(code, "this control op");
}

}  // namespace presk::export_c
