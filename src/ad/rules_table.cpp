// The rule table: every op of ops.def with its adjoint rule, or none (an op the generator
// cannot differentiate through: a user error E0800 naming it when a cotangent reaches it).
#include <array>

#include "ad/rules.h"
#include "support/diagnostics.h"

namespace presk::ad {
namespace {

struct Entry {
  Op op;
  Rule rule;
};

constexpr Entry kTable[] = {
    {Op::literal, rules::none},    {Op::param, rules::param},
    {Op::iota, rules::none},       {Op::add, rules::add},
    {Op::sub, rules::sub},         {Op::mul, rules::mul},
    {Op::div, rules::div},         {Op::max, rules::max},
    {Op::min, rules::min},         {Op::neg, rules::neg},
    {Op::abs, rules::abs},         {Op::exp, rules::exp},
    {Op::log, rules::log},         {Op::sqrt, rules::sqrt},
    {Op::rsqrt, rules::rsqrt},     {Op::tanh, rules::tanh},
    {Op::gelu_tanh, rules::gelu_tanh}, {Op::gelu_erf, rules::gelu_erf}, {Op::erf, rules::erf},
    {Op::sin, rules::sin},         {Op::cos, rules::cos},         {Op::atan, rules::atan},
    // The roundings: derivative 0 almost everywhere.
    {Op::round, rules::none},      {Op::floor, rules::none},
    {Op::ceil, rules::none},       {Op::round_f16, rules::none},
    {Op::round_bf16, rules::none},
    {Op::relu, rules::relu},       {Op::lt, rules::none},
    {Op::le, rules::none},         {Op::gt, rules::none},
    {Op::ge, rules::none},         {Op::eq, rules::none},
    {Op::ne, rules::none},         {Op::where, rules::where},
    {Op::convert, rules::convert}, {Op::sum, rules::sum},
    {Op::mean, rules::mean},       {Op::reduce_max, rules::reduce_max},
    {Op::contract, rules::contract}, {Op::softmax, rules::softmax},
    {Op::log_softmax, rules::log_softmax}, {Op::embed, rules::embed},
    {Op::reshape, rules::reshape}, {Op::transpose, rules::transpose},
    {Op::slice, rules::slice},     {Op::concat, rules::concat},
    {Op::broadcast, rules::broadcast}, {Op::causal_mask, rules::causal_mask},
    {Op::dropout, rules::dropout}, {Op::cross_entropy, rules::cross_entropy},
    {Op::call, rules::call},       {Op::fold, rules::fold},
    // No rule (second-order differentiation): gelu_tanh_grad, gelu_erf_grad, erf_grad, get,
    // fold_trace, fold_vjp.
};
static_assert(std::size(kTable) + 6 == static_cast<size_t>(Op::fold_vjp) + 1,
              "every op of ops.def has a rule or is listed as having none");

}  // namespace

Rule find_rule(Op op) {
  for (const Entry& entry : kTable) {
    if (entry.op == op) return entry.rule;
  }
  return nullptr;
}

void accumulate(Builder& build, std::optional<ValueRef>& slot, ValueRef contribution) {
  slot = slot ? build.binary(Op::add, *slot, contribution) : contribution;
}

bool RuleContext::wants(size_t i) const {
  ValueRef operand = operands[i];
  if (build.type_of(operand).kind != ir::ElemKind::Real) return false;
  return operand.kind == ValueRef::Kind::Argument ||
         build.function().lets[operand.index].op != Op::literal;
}

void RuleContext::contribute(size_t i, ValueRef contribution) const {
  internal_assert(build.type_of(contribution) == build.type_of(operands[i]));
  ValueRef operand = let.operands[i];
  auto& slots = operand.kind == ValueRef::Kind::Argument ? adjoints.of_argument : adjoints.of_let;
  accumulate(build, slots[operand.index], contribution);
}

void RuleContext::contribute_broadcast(size_t i, ValueRef contribution) const {
  contribute(i, build.sum_to(contribution, operand_type(i).shape));
}

void RuleContext::contribute_param(const std::string& path, ValueRef contribution) const {
  for (size_t k = 0; k < adjoints.param_paths.size(); ++k) {
    if (adjoints.param_paths[k] == path) return accumulate(build, adjoints.of_param[k], contribution);
  }
  internal_assert(false && "a parameter cotangent for a path the function does not read");
}

}  // namespace presk::ad
