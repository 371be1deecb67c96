// Sources (literal, iota) and the elementwise ops, with numpy broadcasting. Every real result
// is correctly rounded at the working precision (MPFR) or enclosed (Arb); the composite
// activations (gelu_tanh, gelu_erf) round at each step of the formula written beside them.
#include <charconv>

#include "exec/reference/arith_ball.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/ops.h"
#include "exec/reference/ziv.h"
#include "ir/integer_overflow.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {

using ir::Op;

// Constants of the composite activations, each correctly rounded once per let.
template <class A>
struct ActivationConstants {
  typename A::Buffer numbers;  // 0, 1, 0.044715, √(2/π), √2
  explicit ActivationConstants(const A& arith) : numbers(arith.allocate(5)) {
    auto* n = numbers.data();
    arith.set_zero(&n[0]);
    arith.set_int(&n[1], 1);
    internal_assert(arith.set_decimal(&n[2], "0.044715"));
    arith.pi(&n[3]);
    arith.div(&n[3], &n[1], &n[3]);        // 1/π
    arith.scale_2exp(&n[3], &n[3], 1);     // 2/π, exact
    arith.sqrt(&n[3], &n[3]);              // √(2/π)
    arith.set_int(&n[4], 2);
    arith.sqrt(&n[4], &n[4]);              // √2
  }
  const typename A::Number* zero() const { return numbers.data(); }
  const typename A::Number* one() const { return numbers.data() + 1; }
  const typename A::Number* cubic() const { return numbers.data() + 2; }
  const typename A::Number* sqrt_2_over_pi() const { return numbers.data() + 3; }
  const typename A::Number* sqrt_2() const { return numbers.data() + 4; }
};

// gelu_tanh(x) = x/2 · (1 + tanh(√(2/π)·(x + 0.044715·x³))), rounded at each step.
template <class A, class N>
void gelu_tanh(const A& a, const ActivationConstants<A>& c, N* r, const N* x, N* t) {
  a.mul(t, x, x);
  a.mul(t, t, x);                  // x³
  a.mul(t, c.cubic(), t);
  a.add(t, x, t);
  a.mul(t, c.sqrt_2_over_pi(), t);
  elementary(a, Elementary::Tanh, t, t);
  a.add(t, c.one(), t);
  a.mul(t, x, t);
  a.scale_2exp(r, t, -1);          // exact
}

// gelu_erf(x) = x/2 · (1 + erf(x/√2)), rounded at each step.
template <class A, class N>
void gelu_erf(const A& a, const ActivationConstants<A>& c, N* r, const N* x, N* t) {
  a.div(t, x, c.sqrt_2());
  a.erf(t, t);
  a.add(t, c.one(), t);
  a.mul(t, x, t);
  a.scale_2exp(r, t, -1);          // exact
}

// gelu_tanh_grad(x) = ½(1 + t) + ½x(1 − t²)·√(2/π)(1 + 3·0.044715x²), t = tanh(√(2/π)(x +
// 0.044715x³)): the derivative of gelu_tanh (src/ad/), rounded at each step; t[0..2] scratch.
template <class A, class N>
void gelu_tanh_grad(const A& a, const ActivationConstants<A>& c, N* r, const N* x, N* t) {
  a.mul(&t[0], x, x);                       // x²
  a.mul(&t[1], c.cubic(), &t[0]);           // 0.044715x²
  a.mul(&t[2], x, &t[1]);
  a.add(&t[2], x, &t[2]);
  a.mul(&t[2], c.sqrt_2_over_pi(), &t[2]);
  elementary(a, Elementary::Tanh, &t[2], &t[2]);  // t
  a.add(r, &t[1], &t[1]);
  a.add(&t[1], r, &t[1]);
  a.add(&t[1], c.one(), &t[1]);             // 1 + 3·0.044715x²
  a.mul(&t[1], c.sqrt_2_over_pi(), &t[1]);
  a.mul(&t[1], x, &t[1]);
  a.mul(&t[0], &t[2], &t[2]);
  a.sub(&t[0], c.one(), &t[0]);             // 1 − t²
  a.mul(&t[1], &t[1], &t[0]);
  a.add(&t[2], c.one(), &t[2]);
  a.add(r, &t[2], &t[1]);
  a.scale_2exp(r, r, -1);                   // exact
}

