// contract: an einsum over two operands (attrs.spec, e.g. "td,dv->tv"). Each output element
// is Σ xᵢ·wᵢ over the contracted indices (letters absent from the output) in row-major order,
// the contracted letters ordered by first appearance in the spec (x's letters, then w's).
// MPFR: the exact sum of the exact products, rounded once (fixed_dot.h, exact_dot.h; or by
// mpfr_dot under ContractionSums::MpfrDot); or, when the process selects
// ContractionSums::FmaChain, starting from an exact 0, each term added with one rounding,
// r ← ∘(xᵢwᵢ + r). Arb: the exact contraction of the midpoints and a bound on the rest
// (contract_ball.cpp), or, with a NaN or infinity about, the same terms enclosed by arb_dot. Output elements are independent and computed in
// parallel, each entirely by one thread, so the bits do not depend on --threads.
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "exec/reference/arith_ball.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/contract_exact.h"
#include "exec/reference/contraction_plan.h"
#include "exec/reference/exact_dot.h"
#include "exec/reference/fixed_dot.h"
#include "exec/reference/ops.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {

void note_operand(const std::string& letters, const Shape& shape, bool is_x,
                  std::vector<Letter>& seen) {
  internal_assert(letters.size() == shape.size());
  Shape strides = row_major_strides(shape);
  for (size_t i = 0; i < letters.size(); ++i) {
    Letter* letter = nullptr;
    for (Letter& l : seen) letter = l.name == letters[i] ? &l : letter;
    if (letter == nullptr) letter = &seen.emplace_back(Letter{letters[i]});
    letter->extent = shape[i];
    (is_x ? letter->x_stride : letter->w_stride) += strides[i];
  }
}

}  // namespace

ContractionPlan plan_contraction(const std::string& spec, const Shape& x, const Shape& w) {
  std::string text;
  for (char c : spec) if (c != ' ') text += c;
  size_t comma = text.find(','), arrow = text.find("->");
  internal_assert(comma != std::string::npos && arrow != std::string::npos && comma < arrow);
  std::vector<Letter> seen;
  note_operand(text.substr(0, comma), x, true, seen);
  note_operand(text.substr(comma + 1, arrow - comma - 1), w, false, seen);
  std::string out = text.substr(arrow + 2);
  ContractionPlan plan;
  for (char c : out) {
    for (const Letter& l : seen) if (l.name == c) plan.free.push_back(l);
  }
  internal_assert(plan.free.size() == out.size());
  for (const Letter& l : seen) {
    if (out.find(l.name) == std::string::npos) plan.contracted.push_back(l);
  }
  return plan;
}

void free_offsets(const ContractionPlan& plan, int64_t flat, int64_t& x, int64_t& w) {
  x = w = 0;
  for (size_t i = plan.free.size(); i-- > 0;) {
    int64_t index = flat % plan.free[i].extent;
    flat /= plan.free[i].extent;
    x += index * plan.free[i].x_stride;
    w += index * plan.free[i].w_stride;
  }
}

namespace {

// Output element `flat`'s statistics; x(i) and w(i) are the operands' elements as binary64.
template <class X, class W>
TermStatistics term_statistics(const ContractionPlan& plan, const X& x, const W& w, int64_t flat) {
  TermStatistics s;
  double squares = 0;
  int64_t x0 = 0, w0 = 0;
  free_offsets(plan, flat, x0, w0);
  for_each_run(plan, x0, w0, [&](int64_t xo, int64_t wo, const Letter& inner) {
    for (int64_t k = 0; k < inner.extent; ++k) {
      double u = x(xo + k * inner.x_stride);
      double v = w(wo + k * inner.w_stride);
      double term = u * v;
      s.sum_abs_terms += std::fabs(term);
      squares += term * term;
      s.operand_abs_sums[0] += std::fabs(u);
      s.operand_abs_sums[1] += std::fabs(v);
    }
  });
  s.root_sum_squares = std::sqrt(squares);
  return s;
}

template <class A>
TermStatistics term_statistics(const A& a, const ContractionPlan& plan, const Value<A>& x,
                               const Value<A>& w, int64_t flat) {
  return term_statistics(plan, [&](int64_t i) { return a.to_double(x.real(i)); },
                         [&](int64_t i) { return a.to_double(w.real(i)); }, flat);
}

}  // namespace

