// Adjoint rules of the elementwise ops. y is the let's value, ḡ its cotangent; operands
// that broadcast get their contribution summed back to their own shape.
#include "ad/rules.h"

namespace presk::ad::rules {
namespace {

ValueRef mul(RuleContext& c, ValueRef a, ValueRef b) { return c.build.binary(Op::mul, a, b); }
ValueRef div(RuleContext& c, ValueRef a, ValueRef b) { return c.build.binary(Op::div, a, b); }
ValueRef sub(RuleContext& c, ValueRef a, ValueRef b) { return c.build.binary(Op::sub, a, b); }
ValueRef zero(RuleContext& c) { return c.build.literal("0"); }

// ḡ·f'(x) for a unary op whose derivative is `derivative`.
void chain(RuleContext& c, ValueRef derivative) {
  if (c.wants(0)) c.contribute_broadcast(0, mul(c, c.cotangent, derivative));
}

// The weight of operand a in max(a, b) (or min with `wins` = lt): 1 where a wins, ½ on a
// tie, 0 where b wins. Ties split the cotangent evenly. max and min are IEEE maxNum/minNum,
// so a also wins where b is NaN (b ≠ b): max(a, NaN) = a, whose derivative in a is 1.
ValueRef winner_weight(RuleContext& c, ValueRef a, ValueRef b, Op wins) {
  ValueRef tie = c.build.emit(Op::where, {c.build.binary(Op::eq, a, b), c.build.literal("0.5"), zero(c)});
  ValueRef won = c.build.emit(Op::where, {c.build.binary(wins, a, b), c.build.literal("1"), tie});
  return c.build.emit(Op::where, {c.build.binary(Op::ne, b, b), c.build.literal("1"), won});
}

}  // namespace

// Sources, comparisons and iota: no operand takes a cotangent.
void none(RuleContext&) {}

// d/da (a + b) = 1, d/db (a + b) = 1
void add(RuleContext& c) {
  if (c.wants(0)) c.contribute_broadcast(0, c.cotangent);
  if (c.wants(1)) c.contribute_broadcast(1, c.cotangent);
}

// d/da (a − b) = 1, d/db (a − b) = −1
void sub(RuleContext& c) {
  if (c.wants(0)) c.contribute_broadcast(0, c.cotangent);
  if (c.wants(1)) c.contribute_broadcast(1, c.build.unary(Op::neg, c.cotangent));
}

// d/da (a·b) = b, d/db (a·b) = a
void mul(RuleContext& c) {
  if (c.wants(0)) c.contribute_broadcast(0, mul(c, c.cotangent, c.operands[1]));
  if (c.wants(1)) c.contribute_broadcast(1, mul(c, c.cotangent, c.operands[0]));
}

// d/da a/b = 1/b, d/db a/b = −a/b² = −y/b
void div(RuleContext& c) {
  if (c.wants(0)) c.contribute_broadcast(0, div(c, c.cotangent, c.operands[1]));
  if (c.wants(1)) {
    ValueRef quotient = div(c, mul(c, c.cotangent, c.value), c.operands[1]);
    c.contribute_broadcast(1, c.build.unary(Op::neg, quotient));
  }
}

// d/da max(a, b) = [a > b or b is NaN] + ½[a = b],
// d/db max(a, b) = [b > a or a is NaN] + ½[a = b]
void max(RuleContext& c) {
  if (c.wants(0)) c.contribute_broadcast(0, mul(c, c.cotangent, winner_weight(c, c.operands[0], c.operands[1], Op::gt)));
  if (c.wants(1)) c.contribute_broadcast(1, mul(c, c.cotangent, winner_weight(c, c.operands[1], c.operands[0], Op::gt)));
}

// d/da min(a, b) = [a < b or b is NaN] + ½[a = b],
// d/db min(a, b) = [b < a or a is NaN] + ½[a = b]
void min(RuleContext& c) {
  if (c.wants(0)) c.contribute_broadcast(0, mul(c, c.cotangent, winner_weight(c, c.operands[0], c.operands[1], Op::lt)));
  if (c.wants(1)) c.contribute_broadcast(1, mul(c, c.cotangent, winner_weight(c, c.operands[1], c.operands[0], Op::lt)));
}

// d/dx (−x) = −1
void neg(RuleContext& c) {
  if (c.wants(0)) c.contribute(0, c.build.unary(Op::neg, c.cotangent));
}

// d/dx |x| = sign(x) (0 at 0)
void abs(RuleContext& c) {
  ValueRef x = c.operands[0];
  ValueRef sign = sub(c, c.build.to_real(c.build.binary(Op::gt, x, zero(c))),
                      c.build.to_real(c.build.binary(Op::lt, x, zero(c))));
  chain(c, sign);
}

// d/dx eˣ = eˣ = y
void exp(RuleContext& c) { chain(c, c.value); }

// d/dx log x = 1/x
void log(RuleContext& c) {
  if (c.wants(0)) c.contribute(0, div(c, c.cotangent, c.operands[0]));
}

// d/dx √x = 1/(2√x) = 1/(y + y)
void sqrt(RuleContext& c) {
  if (c.wants(0)) c.contribute(0, div(c, c.cotangent, c.build.binary(Op::add, c.value, c.value)));
}

// d/dx x^(−1/2) = −½ x^(−3/2) = −½ y³
void rsqrt(RuleContext& c) {
  ValueRef cube = mul(c, mul(c, c.value, c.value), c.value);
  chain(c, mul(c, c.build.literal("-0.5"), cube));
}

// d/dx tanh x = 1 − tanh² x = 1 − y²
void tanh(RuleContext& c) {
  chain(c, sub(c, c.build.literal("1"), mul(c, c.value, c.value)));
}

// d/dx gelu_tanh(x): the op gelu_tanh_grad (½(1 + t) + ½x(1 − t²)·√(2/π)(1 + 3·0.044715x²))
void gelu_tanh(RuleContext& c) { chain(c, c.build.unary(Op::gelu_tanh_grad, c.operands[0])); }

// d/dx gelu_erf(x) = Φ(x) + x·φ(x): the op gelu_erf_grad
void gelu_erf(RuleContext& c) { chain(c, c.build.unary(Op::gelu_erf_grad, c.operands[0])); }

// d/dx erf(x) = 2/√π·e^(−x²): the op erf_grad
void erf(RuleContext& c) { chain(c, c.build.unary(Op::erf_grad, c.operands[0])); }

// d/dx sin x = cos x
void sin(RuleContext& c) { chain(c, c.build.unary(Op::cos, c.operands[0])); }

// d/dx cos x = −sin x
void cos(RuleContext& c) { chain(c, c.build.unary(Op::neg, c.build.unary(Op::sin, c.operands[0]))); }

// d/dx atan x = 1 / (1 + x²)
void atan(RuleContext& c) {
  const ValueRef x = c.operands[0];
  if (c.wants(0)) c.contribute(0, div(c, c.cotangent, c.build.binary(Op::add, c.build.literal("1"), mul(c, x, x))));
}

// d/dx relu(x) = [x > 0] (0 at 0)
void relu(RuleContext& c) {
  ValueRef positive = c.build.binary(Op::gt, c.operands[0], zero(c));
  if (c.wants(0)) c.contribute(0, c.build.emit(Op::where, {positive, c.cotangent, zero(c)}));
}

// d/da where(k, a, b) = [k], d/db where(k, a, b) = [¬k]
void where(RuleContext& c) {
  ValueRef k = c.operands[0];
  if (c.wants(1)) c.contribute_broadcast(1, c.build.emit(Op::where, {k, c.cotangent, zero(c)}));
  if (c.wants(2)) c.contribute_broadcast(2, c.build.emit(Op::where, {k, zero(c), c.cotangent}));
}

// d/dx convert(x) = 1 for R → R; Z and B operands take no cotangent
void convert(RuleContext& c) {
  if (c.wants(0)) c.contribute(0, c.cotangent);
}

// dropout(x) = m ⊙ x / (1 − rate) with a keep-mask m that depends on its key, never on x, so
// d/dx dropout(x) = diag(m) / (1 − rate): x̄ = dropout(ḡ), the same op with the same attributes.
// Its id (attrs.path) and the call context it runs in give it the forward's mask; outside
// training both are the identity.
void dropout(RuleContext& c) {
  if (c.wants(0)) c.contribute(0, c.build.emit(Op::dropout, {c.cotangent}, c.let.attrs));
}

}  // namespace presk::ad::rules
