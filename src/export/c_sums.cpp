// The C code of every op that sums: reductions, softmax and log_softmax, cross_entropy and
// contractions, each sum in the realization's order (exec/native: ordered_sum, the fma chains
// of the contraction kernels, combine_partials), in the site's compute type.
#include <algorithm>

#include "export/c_code.h"

namespace presk::export_c {
namespace {

int64_t partials_of(const Order& order) {
  return order.kind == exec::native::OrderKind::interleaved ? std::max<int64_t>(order.partials, 1)
                                                            : 1;
}

// The axes a reduction-like op sums over (attrs.axes, negative from the end) as flags.
std::vector<bool> reduced_axes(const std::vector<int64_t>& axes, size_t rank) {
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : axes)
    reduced[static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis)] = true;
  return reduced;
}

// The extents of the kept (or the reduced) axes and the operand's strides along them.
struct AxisSplit {
  std::vector<int64_t> extents, strides;
};
AxisSplit split_axes(const std::vector<int64_t>& shape, const std::vector<bool>& reduced,
                     bool want_reduced) {
  AxisSplit split;
  const std::vector<int64_t> strides = row_strides(shape);
  for (size_t a = 0; a < shape.size(); ++a) {
    if (reduced[a] != want_reduced) continue;
    split.extents.push_back(shape[a]);
    split.strides.push_back(strides[a]);
  }
  return split;
}

// Opens loops over the kept axes, defining `base` (the first term's offset) and counting `o`.
void open_rows(std::ostringstream& out, const AxisSplit& kept) {
  out << "  {\n  pk_index o = 0;\n";
  const std::vector<std::string> k = open_loops(out, kept.extents, "k");
  out << "    const pk_index base = " << offset_text(k, kept.strides) << ";\n";
}
void close_rows(std::ostringstream& out) {
  out << "    ++o;\n  }\n  }\n";
}

// t[0 … T) = the terms of the row at `base`, loaded into the compute type.
void gather_terms(std::ostringstream& out, const LetCode& code, const AxisSplit& terms,
                  const std::string& into) {
  out << "    {\n    pk_index n = 0;\n";
  const std::vector<std::string> r = open_loops(out, terms.extents, "r");
  const CValue& x = code.operands[0];
  out << "      " << into << "[n++] = "
      << load(x.store, code.site, read_at(x, "base + " + offset_text(r, terms.strides)))
      << ";\n";
  close_loops(out, r.size());
  out << "    }\n";
}

void integer_reduction(LetCode& code, const AxisSplit& kept, const AxisSplit& terms) {
  std::ostringstream& out = code.out;
  const bool max = code.let.op == ir::Op::reduce_max;
  open_rows(out, kept);
  out << "    int64_t acc = " << (max ? code.operands[0].name + "[base]" : "0") << ";\n";
  const std::vector<std::string> r = open_loops(out, terms.extents, "r");
  const std::string x = code.operands[0].name + "[base + " + offset_text(r, terms.strides) + "]";
  out << "      acc = " << (max ? "pk_max_i64(acc, " + x + ")" : "pk_add_i64(cx, acc, " + x + ")")
      << ";\n";
  close_loops(out, r.size());
  out << "    " << code.result.name << "[o] = acc;\n";
  close_rows(out);
}

}  // namespace

void emit_reduction(LetCode& code) {
  const std::vector<int64_t>& shape = code.operands[0].shape;
  const std::vector<bool> reduced = reduced_axes(code.let.attrs.axes, shape.size());
  const AxisSplit kept = split_axes(shape, reduced, false),
                  terms = split_axes(shape, reduced, true);
  if (code.result.store == Store::i64) return integer_reduction(code, kept, terms);
  const int64_t count = element_count(terms.extents);
  const std::string c = compute_type(code.site), s = math_suffix(code.site);
  std::ostringstream& out = code.out;
  out << "  {\n  " << c << "* t = (" << c << "*)pk_alloc(cx, " << std::max<int64_t>(count, 1)
      << " * sizeof(" << c << "));\n";
  open_rows(out, kept);
  gather_terms(out, code, terms, "t");
  if (code.let.op == ir::Op::reduce_max) {
    out << "    " << c << " m = t[0];\n    pk_index n;\n    for (n = 1; n < " << count
        << "; ++n) m = pk_max_fold" << s << "(m, t[n]);\n    " << code.result.name
        << "[o] = " << store(code.site, "m") << ";\n";
  } else {
    out << "    " << c << " sum = pk_ordered_sum" << s << "(cx, t, " << count << ", "
        << partials_of(code.order) << ");\n";
    const std::string value =
        code.let.op == ir::Op::mean ? "sum / (" + c + ")" + std::to_string(count) : "sum";
    out << "    " << code.result.name << "[o] = " << store(code.site, value) << ";\n";
  }
  close_rows(out);
  out << "  pk_free(cx, t);\n  }\n";
}