RowLayout row_layout(const ContractionPlan& plan, bool is_x) {
  auto stride = [&](const Letter& l) { return is_x ? l.x_stride : l.w_stride; };
  RowLayout layout;
  for_each_run(plan, 0, 0, [&](int64_t xo, int64_t wo, const Letter& inner) {
    for (int64_t k = 0; k < inner.extent; ++k) layout.offsets.push_back((is_x ? xo : wo) + k * stride(inner));
  });
  layout.row_strides.assign(plan.free.size(), 0);
  int64_t rows = 1;
  for (size_t i = plan.free.size(); i-- > 0;) {
    if (stride(plan.free[i]) == 0) continue;
    layout.row_strides[i] = rows;
    rows *= plan.free[i].extent;
  }
  layout.bases.assign(static_cast<size_t>(rows), 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rest = r;
    for (size_t i = plan.free.size(); i-- > 0;) {
      if (layout.row_strides[i] == 0) continue;
      layout.bases[r] += rest % plan.free[i].extent * stride(plan.free[i]);
      rest /= plan.free[i].extent;
    }
  }
  return layout;
}

namespace {

// One output element exactly, rounded once (exact_dot.h), from the operands as they are.
void exact_element(ExactDot& dot, const ContractionPlan& plan, const Value<MpfrArith>& x,
                   const Value<MpfrArith>& w, int64_t o, __mpfr_struct* r) {
  int64_t x0 = 0, w0 = 0;
  free_offsets(plan, o, x0, w0);
  auto run = [&](bool add) {
    for_each_run(plan, x0, w0, [&](int64_t xo, int64_t wo, const Letter& inner) {
      if (add) {
        dot.add(x.real(xo), inner.x_stride, w.real(wo), inner.w_stride, inner.extent);
      } else {
        dot.scan(x.real(xo), inner.x_stride, w.real(wo), inner.w_stride, inner.extent);
      }
    });
  };
  run(false);
  run(true);
  dot.finish(r);
}

}  // namespace

void contract_exact(const MpfrArith& arith, const ContractionPlan& plan,
                    const Value<MpfrArith>& x, const Value<MpfrArith>& w, Value<MpfrArith>& out) {
  const OutputAt at = [&](int64_t o) { return out.real(o); };
  std::vector<int64_t> rest;
  if (FixedRows::supports(arith.bits()) && x.size() > 0 && w.size() > 0) {
    PackedOperand pw = pack_operand(arith, plan, w, false, true);
    PackedOperand px = pack_operand(arith, plan, x, true, !pw.rows.binades());
    FixedRows::prepare_row_groups(pw.rows, px.rows);  // w's rows in groups against x's (output_block)
    rest = contract_fixed(plan, px, pw, out.size(), at);
  } else {
    rest.resize(static_cast<size_t>(out.size()));
    for (int64_t o = 0; o < out.size(); ++o) rest[static_cast<size_t>(o)] = o;
  }
  contract_exact_elements(arith, plan, x, w, rest, at);
}

