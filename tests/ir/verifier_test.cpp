// The verifier: it accepts well-typed programs, and rejects each kind of violation with
// its code (IR read from a file) or as an internal error (IR produced by a pass).
#include "ir/verifier.h"

#include <gtest/gtest.h>

#include <functional>

#include "ir/builder.h"

namespace presk::ir {
namespace {

using namespace testing;

std::string user_error_code(const Program& program) {
  try {
    verify_program(program, VerifyMode::UserInput);
  } catch (const UserError& error) {
    return error.code();
  }
  return "none";
}

TEST(Verifier, AcceptsTheSampleProgram) {
  EXPECT_NO_THROW(verify_program(sample_program()));
  EXPECT_NO_THROW(verify_program(sample_program(), VerifyMode::UserInput));
}

TEST(Verifier, AcceptsEveryOp) {
  Program program;
  program.functions = {all_ops_function()};
  EXPECT_NO_THROW(verify_program(program));
}

TEST(Verifier, AcceptsUnreachedParameterReadsBySuffix) {
  Program program = sample_program();
  program.functions.pop_back();  // no entry: contexts unknown, reads checked by path suffix
  EXPECT_NO_THROW(verify_program(program));
  program.functions[0].lets[8].attrs.path = "gamma";
  EXPECT_EQ(user_error_code(program), "E0467");
}

struct Mutation {
  const char* code;
  const char* what;
  std::function<void(Program&)> apply;
};

Let& let_of(Program& program, const char* function, uint32_t index) {
  for (Function& f : program.functions) {
    if (f.name == function) return f.lets.at(index);
  }
  throw std::out_of_range(function);
}

const Mutation kMutations[] = {
    {"E0450", "operand is a later let",
     [](Program& p) { let_of(p, "LayerNorm.apply", 1).operands[1] = ValueRef::let(5); }},
    {"E0450", "operand is a missing argument",
     [](Program& p) { let_of(p, "LayerNorm.apply", 1).operands[0] = ValueRef::argument(3); }},
    {"E0451", "arity",
     [](Program& p) { let_of(p, "LayerNorm.apply", 6).operands.push_back(ValueRef::argument(0)); }},
    {"E0452", "no broadcast",
     [](Program& p) { let_of(p, "Block.apply", 4).operands[1] = ValueRef::let(1); }},
    {"E0452", "kind", [](Program& p) { let_of(p, "loss", 3).op = Op::add; }},
    {"E0453", "reduction axis",
     [](Program& p) { let_of(p, "LayerNorm.apply", 0).attrs.axes = {2}; }},
    {"E0453", "reduction axes order",
     [](Program& p) {
       let_of(p, "LayerNorm.apply", 0).attrs.axes = {1, 0};
     }},
    {"E0454", "contract spec",
     [](Program& p) { let_of(p, "Block.apply", 2).attrs.spec = "td,de->tq"; }},
    {"E0454", "contract spec syntax",
     [](Program& p) { let_of(p, "Block.apply", 2).attrs.spec = "td de"; }},
    {"E0455", "slice range", [](Program& p) { let_of(p, "loss", 1).attrs.stops = {10}; }},
    {"E0455", "transpose",
     [](Program& p) {
       Let& l = let_of(p, "Block.apply", 3);
       l.op = Op::transpose;
       l.attrs.axes = {0, 0};
     }},
    {"E0455", "reshape count",
     [](Program& p) {
       Let& l = let_of(p, "Block.apply", 3);
       l.op = Op::reshape;
       l.type.shape = {8, 5};
     }},
    {"E0456", "embed index",
     [](Program& p) { let_of(p, "GPT.apply", 1).operands[1] = ValueRef::let(0); }},
    {"E0456", "cross_entropy targets",
     [](Program& p) { let_of(p, "loss", 3).operands[1] = ValueRef::argument(0); }},
    {"E0457", "literal text",
     [](Program& p) { let_of(p, "LayerNorm.apply", 4).attrs.literal = "1e"; }},
    {"E0458", "declared type",
     [](Program& p) {
       let_of(p, "LayerNorm.apply", 7).type.shape = {8, 5};
     }},
    {"E0459", "unread attribute",
     [](Program& p) { let_of(p, "LayerNorm.apply", 7).attrs.rate = 0.5; }},
    {"E0460", "unknown callee",
     [](Program& p) { let_of(p, "Block.apply", 0).attrs.callee = "Nope.apply"; }},
    {"E0461", "callee defined later",
     [](Program& p) { std::swap(p.functions[0], p.functions[1]); }},
    {"E0462", "call argument type",
     [](Program& p) { let_of(p, "loss", 2).operands[0] = ValueRef::argument(0); }},
    {"E0463", "fold callee not T -> T",
     [](Program& p) {
       FunctionBuilder f("row_mean");
       ValueRef x = f.arg("x", real({8, 4}));
       p.functions.insert(p.functions.begin(),
                          f.done(f.let(Op::mean, {x}, real({8, 1}), axes({1}))));
       let_of(p, "GPT.apply", 2).attrs.callee = "row_mean";
     }},
    {"E0464", "no result", [](Program& p) { p.functions[0].results.clear(); }},
    {"E0464", "dangling result", [](Program& p) { p.functions[0].results = {ValueRef::let(99)}; }},
    {"E0465", "duplicate function", [](Program& p) { p.functions[1].name = "LayerNorm.apply"; }},
    {"E0466", "duplicate parameter", [](Program& p) { p.params[5].path = "ln_f.g"; }},
    {"E0467", "missing parameter", [](Program& p) { p.params[5].path = "ln_f.beta"; }},
    {"E0468", "parameter type", [](Program& p) { p.params[4].type.shape = {5}; }},
    {"E0468", "parameter stack depth",
     [](Program& p) {
       p.params[4] = param("ln_f.g", real({1, 4}), Initializer::Kind::Ones, 0, 1);
     }},
    {"E0469", "stack with no parameters",
     [](Program& p) { let_of(p, "GPT.apply", 2).attrs.path = "layers"; }},
    {"E0469", "stack layer counts differ",
     [](Program& p) {
       p.params[3].type.shape = {3, 4, 4};
     }},
    {"E0470", "negative extent",
     [](Program& p) {
       p.functions[0].argument_types[0].shape = {-8, 4};
     }},
    {"E0470", "axis names", [](Program& p) { p.functions[0].argument_types[0].axes = {"T"}; }},
    {"E0471", "argument names", [](Program& p) { p.functions[0].argument_names.push_back("y"); }},
    {"E0473", "stack depth beyond rank", [](Program& p) { p.params[4].stack_depth = 2; }},
    {"E0473", "initializer", [](Program& p) { p.params[0].init.a = -1; }},
    {"E0474", "duplicate dim", [](Program& p) { p.dims.emplace_back("T", 9); }},
    {"E0475", "empty function name", [](Program& p) { p.functions[3].name = ""; }},
};

TEST(Verifier, RejectsEachViolationWithItsCode) {
  for (const Mutation& mutation : kMutations) {
    Program program = sample_program();
    mutation.apply(program);
    EXPECT_EQ(user_error_code(program), mutation.code) << mutation.what;
    EXPECT_THROW(verify_program(program, VerifyMode::AfterPass), InternalError) << mutation.what;
  }
}

TEST(Verifier, AfterPassNamesTheSite) {
  Program program = sample_program();
  let_of(program, "LayerNorm.apply", 7).type.shape = {8, 5};
  try {
    verify_program(program);
    FAIL() << "no error";
  } catch (const InternalError& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("LayerNorm.apply/%7"), std::string::npos) << message;
    EXPECT_NE(message.find("E0458"), std::string::npos) << message;
  }
}

TEST(Verifier, ReportsSeveralUserErrorsAtOnce) {
  Program program = sample_program();
  let_of(program, "LayerNorm.apply", 0).attrs.axes = {1, 0};
  let_of(program, "Block.apply", 2).attrs.spec = "t,de->te";
  try {
    verify_program(program, VerifyMode::UserInput);
    FAIL() << "no error";
  } catch (const UserError& error) {
    EXPECT_EQ(error.diagnostics().size(), 2u);
  }
}

// f0 ← f1 ← … where each calls the previous twice at different paths: 2^18 contexts.
TEST(Verifier, BoundsTheNumberOfCallContexts) {
  Program program;
  FunctionBuilder leaf("f0");
  ValueRef x = leaf.arg("x", real({}));
  program.functions.push_back(leaf.done(x));
  for (int i = 1; i <= 18; ++i) {
    FunctionBuilder f("f" + std::to_string(i), "", i == 18);
    ValueRef a = f.arg("x", real({}));
    std::string previous = "f" + std::to_string(i - 1);
    ValueRef b = f.let(Op::call, {a}, real({}), callee(previous, "a"));
    program.functions.push_back(f.done(f.let(Op::call, {b}, real({}), callee(previous, "b"))));
  }
  EXPECT_EQ(user_error_code(program), "E0472");
}

}  // namespace
}  // namespace presk::ir
