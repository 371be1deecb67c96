// The import's symbolic integers (src/import/symbolic.h): the shape arithmetic of dynamic-axes
// exports as expressions of the dims.
#include "import/symbolic.h"

#include <gtest/gtest.h>

#include "import/builder.h"

namespace presk::onnx_import {
namespace {

const SymInt B = SymInt::dim("B"), T = SymInt::dim("T");

TEST(SymInt, ArithmeticIsExactAndCancels) {
  EXPECT_EQ((T - T).text(), "0");
  EXPECT_TRUE((T - T).is_known());
  EXPECT_EQ((B * T * SymInt::of(8)).text(), "8 * B * T");
  EXPECT_EQ((T - SymInt::of(1)).text(), "T - 1");
  EXPECT_EQ((SymInt::of(1) - T).text(), "0 - T + 1");
  EXPECT_EQ((B + T + B).text(), "T + 2 * B");
}

TEST(SymInt, ExtentsAreMonomials) {
  std::optional<Extent> extent = (SymInt::of(2) * B * T).extent();
  ASSERT_TRUE(extent.has_value());
  EXPECT_EQ(extent->factor, 2);
  EXPECT_EQ(extent->dims, (std::vector<std::string>{"B", "T"}));
  EXPECT_FALSE((T - SymInt::of(1)).extent().has_value());
  EXPECT_FALSE((SymInt::of(0) - T).extent().has_value());
  EXPECT_EQ(SymInt::of(Extent{3, {"T"}}), SymInt::of(3) * T);
}

TEST(SymInt, QuotientsOnlyWhenExact) {
  std::optional<SymInt> q = exact_quotient(B * T * SymInt::of(8), SymInt::of(4));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->text(), "2 * B * T");
  EXPECT_EQ(exact_quotient(B * T, T)->text(), "B");
  EXPECT_FALSE(exact_quotient(B * T, SymInt::of(2)).has_value());
  EXPECT_FALSE(exact_quotient(T, B).has_value());
  EXPECT_FALSE(exact_quotient(T, SymInt::of(0)).has_value());
  EXPECT_EQ(exact_quotient(SymInt::of(-7), SymInt::of(2))->value(), -3);  // toward zero
}

TEST(SymInt, ComparisonsDecidedForEveryDimAtLeastOne) {
  EXPECT_EQ(compare(T, SymInt::of(0)), 1);
  EXPECT_EQ(compare(T, SymInt::of(-1)), 1);
  EXPECT_EQ(compare(T - T, SymInt::of(0)), 0);
  EXPECT_EQ(compare(SymInt::of(0) - T, SymInt::of(0)), -1);
  EXPECT_EQ(compare(T, SymInt::of(4)), std::nullopt);  // T = 4 or not
  EXPECT_EQ(compare(B, T), std::nullopt);
  EXPECT_EQ(compare(B * T + SymInt::of(1), B), std::nullopt);  // B·T + 1 − B: mixed signs
}

TEST(SymInt, AtLeastHoldsForEveryDimAtLeastOne) {
  EXPECT_TRUE(at_least(T, SymInt::of(1)));  // max(T, 1) is T
  EXPECT_FALSE(at_least(T, SymInt::of(2)));
  EXPECT_FALSE(at_least(SymInt::of(1), T));
  EXPECT_TRUE(at_least(B * T + B, B));
  EXPECT_FALSE(at_least(B * T, B));  // true, but mixed signs: it cannot tell, so says no
  EXPECT_EQ(compare(T, SymInt::of(1)), std::nullopt);  // T = 1 or more
}

TEST(SymInt, OverflowIsACodedError) {
  SymInt big = SymInt::of(INT64_MAX);
  try {
    (void)(big + SymInt::of(1));
    FAIL() << "no error";
  } catch (const UserError& error) {
    EXPECT_EQ(error.code(), "E1308");
  }
}

}  // namespace
}  // namespace presk::onnx_import