// gelu_erf_grad(x) = ½(1 + erf(x/√2)) + x·e^(−x²/2)/√(2π): the derivative of gelu_erf,
// rounded at each step (1/√(2π) = √(2/π)/2); t[0..1] scratch.
template <class A, class N>
void gelu_erf_grad(const A& a, const ActivationConstants<A>& c, N* r, const N* x, N* t) {
  a.div(&t[0], x, c.sqrt_2());
  a.erf(&t[0], &t[0]);
  a.add(&t[0], c.one(), &t[0]);             // 1 + erf(x/√2)
  a.mul(&t[1], x, x);
  a.scale_2exp(&t[1], &t[1], -1);
  a.neg(&t[1], &t[1]);
  elementary(a, Elementary::Exp, &t[1], &t[1]);  // e^(−x²/2)
  a.mul(&t[1], c.sqrt_2_over_pi(), &t[1]);
  a.mul(&t[1], x, &t[1]);                   // 2x·φ(x)
  a.add(r, &t[0], &t[1]);
  a.scale_2exp(r, r, -1);                   // exact
}

// erf_grad(x) = 2/√π · e^(−x²) = √(2/π)·√2 · e^(−x²): the derivative of erf, rounded at each step.
template <class A, class N>
void erf_grad(const A& a, const ActivationConstants<A>& c, N* r, const N* x, N* t) {
  a.mul(t, x, x);
  a.neg(t, t);
  elementary(a, Elementary::Exp, t, t);  // e^(−x²)
  a.mul(t, c.sqrt_2_over_pi(), t);
  a.mul(r, c.sqrt_2(), t);
}

// One real unary op; `t` is scratch (three numbers).
template <class A, class N>
void real_unary(const A& a, const ActivationConstants<A>& c, Op op, N* r, const N* x, N* t) {
  switch (op) {
    case Op::neg: a.neg(r, x); return;
    case Op::abs: a.abs(r, x); return;
    case Op::exp: elementary(a, Elementary::Exp, r, x); return;
    case Op::log: elementary(a, Elementary::Log, r, x); return;
    case Op::sqrt: a.sqrt(r, x); return;
    case Op::rsqrt: a.rsqrt(r, x); return;   // 1/√x, one rounding
    case Op::tanh: elementary(a, Elementary::Tanh, r, x); return;
    case Op::relu: a.max(r, x, c.zero()); return;
    case Op::gelu_tanh: gelu_tanh(a, c, r, x, t); return;
    case Op::gelu_erf: gelu_erf(a, c, r, x, t); return;
    case Op::erf: a.erf(r, x); return;
    case Op::sin: a.sin(r, x); return;
    case Op::cos: a.cos(r, x); return;
    case Op::atan: a.atan(r, x); return;
    case Op::round: a.round(r, x, Rounding::nearest_integer); return;
    case Op::floor: a.round(r, x, Rounding::floor); return;
    case Op::ceil: a.round(r, x, Rounding::ceil); return;
    case Op::round_f16: a.round(r, x, Rounding::binary16); return;
    case Op::round_bf16: a.round(r, x, Rounding::bfloat16); return;
    case Op::erf_grad: erf_grad(a, c, r, x, t); return;
    case Op::gelu_tanh_grad: gelu_tanh_grad(a, c, r, x, t); return;
    case Op::gelu_erf_grad: gelu_erf_grad(a, c, r, x, t); return;
    case Op::dropout: a.set(r, x); return;    // outside training: the identity (eval_dropout in training)
    case Op::convert: a.set(r, x); return;
    default: internal_assert(false && "not a real unary op");
  }
}

template <class A, class N>
void real_binary(const A& a, Op op, N* r, const N* x, const N* y) {
  switch (op) {
    case Op::add: a.add(r, x, y); return;
    case Op::sub: a.sub(r, x, y); return;
    case Op::mul: a.mul(r, x, y); return;
    case Op::div: a.div(r, x, y); return;
    case Op::max: a.max(r, x, y); return;
    case Op::min: a.min(r, x, y); return;
    default: internal_assert(false && "not a real binary op");
  }
}

// Z arithmetic is exact: a result outside int64's range is the user error E0550, never a
// wrapped (or saturated) value; the native executor raises E0670 for the same lets.
[[noreturn]] void integer_overflow(const ir::Let& let, int64_t x, int64_t y, bool binary) {
  const std::string operands = std::to_string(x) + (binary ? " and " + std::to_string(y) : "");
  const ir::IntegerOverflowText text = ir::integer_overflow_text(let, "`" + std::string(ir::op_name(let.op)) + "` of " + operands);
  user_error("E0550", let.span).hint(text.hint) << text.message;
}

