// Every primitive's adjoint rule and every example's vjp against central differences of the
// exact reference (gradient_check.h), and the verifier on every generated vjp.
#include <gtest/gtest.h>

#include "ad/gradient_check.h"
#include "ad/vjp.h"
#include "lang/frontend.h"

namespace presk::testing {
namespace {

constexpr double kDigits = 25;

void expect_agreement(const ir::Program& program, const std::string& entry, const std::string& what) {
  GradientAgreement agreement = check_gradient(program, entry);
  EXPECT_GE(agreement.argument_digits, kDigits) << what << ": " << agreement.detail;
  EXPECT_GE(agreement.param_digits, kDigits) << what << ": " << agreement.detail;
}

// One entry `f` over `arguments` whose body is `body` (lets) returning `result`.
std::string entry_text(const std::string& arguments, const std::string& result_type,
                       const std::string& body) {
  return "entry f (" + arguments + ") -> " + result_type + " {\n" + body + "}\n";
}

struct PrimitiveCase {
  const char* name;
  std::string text;
};

std::vector<PrimitiveCase> primitive_cases() {
  const std::string xy = "$0 : R[2, 3], $1 : R[3]";
  const std::string x = "$0 : R[2, 3]";
  auto binary = [&](const char* op) {
    return PrimitiveCase{op, entry_text(xy, "R[2, 3]", std::string("  %0 = ") + op + "($0, $1) : R[2, 3]\n  return %0\n")};
  };
  auto unary = [&](const char* op) {
    return PrimitiveCase{op, entry_text(x, "R[2, 3]", std::string("  %0 = ") + op + "($0) : R[2, 3]\n  return %0\n")};
  };
  auto positive = [&](const char* op) {  // op(e^x): log, sqrt, rsqrt need x > 0
    return PrimitiveCase{op, entry_text(x, "R[2, 3]", std::string("  %0 = exp($0) : R[2, 3]\n  %1 = ") + op +
                                                          "(%0) : R[2, 3]\n  return %1\n")};
  };
  auto reduce = [&](const char* op) {
    return PrimitiveCase{op, entry_text(x, "R[2, 1]", std::string("  %0 = ") + op + "($0) axes=[1] : R[2, 1]\n  return %0\n")};
  };
  std::vector<PrimitiveCase> cases = {
      binary("add"), binary("sub"), binary("mul"), binary("div"), binary("max"), binary("min"),
      unary("neg"), unary("abs"), unary("exp"), unary("tanh"), unary("gelu_tanh"), unary("gelu_erf"), unary("erf"),
      unary("sin"), unary("cos"), unary("atan"), unary("round"), unary("floor"), unary("ceil"), unary("round_f16"), unary("round_bf16"),
      unary("relu"), positive("log"), positive("sqrt"), positive("rsqrt"),
      reduce("sum"), reduce("mean"), reduce("reduce_max"),
      {"dropout", entry_text(x, "R[2, 3]", "  %0 = dropout($0) rate=0.25 : R[2, 3]\n  return %0\n")},
      {"where", entry_text(xy, "R[2, 3]", "  %0 = gt($0, $1) : B[2, 3]\n  %1 = where(%0, $0, $1) : R[2, 3]\n  return %1\n")},
      {"convert", entry_text(x, "R[2, 3]", "  %0 = iota axes=[1] : Z[2, 3]\n  %1 = convert(%0) : R[2, 3]\n  %2 = mul($0, %1) : R[2, 3]\n  return %2\n")},
      {"contract", entry_text("$0 : R[2, 3], $1 : R[3, 4]", "R[2, 4]", "  %0 = contract($0, $1) spec=\"ab,bc->ac\" : R[2, 4]\n  return %0\n")},
      {"contract_outer_sum", entry_text("$0 : R[2, 3], $1 : R[4]", "R[2, 4]", "  %0 = contract($0, $1) spec=\"ab,c->ac\" : R[2, 4]\n  return %0\n")},
      {"softmax", entry_text(x, "R[2, 3]", "  %0 = softmax($0) axes=[1] : R[2, 3]\n  return %0\n")},
      {"log_softmax", entry_text(x, "R[2, 3]", "  %0 = log_softmax($0) axes=[0] : R[2, 3]\n  return %0\n")},
      {"cross_entropy", entry_text("$0 : R[3, 5], $1 : Z[3]", "R", "  %0 = cross_entropy($0, $1) : R\n  return %0\n")},
      {"embed", entry_text("$0 : R[5, 4], $1 : Z[2, 3]", "R[2, 3, 4]", "  %0 = embed($0, $1) : R[2, 3, 4]\n  return %0\n")},
      {"reshape", entry_text(x, "R[3, 2]", "  %0 = reshape($0) : R[3, 2]\n  return %0\n")},
      {"transpose", entry_text("$0 : R[2, 3, 4]", "R[4, 2, 3]", "  %0 = transpose($0) axes=[2, 0, 1] : R[4, 2, 3]\n  return %0\n")},
      {"slice", entry_text("$0 : R[4, 5]", "R[2, 2]", "  %0 = slice($0) axes=[0, 1] starts=[1, 0] stops=[3, 2] : R[2, 2]\n  return %0\n")},
      {"concat", entry_text("$0 : R[2, 3], $1 : R[1, 3]", "R[3, 3]", "  %0 = concat($0, $1) axes=[0] : R[3, 3]\n  return %0\n")},
      {"broadcast", entry_text("$0 : R[3]", "R[2, 3]", "  %0 = broadcast($0) : R[2, 3]\n  return %0\n")},
      {"causal_mask", entry_text("$0 : R[2, 3, 3]", "R[2, 3, 3]", "  %0 = causal_mask($0) : R[2, 3, 3]\n  %1 = softmax(%0) axes=[2] : R[2, 3, 3]\n  return %1\n")},
      {"literal", entry_text(x, "R[2, 3]", "  %0 = literal \"2.5\" : R\n  %1 = mul($0, %0) : R[2, 3]\n  return %1\n")},
      {"param", "param w : R[3] = normal(1)\n" +
                    entry_text(x, "R[2, 3]", "  %0 = param \"w\" : R[3]\n  %1 = mul($0, %0) : R[2, 3]\n  %2 = mul(%1, %0) : R[2, 3]\n  return %2\n")},
  };
  return cases;
}

TEST(AdjointRules, EveryPrimitiveAgreesWithCentralDifferences) {
  for (const PrimitiveCase& c : primitive_cases()) expect_agreement(parse_ir(c.text), "f", c.name);
}

ir::Program compile_example(const std::string& file, std::vector<lang::Binding> dims, const std::string& entry) {
  lang::FrontendOptions options;
  options.dims = std::move(dims);
  options.entry = entry;
  return lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + file), options);
}

