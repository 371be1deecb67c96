// The printed IR: what it looks like, that parse(print(p)) == p, and that malformed text is
// a coded user error with a span, never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "ir/builder.h"
#include "ir/equality.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace presk::ir {
namespace {

using namespace testing;

Program parse_text(const std::string& text) {
  return parse_program(std::make_shared<SourceFile>(SourceFile{"test.pir", text}));
}

// Expects parse(print(p)) == p and print(parse(print(p))) == print(p).
void expect_round_trip(const Program& program) {
  std::string printed = print_program(program);
  Program parsed = parse_text(printed);
  EXPECT_EQ(program_difference(program, parsed), "") << printed;
  EXPECT_EQ(print_program(parsed), printed);
}

std::string parse_error_code(const std::string& text) {
  try {
    parse_text(text);
  } catch (const UserError& error) {
    EXPECT_TRUE(error.diagnostics().front().span.known()) << error.what();
    return error.code();
  }
  return "none";
}

TEST(Printer, PrintsOneLetALine) {
  std::string text = print_function(layer_norm_function());
  EXPECT_NE(
      text.find("fn LayerNorm.apply module LayerNorm ($0 x : R[T:8, D:4]) -> R[T:8, D:4] {\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("  %0 = mean($0) axes=[1] : R[8, 1]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  %4 = literal \"1e-5\" : R\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  %8 = param \"g\" : R[D:4]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  return %11\n}\n"), std::string::npos) << text;
}

TEST(Printer, PrintsParamsCallsAndFolds) {
  std::string text = print_program(sample_program());
  EXPECT_NE(text.find("const V = 10\n"), std::string::npos) << text;
  EXPECT_NE(text.find("dim T = 8\n"), std::string::npos) << text;
  EXPECT_NE(text.find("param tok : R[10, 4] = normal(0.02)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("param blocks.ln.g : R[2, 4] = ones stack 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("%2 = fold @Block.apply(%1) path=\"blocks\" : R[8, 4]"), std::string::npos);
  EXPECT_NE(text.find("%2 = contract(%0, %1) spec=\"td,de->te\" : R[8, 4]"), std::string::npos);
  EXPECT_NE(text.find("entry loss module GPT ($0 tokens : Z[9]) -> R {"), std::string::npos);
  EXPECT_NE(text.find("%0 = slice($0) axes=[0] starts=[0] stops=[8] : Z[8]"), std::string::npos);
}

TEST(RoundTrip, SampleProgram) {
  expect_round_trip(sample_program());
}

TEST(RoundTrip, EveryOp) {
  Program program;
  program.functions = {all_ops_function()};
  expect_round_trip(program);
  std::string text = print_program(program);
  for (int i = 0; i < op_count(); ++i) {
    Op op = static_cast<Op>(i);
    if (op == Op::literal || op == Op::param || op == Op::call || op == Op::fold ||
        op == Op::contract || op == Op::embed || op == Op::cross_entropy || op == Op::mean ||
        op == Op::add || op == Op::sub || op == Op::mul || op == Op::rsqrt || op == Op::gelu_tanh) {
      continue;  // in sample_program
    }
    if (op == Op::get || op == Op::fold_trace || op == Op::fold_vjp) continue;  // tests/ad/golden
    if (op == Op::scan) continue;  // examples/gpt.psk's decode (tests/ir/lit)
    EXPECT_NE(text.find(std::string(" = ") + op_name(op)), std::string::npos) << op_name(op);
  }
}

TEST(RoundTrip, OddNamesNumbersAndAttributes) {
  Program program = sample_program();
  program.params[0].init = Initializer{Initializer::Kind::Uniform, 0.1 + 0.2, 1e300};
  program.params[3].init.a = 5e-324;
  program.params.push_back(param("weird \"path\"\n\\", real({1}), Initializer::Kind::Zeros));
  program.consts.emplace_back("negative", -9223372036854775807LL - 1);
  Function& f = program.functions[0];
  f.argument_types[0].axes = {"T + 1", ""};
  f.lets[4].attrs.literal = "-0.000123456789012345678901234567890e-7";
  f.lets[1].attrs.rate = 0.30000000000000004;  // invalid for sub, but printed and read back
  f.lets[1].attrs.spec = "é \x01";
  f.lets[2].attrs.starts = {-5};
  f.name = "1st fn";
  f.module = "";
  expect_round_trip(program);
}

TEST(RoundTrip, UnnamedArgumentsAndSeveralResults) {
  FunctionBuilder builder("pair");
  ValueRef x = builder.arg("", real({3}));
  Function f = builder.done(x);
  f.results = {x, x};
  f.argument_names.clear();
  Program program;
  program.functions = {f};
  expect_round_trip(program);
  EXPECT_NE(print_program(program).find("fn pair ($0 : R[3]) -> (R[3], R[3]) {"),
            std::string::npos);
}

TEST(Parser, AcceptsCommentsAndSpacing) {
  Program program =
      parse_text("# a comment\n  fn f($0 x:R[2])->R[2]{%0=neg($0):R[2] # trailing\n return %0}");
  ASSERT_EQ(program.functions.size(), 1u);
  EXPECT_EQ(program.functions[0].lets[0].op, Op::neg);
  EXPECT_TRUE(program.functions[0].lets[0].span.known());
}

struct ParseCase {
  const char* code;
  const char* text;
};

TEST(Parser, RejectsMalformedTextWithCodes) {
  const ParseCase cases[] = {
      {"E0400", "fn f () -> R { %0 = literal \"1 : R }"},
      {"E0400", "fn f () -> R { %0 = literal \"\\q\" : R return %0 }"},
      {"E0400", "fn f () -> R & { }"},
      {"E0401", "fn f ( -> R { }"},
      {"E0401", "module M"},
      {"E0401", "fn f () -> R { %0 = neg : R"},
      {"E0402", "fn f ($0 x : R[99999999999999999999]) -> R { return $0 }"},
      {"E0402", "fn f ($0 x : R[1099511627777]) -> R { return $0 }"},
      {"E0402", "fn f ($0 x : R[1048576, 1048576, 1048576, 1048576]) -> R { return $0 }"},
      {"E0402", "param p : R[1] = zeros stack 999"},
      {"E0402", "fn f () -> R { %99999999999 = neg : R }"},
      {"E0403", "fn f ($0 x : R) -> R { %0 = frobnicate($0) : R return %0 }"},
      {"E0404", "fn f ($0 x : Q[3]) -> R { return $0 }"},
      {"E0405", "fn f ($0 x : R) -> R { %1 = neg($0) : R return %1 }"},
      {"E0406", "fn f ($0 x : R) -> R { %0 = neg(%0) : R return %0 }"},
      {"E0406", "fn f ($0 x : R) -> R { %0 = neg($3) : R return %0 }"},
      {"E0406", "fn f ($0 x : R) -> R { return %4 }"},
      {"E0407", "fn f ($1 x : R) -> R { return $0 }"},
      {"E0408", "fn f ($0 x : R[2]) -> R[1] { %0 = sum($0) axes=[0] axes=[0] : R[1] return %0 }"},
      {"E0408", "fn f ($0 x : R[2]) -> R[2] { %0 = neg($0) colour=[1] : R[2] return %0 }"},
      {"E0409", "param w : R[2] = gaussian(1)"},
      {"E0410", "param w : R[2] = normal(1.2.3)"},
      {"E0411", "fn f ($0 x : R) -> R[3] { return $0 }"},
  };
  for (const ParseCase& c : cases) EXPECT_EQ(parse_error_code(c.text), c.code) << c.text;
}

// Random edits of a valid text: each parses (and then verifies or not) or is a UserError.
TEST(Parser, SurvivesHostileEdits) {
  std::string text = print_program(sample_program());
  std::mt19937 random(1234);
  const std::string alphabet = "%$@()[]{},:=->\"\\#0123456789eRZBabcxyz .\n";
  for (int trial = 0; trial < 3000; ++trial) {
    std::string edited = text;
    int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = random() % edited.size();
      switch (random() % 4) {
        case 0:
          edited[at] = alphabet[random() % alphabet.size()];
          break;
        case 1:
          edited.erase(at, 1 + random() % 8);
          break;
        case 2:
          edited.insert(at, 1, alphabet[random() % alphabet.size()]);
          break;
        default:
          edited.resize(std::max<size_t>(at, 1));
          break;
      }
      if (edited.empty()) edited.push_back('x');
    }
    try {
      Program program = parse_text(edited);
      verify_program(program, VerifyMode::UserInput);
      print_program(program);
    } catch (const UserError&) {
    }
  }
}

}  // namespace
}  // namespace presk::ir