int64_t integer_unary(const ir::Let& let, int64_t x) {
  int64_t r = 0;
  switch (let.op) {
    case Op::neg:
    case Op::abs:
      if (x == INT64_MIN) integer_overflow(let, x, 0, false);
      return let.op == Op::neg || x < 0 ? -x : x;
    case Op::relu: return x > 0 ? x : 0;
    case Op::dropout: return x;
    case Op::convert: return x;
    default: internal_assert(false && "not an integer unary op");
  }
  return r;
}

int64_t integer_binary(const ir::Let& let, int64_t x, int64_t y) {
  int64_t r = 0;
  bool overflow = false;
  switch (let.op) {
    case Op::add: overflow = __builtin_add_overflow(x, y, &r); break;
    case Op::sub: overflow = __builtin_sub_overflow(x, y, &r); break;
    case Op::mul: overflow = __builtin_mul_overflow(x, y, &r); break;
    case Op::max: return x > y ? x : y;
    case Op::min: return x < y ? x : y;
    default: internal_assert(false && "not an integer binary op");
  }
  if (overflow) integer_overflow(let, x, y, true);
  return r;
}

static_assert(MpfrArith::kUnordered == BallArith::kUnordered);

// A comparison from the order of its operands (−1, 0, +1, or unordered: a NaN operand, where
// only ≠ holds, as IEEE 754 defines).
bool compare_holds(Op op, int order) {
  if (order == MpfrArith::kUnordered) return op == Op::ne;
  switch (op) {
    case Op::lt: return order < 0;
    case Op::le: return order <= 0;
    case Op::gt: return order > 0;
    case Op::ge: return order >= 0;
    case Op::eq: return order == 0;
    case Op::ne: return order != 0;
    default: internal_assert(false && "not a comparison");
  }
  return false;
}

bool is_comparison(Op op) {
  return op == Op::lt || op == Op::le || op == Op::gt || op == Op::ge || op == Op::eq ||
         op == Op::ne;
}

template <class A>
Value<A> unary(const A& a, const ir::Let& let, const Value<A>& x) {
  if (let.type.kind != ir::ElemKind::Real) {
    Value<A> out = Value<A>::make_integer(let.type.kind, let.type.shape);
    for (int64_t i = 0; i < out.size(); ++i) out.integers[i] = integer_unary(let, x.integers[i]);
    return out;
  }
  Value<A> out = Value<A>::make_real(a, let.type.shape);
  if (!x.is_real()) {  // convert: Z → R exactly (|z| < 2^bits), B → R as 0/1
    for (int64_t i = 0; i < out.size(); ++i) a.set_int(out.real(i), x.integers[i]);
    return out;
  }
  ActivationConstants<A> constants(a);
  parallel_chunks(out.size(), 64, [&](int64_t begin, int64_t end) {
    typename A::Buffer scratch = a.allocate(3);
    for (int64_t i = begin; i < end; ++i) {
      real_unary(a, constants, let.op, out.real(i), x.real(i), scratch.data());
    }
  });
  return out;
}

template <class A>
Value<A> binary(const A& a, const ir::Let& let, const Value<A>& x, const Value<A>& y) {
  BroadcastMap at_x(let.type.shape, x.shape), at_y(let.type.shape, y.shape);
  if (is_comparison(let.op)) {
    Value<A> out = Value<A>::make_integer(ir::ElemKind::Bool, let.type.shape);
    for (int64_t i = 0; i < out.size(); ++i) {
      int order = 0;
      if (x.is_real()) {
        order = a.compare(x.real(at_x(i)), y.real(at_y(i)));
      } else {
        int64_t u = x.integers[at_x(i)], v = y.integers[at_y(i)];
        order = u < v ? -1 : (u > v ? 1 : 0);
      }
      out.integers[i] = compare_holds(let.op, order) ? 1 : 0;
    }
    return out;
  }
  if (let.type.kind != ir::ElemKind::Real) {
    Value<A> out = Value<A>::make_integer(let.type.kind, let.type.shape);
    for (int64_t i = 0; i < out.size(); ++i) {
      out.integers[i] = integer_binary(let, x.integers[at_x(i)], y.integers[at_y(i)]);
    }
    return out;
  }
  Value<A> out = Value<A>::make_real(a, let.type.shape);
  parallel_chunks(out.size(), 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      real_binary(a, let.op, out.real(i), x.real(at_x(i)), y.real(at_y(i)));
    }
  });
  return out;
}

