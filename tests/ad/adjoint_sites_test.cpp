// The side table of adjoint sites in printed IR (docs/ir.md, "Adjoint sites"): one let marked
// the adjoint of several sites, the cotangent argument marked with the sites whose adjoint it
// is; print ∘ parse is the identity, and the verifier / parser reject misplaced marks.
#include <gtest/gtest.h>

#include "ad/gradient_check.h"
#include "ad/vjp.h"
#include "ir/printer.h"
#include "support/diagnostics.h"

namespace presk::testing {
namespace {

// y = exp(a·a + b) + a·a: the result %3 and the add's operand %2 both take ḡ itself.
const std::string kForward =
    "entry f ($0 a : R[3], $1 b : R[3]) -> R[3] {\n"
    "  %0 = mul($0, $0) : R[3]\n"
    "  %1 = add(%0, $1) : R[3]\n"
    "  %2 = exp(%1) : R[3]\n"
    "  %3 = add(%2, %0) : R[3]\n"
    "  return %3\n"
    "}\n";

std::string error_code(const std::string& text) {
  try {
    parse_ir(text);
  } catch (const UserError& error) {
    return error.code();
  }
  return "none";
}

TEST(AdjointSites, SharedAndCotangentSitesRoundTrip) {
  std::string printed = ir::print_program(ad::add_vjps(parse_ir(kForward)));
  // %3 (the result) and %2 (an operand of the add) take the cotangent itself.
  EXPECT_NE(printed.find("$2 cotangent : R[3] adjoint %3 adjoint %2)"), std::string::npos) << printed;
  // %1's adjoint ḡ·exp(%1) is a let of its own; %0's is ḡ plus it, accumulated: another.
  EXPECT_NE(printed.find(": R[3] adjoint %1\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find(": R[3] adjoint %0\n"), std::string::npos) << printed;
  EXPECT_EQ(ir::print_program(parse_ir(printed)), printed);
}

TEST(AdjointSites, SeveralSitesOnOneLetRoundTrip) {
  std::string text = kForward +
                     "\nentry f.vjp ($0 a : R[3], $1 b : R[3], $2 cotangent : R[3] adjoint %3) -> (\"$0\" : R[3], \"$1\" : R[3]) {\n"
                     "  %0 = exp($2) : R[3] adjoint %2 adjoint %1\n"
                     "  return %0, %0\n"
                     "}\n";
  EXPECT_EQ(ir::print_program(parse_ir(text)), text);
}

TEST(AdjointSites, MisplacedMarksAreRejected) {
  std::string vjp_head = "\nentry f.vjp ($0 a : R[3], $1 b : R[3], $2 cotangent : R[3]";
  std::string vjp_tail = ") -> (\"$0\" : R[3]) {\n  return $2\n}\n";
  EXPECT_EQ(error_code(kForward + vjp_head + " adjoint %9" + vjp_tail), "E0477");  // no site %9
  EXPECT_EQ(error_code("entry g ($0 x : R[3] adjoint %0) -> R[3] {\n  %0 = exp($0) : R[3]\n  return %0\n}\n"),
            "E0477");  // not a vjp
  // Only the last argument may carry the mark.
  std::string early = "\nentry f.vjp ($0 a : R[3] adjoint %0, $1 b : R[3], $2 cotangent : R[3]";
  EXPECT_NE(error_code(kForward + early + vjp_tail), "none");
}

}  // namespace
}  // namespace presk::testing