namespace {

// Each output element by mpfr_dot, the definition (a zero sum is +0).
void contract_mpfr_dot(const ContractionPlan& plan, const Value<MpfrArith>& x, const Value<MpfrArith>& w,
                       Value<MpfrArith>& out) {
  parallel_chunks(out.size(), 8, [&](int64_t begin, int64_t end) {
    std::vector<mpfr_ptr> xs, ws;
    for (int64_t o = begin; o < end; ++o) {
      int64_t x0 = 0, w0 = 0;
      free_offsets(plan, o, x0, w0);
      xs.clear();
      ws.clear();
      for_each_run(plan, x0, w0, [&](int64_t xo, int64_t wo, const Letter& inner) {
        for (int64_t k = 0; k < inner.extent; ++k) {
          xs.push_back(const_cast<mpfr_ptr>(x.real(xo + k * inner.x_stride)));
          ws.push_back(const_cast<mpfr_ptr>(w.real(wo + k * inner.w_stride)));
        }
      });
      mpfr_ptr r = out.real(o);
      if (xs.empty()) {
        mpfr_set_zero(r, 1);
      } else {
        mpfr_dot(r, xs.data(), ws.data(), static_cast<unsigned long>(xs.size()), MPFR_RNDN);
      }
      if (mpfr_zero_p(r)) mpfr_set_zero(r, 1);
    }
  });
}

// Each output element term by term from +0 (dot_accumulate: the fma chain, or arb_dot).
template <class A>
void contract_chain(const A& arith, const ContractionPlan& plan, const Value<A>& x,
                    const Value<A>& w, Value<A>& out) {
  parallel_chunks(out.size(), 8, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      int64_t x0 = 0, w0 = 0;
      free_offsets(plan, o, x0, w0);
      arith.set_zero(out.real(o));
      for_each_run(plan, x0, w0, [&](int64_t xo, int64_t wo, const Letter& inner) {
        arith.dot_accumulate(out.real(o), x.real(xo), inner.x_stride, w.real(wo), inner.w_stride,
                             inner.extent);
      });
    }
  });
}

}  // namespace

std::pair<int64_t, int64_t> rows_of(const ContractionPlan& plan, const std::vector<int64_t>& x_row_strides,
                                    const std::vector<int64_t>& w_row_strides, int64_t o) {
  int64_t xr = 0, wr = 0;
  for (size_t i = plan.free.size(); i-- > 0;) {
    const int64_t index = o % plan.free[i].extent;
    o /= plan.free[i].extent;
    xr += index * x_row_strides[i];
    wr += index * w_row_strides[i];
  }
  return {xr, wr};
}

PackedOperand pack_operand(const MpfrArith& arith, const ContractionPlan& plan, const Value<MpfrArith>& v,
                           bool is_x, bool binades) {
  RowLayout layout = row_layout(plan, is_x);
  return PackedOperand{FixedRows(arith.bits(), v.real(0), layout.bases, layout.offsets, binades),
                       std::move(layout.row_strides)};
}

PackedOperand pack_operand(long bits, const ContractionPlan& plan, const double* values, bool is_x) {
  RowLayout layout = row_layout(plan, is_x);
  return PackedOperand{FixedRows(bits, values, layout.bases, layout.offsets), std::move(layout.row_strides)};
}

