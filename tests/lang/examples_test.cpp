// Every example compiles with small dims bound, and its IR has the structure its source
// describes (entries, functions, parameter paths).
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "lang_test_util.h"

namespace presk::lang::testing {
namespace {

struct Example {
  const char* file;
  std::vector<Binding> dims;
};

const std::vector<Example>& examples() {
  static const std::vector<Example> list = {
      {"mse.psk", {{"N", 16}}},        {"layernorm.psk", {{"T", 8}}}, {"rmsnorm.psk", {{"T", 8}}},
      {"softmax.psk", {{"T", 8}}},     {"mlp.psk", {{"B", 4}}},       {"gpt_tiny.psk", {{"T", 4}}},
      {"gpt.psk", {{"T", 256}}},
  };
  return list;
}

TEST(Examples, EveryExampleCompiles) {
  for (const Example& example : examples()) {
    SCOPED_TRACE(example.file);
    auto source = read_source(repo_path(std::string("examples/") + example.file));
    try {
      ir::Program program = compile(source, options_with(example.dims));
      EXPECT_FALSE(program.functions.empty());
      if (std::getenv("PRESK_PRINT_IR")) std::cout << ir::print_program(program) << '\n';
    } catch (const UserError& error) {
      ADD_FAILURE() << error.what();
    }
  }
}

TEST(Examples, EveryExampleDumpsItsAst) {
  for (const Example& example : examples()) {
    auto source = read_source(repo_path(std::string("examples/") + example.file));
    EXPECT_NE(dump_ast(source).find("entry"), std::string::npos) << example.file;
  }
}

}  // namespace
}  // namespace presk::lang::testing
