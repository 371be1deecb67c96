// Hostile input is a coded error, never a crash: deep nesting, huge names and literals,
// random bytes, empty files, enormous dims, missing files.
#include <gtest/gtest.h>

#include <random>

#include "lang/lexer.h"
#include "lang_test_util.h"

namespace presk::lang::testing {
namespace {

// The codes of the UserError that compiling `text` throws ("" when it compiles).
std::vector<std::string> codes_of(const std::string& text, const FrontendOptions& options = {}) {
  try {
    compile(source_of(text), options);
  } catch (const UserError& error) {
    std::vector<std::string> codes;
    for (const Diagnostic& d : error.diagnostics()) codes.push_back(d.code);
    return codes;
  }
  return {};
}

bool has(const std::vector<std::string>& codes, const std::string& code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

TEST(Hostile, HundredThousandNestedParentheses) {
  std::string text = "dim N\nentry f(x : R[N]) -> R[N] = " + std::string(100000, '(') + "x" + std::string(100000, ')');
  EXPECT_TRUE(has(codes_of(text), "E0214"));
  std::string brackets = "dim N\nentry f(x : R[N]) -> R[N] = " + std::string(100000, '[');
  EXPECT_TRUE(has(codes_of(brackets), "E0214"));
  std::string minus = "dim N\nentry f(x : R[N]) -> R[N] = " + std::string(100000, '-') + "x";
  EXPECT_TRUE(has(codes_of(minus), "E0214"));
}

TEST(Hostile, LongOperatorChain) {
  std::string text = "dim N\nentry f(x : R[N]) -> R[N] = x";
  for (int i = 0; i < 100000; ++i) text += "+x";
  EXPECT_TRUE(has(codes_of(text), "E0214"));
}

TEST(Hostile, MillionCharacterIdentifier) {
  std::string text = "const " + std::string(1000000, 'a') + " = 3\n";
  EXPECT_EQ(codes_of(text), (std::vector<std::string>{"E0205"}));
}

TEST(Hostile, TenThousandDigitLiteral) {
  std::string text = "dim N\nentry f(x : R[N]) -> R[N] = x * " + std::string(10000, '7') + "\n";
  EXPECT_EQ(codes_of(text, options_with({{"N", 2}})), (std::vector<std::string>{"E0204"}));
}

TEST(Hostile, IntegerLiteralTooLargeForAShape) {
  EXPECT_TRUE(has(codes_of("const D = 99999999999999999999\n"), "E0309"));
}

TEST(Hostile, RandomBytes) {
  std::mt19937 random(12345);
  for (int trial = 0; trial < 50; ++trial) {
    std::string text(4096, '\0');
    for (char& c : text) c = static_cast<char>(random());
    EXPECT_FALSE(codes_of(text, options_with({})).empty());
  }
}

TEST(Hostile, EmptyFile) {
  EXPECT_EQ(codes_of(""), (std::vector<std::string>{"E0331"}));
  EXPECT_EQ(dump_ast(source_of("")), "");
}

TEST(Hostile, DimOfTenToTheEighteenElements) {
  std::string text = "dim T\nconst D = 64\nentry f(x : R[T, D]) -> R = sum(x)\n";
  EXPECT_EQ(codes_of(text, options_with({{"T", 1000000000000000000}})), (std::vector<std::string>{"E0310"}));
  std::string matmul = "dim T\nentry f(a : R[T, 1], b : R[1, T]) -> R = sum(a @ b)\n";
  EXPECT_EQ(codes_of(matmul, options_with({{"T", 1 << 30}})), (std::vector<std::string>{"E0310"}));
}

TEST(Hostile, SourceTooLarge) {
  std::string text(kMaxSourceBytes + 1, ' ');
  EXPECT_EQ(codes_of(text), (std::vector<std::string>{"E0207"}));
}

TEST(Hostile, UnreadableFile) {
  try {
    read_source("/nonexistent/presk/file.psk");
    FAIL() << "read a missing file";
  } catch (const UserError& error) {
    EXPECT_EQ(error.code(), "E0003");
  }
}

TEST(Hostile, ManyErrorsAreCapped) {
  std::string text;
  for (int i = 0; i < 10000; ++i) text += "let x = 1\n";
  auto codes = codes_of(text);
  EXPECT_FALSE(codes.empty());
  EXPECT_LE(codes.size(), 100u);
}

}  // namespace
}  // namespace presk::lang::testing