// m = max, d = x − m, e = exp(d), s = Σ e (ordered); softmax e / s, log_softmax d − log(s).
void emit_normalization(LetCode& code) {
  const std::vector<int64_t>& shape = code.operands[0].shape;
  const std::vector<bool> reduced = reduced_axes(code.let.attrs.axes, shape.size());
  const AxisSplit kept = split_axes(shape, reduced, false),
                  terms = split_axes(shape, reduced, true);
  const int64_t count = element_count(terms.extents);
  if (count == 0) return;
  const std::string c = compute_type(code.site), s = math_suffix(code.site);
  const bool log = code.let.op == ir::Op::log_softmax;
  std::ostringstream& out = code.out;
  out << "  {\n  " << c << "* d = (" << c << "*)pk_alloc(cx, " << count << " * sizeof(" << c
      << "));\n  " << c << "* e = (" << c << "*)pk_alloc(cx, " << count << " * sizeof(" << c
      << "));\n";
  open_rows(out, kept);
  gather_terms(out, code, terms, "d");
  out << "    " << c << " m = d[0], sum;\n    pk_index n;\n"
      << "    for (n = 1; n < " << count << "; ++n) m = pk_max_fold" << s << "(m, d[n]);\n"
      << "    for (n = 0; n < " << count << "; ++n) { d[n] = d[n] - m; e[n] = pk_exp" << s
      << "(d[n]); }\n"
      << "    sum = pk_ordered_sum" << s << "(cx, e, " << count << ", " << partials_of(code.order)
      << ");\n";
  if (log) out << "    sum = pk_log" << s << "(sum);\n";
  out << "    n = 0;\n";
  const std::vector<std::string> r = open_loops(out, terms.extents, "r");
  out << "      " << code.result.name << "[base + " << offset_text(r, terms.strides)
      << "] = " << store(code.site, log ? "d[n] - sum" : "e[n] / sum") << ";\n      ++n;\n";
  close_loops(out, r.size());
  close_rows(out);
  out << "  pk_free(cx, d);\n  pk_free(cx, e);\n  }\n";
}

// Mean over positions of log(Σ exp(x − m)) − (x_target − m); both sums ordered.
void emit_cross_entropy(LetCode& code) {
  const CValue &logits = code.operands[0], &targets = code.operands[1];
  const int64_t classes = logits.shape.back(), positions = element_count(targets.shape);
  const std::string c = compute_type(code.site), s = math_suffix(code.site);
  const int64_t partials = partials_of(code.order);
  std::ostringstream& out = code.out;
  out << "  {\n  " << c << "* d = (" << c << "*)pk_alloc(cx, " << std::max<int64_t>(classes, 1)
      << " * sizeof(" << c << "));\n  " << c << "* losses = (" << c << "*)pk_alloc(cx, "
      << std::max<int64_t>(positions, 1) << " * sizeof(" << c << "));\n  " << c
      << " mean;\n  pk_index o, v;\n"
      << "  for (o = 0; o < " << positions << "; ++o) {\n"
      << "    const int64_t target = " << targets.name << "[o];\n    " << c
      << " m, shifted_target, sum;\n"
      << "    if (target < 0 || target >= " << classes
      << ") pk_fail(cx, \"cross_entropy target outside [0, " << classes << ")\");\n"
      << "    for (v = 0; v < " << classes << "; ++v) d[v] = "
      << load(logits.store, code.site, read_at(logits, "o * " + std::to_string(classes) + " + v"))
      << ";\n"
      << "    m = d[0];\n    for (v = 1; v < " << classes << "; ++v) m = pk_max_fold" << s
      << "(m, d[v]);\n"
      << "    for (v = 0; v < " << classes << "; ++v) d[v] = d[v] - m;\n"
      << "    shifted_target = d[target];\n"
      << "    for (v = 0; v < " << classes << "; ++v) d[v] = pk_exp" << s << "(d[v]);\n"
      << "    sum = pk_log" << s << "(pk_ordered_sum" << s << "(cx, d, " << classes << ", "
      << partials << "));\n"
      << "    losses[o] = sum - shifted_target;\n  }\n"
      << "  mean = pk_ordered_sum" << s << "(cx, losses, " << positions << ", " << partials
      << ") / (" << c << ")" << positions << ";\n"
      << "  for (o = 0; o < " << element_count(code.result.shape) << "; ++o) " << code.result.name
      << "[o] = " << store(code.site, "mean") << ";\n"
      << "  pk_free(cx, d);\n  pk_free(cx, losses);\n  }\n";
}

