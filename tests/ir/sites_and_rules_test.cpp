// The site table (names, counts, totals) and the shared typing rules (ir/type_rules.h).
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/sites.h"
#include "ir/type_rules.h"

namespace presk::ir {
namespace {

using namespace testing;

TEST(Sites, NamesEveryLetByFunctionAndNumber) {
  std::vector<Site> sites = site_table(sample_program());
  ASSERT_EQ(sites.size(), 12u + 5u + 6u + 4u);
  EXPECT_EQ(sites[4].name, "LayerNorm.apply/%4");
  EXPECT_EQ(sites[4].op, Op::literal);
  EXPECT_EQ(sites[4].element_count, 1);
  EXPECT_EQ(sites[12].name, "Block.apply/%0");
  EXPECT_EQ(sites.back().name, "loss/%3");
  EXPECT_EQ(sites[0].element_count, 8);
}

TEST(Sites, PrintsAlignedColumnsAndTotals) {
  std::string text = print_site_table(sample_program());
  EXPECT_NE(text.find("LayerNorm.apply/%0   mean"), std::string::npos) << text;
  EXPECT_NE(text.find("blocks.w     R[2, 4, 4]        32      1  normal(0.1)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("totals: 27 sites, "), std::string::npos) << text;
  EXPECT_NE(text.find("; 7 parameters, 136 elements"), std::string::npos) << text;
}

TEST(Sites, JsonHasSitesParamsAndTotals) {
  nlohmann::json json = site_table_json(sample_program());
  EXPECT_EQ(json["sites"][4]["name"], "LayerNorm.apply/%4");
  EXPECT_EQ(json["sites"][0]["shape"], nlohmann::json::array({8, 1}));
  EXPECT_EQ(json["params"][0]["path"], "tok");
  EXPECT_EQ(json["params"][0]["init"], "normal(0.02)");
  EXPECT_EQ(json["totals"]["params"], 7);
  EXPECT_EQ(json["totals"]["param_elements"], 136);
}

Type result(Op op, std::vector<Type> operands, Attrs attrs = {}, const Type* declared = nullptr) {
  InferredType inferred = infer_result_type(op, operands, attrs, {declared, nullptr, nullptr});
  EXPECT_TRUE(inferred) << inferred.error;
  return inferred ? *inferred.type : Type{};
}

std::string rule_error(Op op, std::vector<Type> operands, Attrs attrs = {}) {
  return infer_result_type(op, operands, attrs).error;
}

TEST(TypeRules, BroadcastStretchesSizeOneAxes) {
  EXPECT_EQ(result(Op::add, {real({8, 1}), real({4})}).shape, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(result(Op::mul, {real({}), real({2, 3})}).shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(result(Op::lt, {real({3}), real({3})}).kind, ElemKind::Bool);
  EXPECT_NE(rule_error(Op::add, {real({3}), real({4})}), "");
  EXPECT_NE(rule_error(Op::exp, {integer({3})}), "");
  EXPECT_EQ(result(Op::add, {integer({3}), integer({1})}).kind, ElemKind::Int);
}

TEST(TypeRules, ReductionsKeepAxes) {
  EXPECT_EQ(result(Op::sum, {real({2, 3, 4})}, axes({0, 2})).shape,
            (std::vector<int64_t>{1, 3, 1}));
  EXPECT_NE(rule_error(Op::mean, {real({2})}, axes({})), "");
}

TEST(TypeRules, ContractFollowsTheSpec) {
  EXPECT_EQ(result(Op::contract, {real({8, 4}), real({4, 10})}, spec("td,dv->tv")).shape,
            (std::vector<int64_t>{8, 10}));
  EXPECT_EQ(result(Op::contract, {real({2, 8, 4}), real({2, 8, 4})}, spec("htd,hsd->hts")).shape,
            (std::vector<int64_t>{2, 8, 8}));
  EXPECT_NE(rule_error(Op::contract, {real({8, 4}), real({5, 10})}, spec("td,dv->tv")), "");
  EXPECT_NE(rule_error(Op::contract, {real({8, 4}), real({4, 10})}, spec("tdd,dv->tv")), "");
}

TEST(TypeRules, LayoutOps) {
  EXPECT_EQ(result(Op::transpose, {real({2, 3, 4})}, axes({2, 0, 1})).shape,
            (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(result(Op::slice, {integer({9})}, slice({0}, {1}, {9})).shape,
            (std::vector<int64_t>{8}));
  EXPECT_EQ(result(Op::concat, {real({2, 3}), real({2, 5})}, axes({1})).shape,
            (std::vector<int64_t>{2, 8}));
  Type target = real({6});
  EXPECT_EQ(result(Op::reshape, {real({2, 3})}, {}, &target).shape, target.shape);
  Type wide = real({4, 3});
  EXPECT_EQ(result(Op::broadcast, {real({1, 3})}, {}, &wide).shape, wide.shape);
  EXPECT_NE(infer_result_type(Op::reshape, {real({5})}, {}, {&target, nullptr, nullptr}).error, "");
  EXPECT_EQ(result(Op::causal_mask, {real({2, 4, 4})}, literal("0")).shape, (std::vector<int64_t>{2, 4, 4}));
  EXPECT_NE(rule_error(Op::causal_mask, {real({2, 4, 4})}, literal("1")), "");  // −∞ or +0 only
}

TEST(TypeRules, GatherLossAndSources) {
  EXPECT_EQ(result(Op::embed, {real({10, 4}), integer({8})}).shape, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(result(Op::cross_entropy, {real({8, 10}), integer({8})}).shape, std::vector<int64_t>{});
  EXPECT_EQ(result(Op::literal, {}, literal("0.5")).kind, ElemKind::Real);
  Param stacked = param("blocks.w", real({2, 4, 4}), Initializer::Kind::Zeros, 0, 1);
  InferredType read = infer_result_type(Op::param, {}, path("w"), {nullptr, nullptr, &stacked});
  ASSERT_TRUE(read);
  EXPECT_EQ(read.type->shape, (std::vector<int64_t>{4, 4}));
}

// fold_trace stacks each layer's input (a callee T → T), or the further results of a callee
// T → (T, U…) (the store split's kept values), which must return T first; fold_vjp reads one
// stack or several.
TEST(TypeRules, FoldTraceStacksInputsOrTheCalleesSecondResult) {
  auto pair = [](bool swapped) {
    FunctionBuilder f("pair");
    ValueRef x = f.arg("x", real({8, 4}));
    ValueRef next = f.let(Op::exp, {x}, real({8, 4}));
    ValueRef row = f.let(Op::mean, {x}, real({8, 1}), axes({1}));
    Function function = f.done(next);
    function.results = swapped ? std::vector<ValueRef>{row, next} : std::vector<ValueRef>{next, row};
    return function;
  };
  const Function two = pair(false), swapped = pair(true);
  Type declared = tuple_type({real({8, 4}), real({2, 8, 1})});
  InferredType traced = infer_result_type(Op::fold_trace, {real({8, 4})}, callee("pair", "blocks"), {&declared, &two, nullptr});
  ASSERT_TRUE(traced) << traced.error;
  EXPECT_EQ(traced.type->elements.at(0).shape, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(traced.type->elements.at(1).shape, (std::vector<int64_t>{2, 8, 1}));
  EXPECT_NE(infer_result_type(Op::fold_trace, {real({8, 4})}, callee("pair", "blocks"), {&declared, &swapped, nullptr}).error, "");
  FunctionBuilder one("one");
  const Function same = one.done(one.let(Op::exp, {one.arg("x", real({8, 4}))}, real({8, 4})));
  Type inputs = tuple_type({real({8, 4}), real({2, 8, 4})});
  InferredType plain = infer_result_type(Op::fold_trace, {real({8, 4})}, callee("one", "blocks"), {&inputs, &same, nullptr});
  ASSERT_TRUE(plain) << plain.error;
  EXPECT_EQ(plain.type->elements.at(1).shape, (std::vector<int64_t>{2, 8, 4}));
  EXPECT_NE(infer_result_type(Op::fold, {real({8, 4})}, callee("pair", "blocks"), {nullptr, &two, nullptr}).error, "");
  // fold_vjp reads several stacks: the callee takes layer l of each, then the carry.
  FunctionBuilder back("back");
  ValueRef kept = back.arg("kept", real({8, 1}));
  back.arg("next", real({8, 4}));
  ValueRef carry = back.arg("carry", real({8, 4}));
  Function reverse = back.done(back.let(Op::mul, {carry, kept}, real({8, 4})));
  InferredType reversed = infer_result_type(Op::fold_vjp, {real({2, 8, 1}), real({2, 8, 4}), real({8, 4})}, callee("back", "blocks"),
                                            {nullptr, &reverse, nullptr});
  ASSERT_TRUE(reversed) << reversed.error;
  EXPECT_EQ(reversed.type->elements.at(0).shape, (std::vector<int64_t>{8, 4}));
  EXPECT_NE(infer_result_type(Op::fold_vjp, {real({2, 8, 1}), real({3, 8, 4}), real({8, 4})}, callee("back", "blocks"),
                              {nullptr, &reverse, nullptr}).error, "");  // stacks of different layer counts
}

TEST(TypeRules, DecimalLiterals) {
  for (const char* good : {"1", "-2", "0.5", "1e-5", "1.25E+10"})
    EXPECT_TRUE(is_decimal_literal(good)) << good;
  for (const char* bad : {"", "-", ".5", "1.", "1e", "inf", "0x10", "1 "})
    EXPECT_FALSE(is_decimal_literal(bad)) << bad;
}

// A real literal may be an exact quotient (a folded const); a Z literal fits in 64 bits.
TEST(TypeRules, QuotientAndIntegerLiterals) {
  for (const char* good : {"1/6", "-1/3e300", "2.5/0.5", "7", "1e-5"}) EXPECT_TRUE(is_real_literal(good)) << good;
  for (const char* bad : {"1/0", "1/-3", "1/", "/3", "1/2/3", "1/0e5", "1/0.0"}) EXPECT_FALSE(is_real_literal(bad)) << bad;
  for (const char* good : {"0", "-9223372036854775808", "9223372036854775807"}) EXPECT_TRUE(is_integer_literal(good)) << good;
  for (const char* bad : {"9223372036854775808", "99999999999999999999", "1.0", "1e3", "+1", ""})
    EXPECT_FALSE(is_integer_literal(bad)) << bad;
  Attrs wide;
  wide.literal = "99999999999999999999";
  const Type z{ElemKind::Int, {}, {}, {}}, r{ElemKind::Real, {}, {}, {}};
  EXPECT_NE(infer_result_type(Op::literal, {}, wide, TypeRuleContext{&z}).error, "");
  EXPECT_EQ(infer_result_type(Op::literal, {}, wide, TypeRuleContext{&r}).error, "");
}

}  // namespace
}  // namespace presk::ir