namespace {

// The outputs a row of the operand in binades at a time (a stable counting sort), so that the
// row's entries stay in cache while every row of the other operand reads them: the outputs of
// that operand's row r are order[start[r] … start[r + 1]), and output o's rows are rows[o].
struct RowOrder {
  std::vector<int64_t> order, start;
  std::vector<std::pair<int64_t, int64_t>> rows;  // (x's row, w's row)
};
RowOrder binade_row_order(const ContractionPlan& plan, const PackedOperand& x, const PackedOperand& w,
                          int64_t count) {
  const bool by_w = w.rows.binades();
  RowOrder out{std::vector<int64_t>(static_cast<size_t>(count)),
               std::vector<int64_t>(static_cast<size_t>((by_w ? w : x).rows.row_count()) + 1, 0),
               std::vector<std::pair<int64_t, int64_t>>(static_cast<size_t>(count))};
  auto key = [&](int64_t o) { return static_cast<size_t>(by_w ? out.rows[static_cast<size_t>(o)].second
                                                               : out.rows[static_cast<size_t>(o)].first); };
  for (int64_t o = 0; o < count; ++o) {
    out.rows[static_cast<size_t>(o)] = rows_of(plan, x.row_strides, w.row_strides, o);
    ++out.start[key(o) + 1];
  }
  for (size_t r = 1; r < out.start.size(); ++r) out.start[r] += out.start[r - 1];
  std::vector<int64_t> next(out.start.begin(), out.start.end() - 1);
  for (int64_t o = 0; o < count; ++o) out.order[static_cast<size_t>(next[key(o)]++)] = o;
  return out;
}

// The outputs of one binade row, outputs[0, n): where the group kernel applies, each run of a
// whole group of x's rows (8·g, 8·g + 1, … in order) at once, the others one by one.
void binade_row_outputs(const RowOrder& order, const PackedOperand& x, const PackedOperand& w, const int64_t* outputs,
                        int64_t n, bool groups, const OutputAt& out, uint8_t* decided) {
  constexpr int64_t kGroup = FixedRows::kGroup;
  const int64_t x_rows = x.rows.row_count();
  auto rows = [&](int64_t i) { return order.rows[static_cast<size_t>(outputs[i])]; };
  for (int64_t i = 0; i < n;) {
    const auto [xr, wr] = rows(i);
    const int64_t size = std::min(kGroup, x_rows - xr);
    bool run = groups && xr % kGroup == 0 && i + size <= n;
    for (int64_t j = 1; run && j < size; ++j) run = rows(i + j) == std::pair{xr + j, wr};
    if (!run) {
      decided[outputs[i]] = FixedRows::dot(x.rows, xr, w.rows, wr, out(outputs[i])) ? 1 : 0;
      ++i;
      continue;
    }
    std::array<__mpfr_struct*, kGroup> r{};
    std::array<bool, kGroup> ok{};
    for (int64_t j = 0; j < size; ++j) r[static_cast<size_t>(j)] = out(outputs[i + j]);
    FixedRows::dot_group(x.rows, xr / kGroup, w.rows, wr, r.data(), ok.data());
    for (int64_t j = 0; j < size; ++j) decided[outputs[i + j]] = ok[static_cast<size_t>(j)] ? 1 : 0;
    i += size;
  }
}

// Outputs [first, last), both operands in rows: where the group kernel applies (activations
// of 3 limbs at ≤ 128 bits, prepare_row_groups(w, x)), each run of at least half a group of
// w's rows against one x row, consecutive in the outputs as where w's free letters are
// innermost (x @ w, q·kᵀ, att·v), at once (the sum is symmetric: w's rows take the digits'
// place); the others one by one.
void output_block(const ContractionPlan& plan, const PackedOperand& x, const PackedOperand& w, int64_t first,
                  int64_t last, bool groups, const OutputAt& out, uint8_t* decided) {
  constexpr int64_t kGroup = FixedRows::kGroup;
  std::array<std::pair<int64_t, int64_t>, kGroup> rows;
  for (int64_t o = first; o < last; ++o) rows[static_cast<size_t>(o - first)] = rows_of(plan, x.row_strides, w.row_strides, o);
  for (int64_t i = 0; i < last - first;) {
    const auto [xr, wr] = rows[static_cast<size_t>(i)];
    int64_t stop = i + 1;
    while (groups && stop < last - first && rows[static_cast<size_t>(stop)] == std::pair{xr, wr + (stop - i)} &&
           (wr + (stop - i)) / kGroup == wr / kGroup) {
      ++stop;
    }
    if (stop - i < kGroup / 2) {
      decided[first + i] = FixedRows::dot(x.rows, xr, w.rows, wr, out(first + i)) ? 1 : 0;
      ++i;
      continue;
    }
    std::array<__mpfr_struct*, kGroup> r{};
    std::array<bool, kGroup> ok{};
    for (int64_t p = i; p < stop; ++p) r[static_cast<size_t>((wr + p - i) % kGroup)] = out(first + p);
    FixedRows::dot_group(w.rows, wr / kGroup, x.rows, xr, r.data(), ok.data());
    for (int64_t p = i; p < stop; ++p) decided[first + p] = ok[static_cast<size_t>((wr + p - i) % kGroup)] ? 1 : 0;
    i = stop;
  }
}

}  // namespace

