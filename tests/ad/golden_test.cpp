// Golden printed IR of generated vjps (tests/ad/golden/*.pir): `presk dump --stage vjp` of
// layernorm and gpt_tiny must print exactly these files, and each must parse back to itself.
// Regenerate after an intended change with PRESK_UPDATE_GOLDEN=1 ./test_ad.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ad/gradient_check.h"
#include "ad/vjp.h"
#include "ir/printer.h"
#include "lang/frontend.h"

namespace presk::testing {
namespace {

std::string printed_vjps(const std::string& file, std::vector<lang::Binding> dims, const std::string& entry) {
  lang::FrontendOptions options;
  options.dims = std::move(dims);
  options.entry = entry;
  ir::Program program = lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + file), options);
  return ir::print_program(ad::add_vjps(program));
}

void expect_golden(const std::string& text, const std::string& name) {
  std::string path = std::string(PRESK_SOURCE_DIR) + "/tests/ad/golden/" + name;
  if (std::getenv("PRESK_UPDATE_GOLDEN") != nullptr) std::ofstream(path) << text;
  std::ifstream in(path);
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(text, golden.str()) << "the vjp printed differs from " << path;
  EXPECT_EQ(ir::print_program(parse_ir(text)), text) << "print ∘ parse is not the identity";
}

// The property beside each golden, which PRESK_UPDATE_GOLDEN cannot rewrite: the vjp the golden
// file holds (parsed back from the file, not regenerated) agrees with central differences of
// the entry on the exact reference to 25 digits.
void expect_golden_gradients(const std::string& file, std::vector<lang::Binding> dims, const std::string& entry,
                             const std::string& name) {
  lang::FrontendOptions options;
  options.dims = std::move(dims);
  options.entry = entry;
  const ir::Program program = lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + file), options);
  std::ifstream in(std::string(PRESK_SOURCE_DIR) + "/tests/ad/golden/" + name);
  std::stringstream golden;
  golden << in.rdbuf();
  const GradientAgreement agreement = check_gradient_of(program, parse_ir(golden.str()), entry);
  EXPECT_GE(agreement.argument_digits, 25) << name << ": " << agreement.detail;
  EXPECT_GE(agreement.param_digits, 25) << name << ": " << agreement.detail;
}

TEST(VjpGolden, LayerNormGradients) {
  expect_golden_gradients("layernorm.psk", {{"T", 4}}, "normalize", "layernorm_vjp.pir");
}

TEST(VjpGolden, GptTinyGradients) {
  expect_golden_gradients("gpt_tiny.psk", {{"T", 4}}, "loss", "gpt_tiny_vjp.pir");
}

TEST(VjpGolden, LayerNorm) {
  expect_golden(printed_vjps("layernorm.psk", {{"T", 4}}, "normalize"), "layernorm_vjp.pir");
}

TEST(VjpGolden, GptTiny) {
  expect_golden(printed_vjps("gpt_tiny.psk", {{"T", 4}}, "loss"), "gpt_tiny_vjp.pir");
}

}  // namespace
}  // namespace presk::testing