// where(cond, a, b): a where cond holds, b elsewhere; no arithmetic.
template <class A>
Value<A> where(const A& a, const ir::Let& let, const Value<A>& c, const Value<A>& x,
               const Value<A>& y) {
  BroadcastMap at_c(let.type.shape, c.shape), at_x(let.type.shape, x.shape),
      at_y(let.type.shape, y.shape);
  if (let.type.kind != ir::ElemKind::Real) {
    Value<A> out = Value<A>::make_integer(let.type.kind, let.type.shape);
    for (int64_t i = 0; i < out.size(); ++i) {
      out.integers[i] = c.integers[at_c(i)] ? x.integers[at_x(i)] : y.integers[at_y(i)];
    }
    return out;
  }
  Value<A> out = Value<A>::make_real(a, let.type.shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    a.set(out.real(i), c.integers[at_c(i)] ? x.real(at_x(i)) : y.real(at_y(i)));
  }
  return out;
}

}  // namespace

template <class A>
Value<A> eval_literal(const A& arith, const ir::Let& let) {
  const std::string& text = let.attrs.literal;
  if (let.type.kind != ir::ElemKind::Real) {
    Value<A> out = Value<A>::make_integer(let.type.kind, let.type.shape);
    int64_t number = text == "true" ? 1 : 0;  // B; a Z literal lies within int64 (the verifier checked it)
    if (text != "true" && text != "false") {
      internal_assert(std::from_chars(text.data(), text.data() + text.size(), number).ec == std::errc());
    }
    for (int64_t& v : out.integers) v = number;
    return out;
  }
  Value<A> out = Value<A>::make_real(arith, let.type.shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    if (!arith.set_decimal(out.real(i), text)) {
      user_error("E0503", let.span) << "the literal `" << text << "` is not a decimal number";
    }
  }
  return out;
}

template <class A>
Value<A> eval_iota(const A&, const ir::Let& let) {
  internal_assert(let.type.kind != ir::ElemKind::Real);
  Value<A> out = Value<A>::make_integer(let.type.kind, let.type.shape);
  int64_t axis = single_axis(let, let.type.rank());
  Shape strides = row_major_strides(let.type.shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    out.integers[i] = (i / strides[axis]) % let.type.shape[axis];
  }
  return out;
}

template <class A>
Value<A> eval_elementwise(const A& arith, const ir::Let& let, Operands<A> in) {
  if (let.op == Op::where) return where(arith, let, *in[0], *in[1], *in[2]);
  if (in.size() == 2) return binary(arith, let, *in[0], *in[1]);
  internal_assert(in.size() == 1);
  return unary(arith, let, *in[0]);
}

// dropout in training: y_i = x_i / (1 − rate) where the mask keeps element i, y_i = +0 where it
// drops it; 1 − rate and the quotient are each rounded at the working precision (1 − rate is
// exact from 57 bits on for rate 0.1, from 53 for rates in [½, 1)). The mask never depends on
// x (support/dropout_mask.h).
template <class A>
Value<A> eval_dropout(const A& a, const ir::Let& let, const Value<A>& x, const random::DropoutMask& mask) {
  internal_assert(x.is_real() && x.shape == let.type.shape);
  Value<A> out = Value<A>::make_real(a, let.type.shape);
  typename A::Buffer scratch = a.allocate(2);
  auto* divisor = scratch.data();
  a.set_double(&divisor[0], 1.0);
  a.set_double(&divisor[1], mask.rate());
  a.sub(&divisor[0], &divisor[0], &divisor[1]);  // 1 − rate
  parallel_chunks(out.size(), 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (mask.keep(static_cast<uint64_t>(i))) {
        a.div(out.real(i), x.real(i), &divisor[0]);
      } else {
        a.set_zero(out.real(i));
      }
    }
  });
  return out;
}

template Value<MpfrArith> eval_literal(const MpfrArith&, const ir::Let&);
template Value<BallArith> eval_literal(const BallArith&, const ir::Let&);
template Value<MpfrArith> eval_iota(const MpfrArith&, const ir::Let&);
template Value<BallArith> eval_iota(const BallArith&, const ir::Let&);
template Value<MpfrArith> eval_elementwise(const MpfrArith&, const ir::Let&, Operands<MpfrArith>);
template Value<BallArith> eval_elementwise(const BallArith&, const ir::Let&, Operands<BallArith>);
template Value<MpfrArith> eval_dropout(const MpfrArith&, const ir::Let&, const Value<MpfrArith>&,
                                       const random::DropoutMask&);
template Value<BallArith> eval_dropout(const BallArith&, const ir::Let&, const Value<BallArith>&,
                                       const random::DropoutMask&);

}  // namespace presk::reference