std::vector<int64_t> contract_fixed(const ContractionPlan& plan, const PackedOperand& x, const PackedOperand& w,
                                    int64_t count, const OutputAt& out) {
  std::vector<uint8_t> decided(static_cast<size_t>(count), 0);
  if (x.rows.binades() || w.rows.binades()) {
    const RowOrder rows = binade_row_order(plan, x, w, count);
    const bool groups = FixedRows::group_ready(x.rows, w.rows);
    parallel_chunks(static_cast<int64_t>(rows.start.size()) - 1, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        binade_row_outputs(rows, x, w, rows.order.data() + rows.start[r], rows.start[r + 1] - rows.start[r], groups, out,
                           decided.data());
      }
    });
  } else {
    const bool groups = FixedRows::group_ready(w.rows, x.rows);
    constexpr int64_t kGroup = FixedRows::kGroup;
    parallel_chunks((count + kGroup - 1) / kGroup, 1, [&](int64_t begin, int64_t end) {
      for (int64_t block = begin; block < end; ++block) {
        output_block(plan, x, w, block * kGroup, std::min(count, (block + 1) * kGroup), groups, out, decided.data());
      }
    });
  }
  std::vector<int64_t> others;
  for (int64_t o = 0; o < count; ++o) {
    if (decided[static_cast<size_t>(o)] == 0) others.push_back(o);
  }
  return others;
}

void contract_exact_elements(const MpfrArith& arith, const ContractionPlan& plan, const Value<MpfrArith>& x,
                             const Value<MpfrArith>& w, const std::vector<int64_t>& which, const OutputAt& out) {
  parallel_chunks(static_cast<int64_t>(which.size()), 8, [&](int64_t begin, int64_t end) {
    ExactDot dot(arith.bits());
    for (int64_t i = begin; i < end; ++i) exact_element(dot, plan, x, w, which[static_cast<size_t>(i)], out(which[static_cast<size_t>(i)]));
  });
}

template <class A>
Value<A> eval_contract(const A& arith, const ir::Let& let, const Value<A>& x, const Value<A>& w,
                       std::vector<TermStatistics>* terms) {
  if (x.is_in_place() || w.is_in_place()) return contract_in_place(arith, let, x, w, terms);
  ContractionPlan plan = plan_contraction(let.attrs.spec, x.shape, w.shape);
  Value<A> out = Value<A>::make_real(arith, let.type.shape);
  bool exact = false;
  if constexpr (std::is_same_v<A, MpfrArith>) {
    ContractionSums sums = contraction_sums();
    exact = sums != ContractionSums::FmaChain;
    if (sums == ContractionSums::Exact) contract_exact(arith, plan, x, w, out);
    if (sums == ContractionSums::MpfrDot) contract_mpfr_dot(plan, x, w, out);
  }
  if constexpr (std::is_same_v<A, BallArith>) exact = contract_ball(arith, plan, x, w, out);
  if (!exact) contract_chain(arith, plan, x, w, out);
  if (terms != nullptr) {
    terms->resize(static_cast<size_t>(out.size()));
    for (int64_t o = 0; o < out.size(); ++o) (*terms)[o] = term_statistics(arith, plan, x, w, o);
  }
  return out;
}

std::vector<TermStatistics> binary64_contraction_terms(const ir::Let& let, const std::vector<int64_t>& x_shape,
                                                       const double* x, const std::vector<int64_t>& w_shape,
                                                       const double* w) {
  ContractionPlan plan = plan_contraction(let.attrs.spec, x_shape, w_shape);
  std::vector<TermStatistics> terms(static_cast<size_t>(let.type.element_count()));
  parallel_chunks(static_cast<int64_t>(terms.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      terms[o] = term_statistics(plan, [x](int64_t i) { return x[i]; }, [w](int64_t i) { return w[i]; }, o);
    }
  });
  return terms;
}

template Value<MpfrArith> eval_contract(const MpfrArith&, const ir::Let&, const Value<MpfrArith>&,
                                        const Value<MpfrArith>&, std::vector<TermStatistics>*);
template Value<BallArith> eval_contract(const BallArith&, const ir::Let&, const Value<BallArith>&,
                                        const Value<BallArith>&, std::vector<TermStatistics>*);

}  // namespace presk::reference