// C = Σ_k A·B per output element: c = +0, then c = fma(a, b, c) over the contracted letters in
// row-major order as A lists them (interleaved n: term t into chain t mod n, then the tree).
void emit_contract(LetCode& code) {
  const std::string& spec = code.let.attrs.spec;
  const size_t comma = spec.find(','), arrow = spec.find("->");
  if (comma == std::string::npos || arrow == std::string::npos)
    unsupported(code, "the contract spec `" + spec + "`");
  const std::string a = spec.substr(0, comma), b = spec.substr(comma + 1, arrow - comma - 1),
                    result = spec.substr(arrow + 2);
  const CValue &x = code.operands[0], &y = code.operands[1];
  const std::vector<int64_t> a_strides = row_strides(x.shape), b_strides = row_strides(y.shape);
  auto has = [](const std::string& letters, char ch) {
    return letters.find(ch) != std::string::npos;
  };
  std::string k_letters;
  for (char ch : a) {
    if (has(b, ch) && !has(result, ch)) k_letters += ch;
  }
  // A's and B's offsets as C text over the index variable of each letter (`e<code>`).
  std::string a_offset = "0", b_offset = "0";
  auto add = [&](char ch) {
    const std::string index =
        "e" + std::to_string(static_cast<int>(static_cast<unsigned char>(ch)));
    if (has(a, ch)) a_offset += " + " + index + " * " + std::to_string(a_strides[a.find(ch)]);
    if (has(b, ch)) b_offset += " + " + index + " * " + std::to_string(b_strides[b.find(ch)]);
    return index;
  };
  std::ostringstream& out = code.out;
  const std::string c = compute_type(code.site), fma = code.site == RealType::f64 ? "fma" : "fmaf";
  out << "  {\n  pk_index o = 0;\n";
  for (char ch : result) {
    const std::string index = add(ch);
    const int64_t extent = has(a, ch) ? x.shape[a.find(ch)] : y.shape[b.find(ch)];
    out << "  for (pk_index " << index << " = 0; " << index << " < " << extent << "; ++" << index
        << ")\n";
  }
  const int64_t terms = [&] {
    int64_t n = 1;
    for (char ch : k_letters) n *= x.shape[a.find(ch)];
    return n;
  }();
  const int64_t partials = partials_of(code.order),
                chains = std::min(partials, std::max<int64_t>(terms, 1));
  out << "  {\n    " << c << " p[" << chains << "];\n    pk_index t = 0, r;\n    for (r = 0; r < "
      << chains << "; ++r) p[r] = 0;\n";
  for (char ch : k_letters) {
    const std::string index = add(ch);
    out << "    for (pk_index " << index << " = 0; " << index << " < " << x.shape[a.find(ch)]
        << "; ++" << index << ")\n";
  }
  const std::string chain = partials > 1 ? "p[t % " + std::to_string(partials) + "]" : "p[0]";
  out << "    {\n      " << chain << " = " << fma << "("
      << load(x.store, code.site, read_at(x, a_offset)) << ", "
      << load(y.store, code.site, read_at(y, b_offset)) << ", " << chain
      << ");\n      ++t;\n    }\n"
      << "    (void)t;\n    " << code.result.name << "[o++] = "
      << store(code.site, partials > 1 ? "pk_combine" + math_suffix(code.site) + "(p, " +
                                             std::to_string(chains) + ")"
                                       : "p[0]")
      << ";\n  }\n  }\n";
}

}  // namespace presk::export_c