TEST(AdjointRules, EveryExampleAgreesWithCentralDifferences) {
  struct Case { const char* file; const char* entry; std::vector<lang::Binding> dims; };
  std::vector<Case> cases = {
      {"mse.psk", "mse", {{"N", 5}}},
      {"layernorm.psk", "normalize", {{"T", 3}}},
      {"rmsnorm.psk", "normalize", {{"T", 3}}},
      {"softmax.psk", "by_hand", {{"T", 2}}},
      {"mlp.psk", "loss", {{"B", 3}}},
      {"gpt_tiny.psk", "logits", {{"T", 4}}},
      {"gpt_tiny.psk", "loss", {{"T", 4}}},
      {"gpt.psk", "loss", {{"T", 4}}},
  };
  for (const Case& c : cases) {
    expect_agreement(compile_example(c.file, c.dims, c.entry), c.entry, std::string(c.file) + " " + c.entry);
  }
}

TEST(AdjointRules, AnOpWithoutARuleIsAUserErrorNamingIt) {
  ir::Program program = parse_ir(entry_text("$0 : R[3]", "R[3]", "  %0 = gelu_tanh_grad($0) : R[3]\n  return %0\n"));
  try {
    ad::add_vjps(program);
    FAIL() << "expected E0800";
  } catch (const UserError& error) {
    std::string text = error.what();
    EXPECT_NE(text.find("E0800"), std::string::npos) << text;
    EXPECT_NE(text.find("gelu_tanh_grad"), std::string::npos) << text;
    EXPECT_NE(text.find("f/%0"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace presk::testing
