// Type checking and lowering of valid programs: broadcasting, element kinds, named axes,
// folds over stacks, parameter trees, dropout in and out of training, entry selection, and
// the stability of site names under edits of other functions.
#include <gtest/gtest.h>

#include "lang_test_util.h"

namespace presk::lang::testing {
namespace {

const ir::Function& function(const ir::Program& program, const std::string& name) {
  const ir::Function* f = program.find_function(name);
  if (!f) throw std::runtime_error("no function " + name);
  return *f;
}

std::vector<std::string> ops_of(const ir::Function& f) {
  std::vector<std::string> ops;
  for (const ir::Let& let : f.lets) ops.push_back(ir::op_name(let.op));
  return ops;
}

TEST(Checker, BroadcastingIsNumpyStyle) {
  ir::Program p = compile_text(R"(
const D = 4
dim T
entry f(x : R[T, D], row : R[D], col : R[T, 1], s : R) -> R[T, D] = x + row * col - s
)", options_with({{"T", 3}}));
  const ir::Function& f = function(p, "f");
  EXPECT_EQ(ops_of(f), (std::vector<std::string>{"mul", "add", "sub"}));
  EXPECT_EQ(f.lets[0].type.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(f.lets[0].type.axes, (std::vector<std::string>{"T", "D"}));
}

TEST(Checker, IntegersMeetRealsThroughConvert) {
  ir::Program p = compile_text(R"(
dim T
entry f(x : R[T], i : Z[T]) -> R[T] = x * i + where(x < 0.5, x, 0)
entry g(i : Z[T]) -> Z[T] = i + 1
)", options_with({{"T", 3}}));
  EXPECT_EQ(ops_of(function(p, "f")),
            (std::vector<std::string>{"convert", "mul", "literal", "lt", "literal", "where", "add"}));
  const ir::Function& g = function(p, "g");
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"literal", "add"}));
  EXPECT_EQ(g.lets[0].type.kind, ir::ElemKind::Int);
}

// relu, max and min keep integers, and an integer literal among their operands (or a where's
// branch, negated too) takes the kind of the operand it meets, as in `i + 2`.
TEST(Checker, IntegerLiteralsInCallsTakeTheOperandsKind) {
  ir::Program p = compile_text(R"(
dim T
entry f(i : Z[T]) -> Z[T] = relu(i)
entry g(i : Z[T]) -> Z[T] = min(max(i, -2), 7) + max(3, i)
entry h(i : Z[T], c : B[T]) -> Z[T] = where(c, -4, i) + where(c, i, 5)
entry r(x : R[T]) -> R[T] = max(x, 2)
)", options_with({{"T", 3}}));
  for (const char* name : {"f", "g", "h"}) {
    for (const ir::Let& let : function(p, name).lets) {
      if (let.op != ir::Op::reshape) {
        EXPECT_EQ(let.type.kind, ir::ElemKind::Int) << name << ": " << ir::op_name(let.op);
      }
    }
  }
  EXPECT_EQ(ops_of(function(p, "f")), (std::vector<std::string>{"relu"}));
  EXPECT_EQ(function(p, "r").lets[0].type.kind, ir::ElemKind::Real);
}

TEST(Checker, ReductionsKeepTheNamedAxis) {
  ir::Program p = compile_text(R"(
const D = 4
dim T
entry f(x : R[T, D]) -> R[T, 1] = sum(x, axis: D) + max(x, axis: -1)
entry g(x : R[T, D]) -> R = mean(x)
)", options_with({{"T", 3}}));
  const ir::Function& f = function(p, "f");
  EXPECT_EQ(f.lets[0].attrs.axes, (std::vector<int64_t>{1}));
  EXPECT_EQ(f.lets[0].type.shape, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(ops_of(function(p, "g")), (std::vector<std::string>{"mean", "reshape"}));
}

TEST(Checker, ContractionsBecomeEinsumSpecs) {
  ir::Program p = compile_text(R"(
const D = 4
const H = 2
dim T
entry f(q : R[H, T, D], k : R[H, D, T], w : R[D, D]) -> R[H, T, T] = q @ k
entry g(x : R[T, D], w : R[D, D]) -> R[T, D] = einsum("td, dv -> tv", x, w) + x · w
)", options_with({{"T", 3}}));
  EXPECT_EQ(function(p, "f").lets[0].attrs.spec, "axy,ayz->axz");
  EXPECT_EQ(function(p, "g").lets[0].attrs.spec, "td,dv->tv");
  EXPECT_EQ(function(p, "g").lets[1].attrs.spec, "xy,yz->xz");
}

TEST(Checker, SlicesAndIndices) {
  ir::Program p = compile_text(R"(
const D = 4
dim T
entry f(x : R[T + 1, D]) -> R[T] = x[1 : T + 1, 2]
)", options_with({{"T", 3}}));
  const ir::Function& f = function(p, "f");
  EXPECT_EQ(ops_of(f), (std::vector<std::string>{"slice", "reshape"}));
  EXPECT_EQ(f.lets[0].attrs.starts, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(f.lets[0].attrs.stops, (std::vector<int64_t>{4, 3}));
}

// iota([shape], axis: k): Z of the listed extents (dims too), the index along axis k (default 0).
TEST(Checker, IotaHasTheListedShape) {
  ir::Program p = compile_text(R"(
const D = 4
dim T
entry f(x : R[T, D]) -> R[T, D] = x + iota([T, D], axis: 1) * 2 + reshape(iota([T]), [T, 1])
)", options_with({{"T", 3}}));
  const ir::Function& f = function(p, "f");
  EXPECT_EQ(f.lets[0].op, ir::Op::iota);
  EXPECT_EQ(f.lets[0].type.kind, ir::ElemKind::Int);
  EXPECT_EQ(f.lets[0].type.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(f.lets[0].type.axes, (std::vector<std::string>{"T", "D"}));
  EXPECT_EQ(f.lets[0].attrs.axes, (std::vector<int64_t>{1}));
  const ir::Let* second = nullptr;
  for (const ir::Let& let : f.lets) {
    if (let.op == ir::Op::iota && &let != &f.lets[0]) second = &let;
  }
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->type.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(second->attrs.axes, (std::vector<int64_t>{0}));
}

const char* kStacked = R"(
const D = 4
const L = 3
dim T
module Layer {
  param w : R[D, D] = normal(0.02)
  param b : R[D] = zeros
  fn apply(x : R[T, D]) -> R[T, D] = dropout(relu(x @ w + b), 0.25)
}
module Net {
  param layers : stack{L} Layer
  param out : R[D] = ones
  fn apply(x : R[T, D]) -> R[T, D] = (fold layers over x) * out
}
entry run(p : Net, x : R[T, D]) -> R[T, D] = p.apply(x)
)";

TEST(Checker, FoldOverAStack) {
  ir::Program p = compile_text(kStacked, options_with({{"T", 2}}));
  ASSERT_EQ(p.params.size(), 3u);
  EXPECT_EQ(p.params[0].path, "layers.w");
  EXPECT_EQ(p.params[0].type.shape, (std::vector<int64_t>{3, 4, 4}));
  EXPECT_EQ(p.params[0].stack_depth, 1);
  EXPECT_EQ(p.params[2].path, "out");
  EXPECT_EQ(p.params[2].stack_depth, 0);
  const ir::Function& net = function(p, "Net.apply");
  EXPECT_EQ(net.lets[0].op, ir::Op::fold);
  EXPECT_EQ(net.lets[0].attrs.callee, "Layer.apply");
  EXPECT_EQ(net.lets[0].attrs.path, "layers");
  // Callees first.
  EXPECT_EQ(p.functions.front().name, "Layer.apply");
  EXPECT_EQ(p.functions.back().name, "run");
}

TEST(Checker, DropoutExistsInTrainingOnly) {
  ir::Program inference = compile_text(kStacked, options_with({{"T", 2}}));
  EXPECT_EQ(ops_of(function(inference, "Layer.apply")),
            (std::vector<std::string>{"param", "contract", "param", "add", "relu"}));
  ir::Program training = compile_text(kStacked, options_with({{"T", 2}}, {}, "", true));
  const ir::Function& layer = function(training, "Layer.apply");
  EXPECT_EQ(layer.lets.back().op, ir::Op::dropout);
  EXPECT_EQ(layer.lets.back().attrs.rate, 0.25);
}

TEST(Checker, ConstOverridesFlowIntoDependentConsts) {
  ir::Program p = compile_text(R"(
const D = 4
const F = 4 * D
dim T
entry f(x : R[T, F]) -> R[T, F] = x
)", options_with({{"T", 2}}, {{"D", 8}}));
  EXPECT_EQ(p.functions[0].argument_types[0].shape, (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(p.consts, (std::vector<std::pair<std::string, int64_t>>{{"D", 8}, {"F", 32}}));
}

// A real const is folded exactly (a rational) and reaches the IR as its exact value: a
// decimal when it has one, else N/D; never a 17-digit binary64 approximation.
TEST(Checker, RealConstsAreFoldedExactly) {
  ir::Program p = compile_text(R"(
const E = -1e-5
const S = 0.5 / 3
const H = 1e-300 / 3 * 2
const Q = 1.0 / 16777216 + 1.0 / 1152921504606846976
const K = 2.5e3 * 4
const W = 1e-5
entry f(x : R) -> R = x * E + S + H + Q + K + W
)", options_with({}));
  std::vector<std::string> literals;
  for (const ir::Let& let : function(p, "f").lets) {
    if (let.op == ir::Op::literal) literals.push_back(let.attrs.literal);
  }
  EXPECT_EQ(literals, (std::vector<std::string>{"-0.00001", "1/6", "1/15e299", "68719476737/1152921504606846976",
                                                "10000", "1e-5"}));
}

TEST(Checker, EntrySelectionKeepsWhatItReaches) {
  auto source = read_source(repo_path("examples/gpt_tiny.psk"));
  ir::Program all = compile(source, options_with({{"T", 4}}));
  ir::Program logits = compile(source, options_with({{"T", 4}}, {}, "logits"));
  EXPECT_NE(all.find_function("loss"), nullptr);
  EXPECT_EQ(logits.find_function("loss"), nullptr);
  EXPECT_NE(logits.find_function("LayerNorm.apply"), nullptr);
  EXPECT_EQ(all.params.size(), logits.params.size());
  EXPECT_NE(all.find_param("blocks.ff.up.w"), nullptr);
}

TEST(Checker, EveryLetHasASpan) {
  ir::Program p = compile(read_source(repo_path("examples/gpt_tiny.psk")), options_with({{"T", 4}}));
  for (const ir::Function& f : p.functions) {
    for (const ir::Let& let : f.lets) EXPECT_TRUE(let.span.known()) << f.name;
  }
}

// Editing one function's body renames none of the other functions' sites.
TEST(SiteNames, StableUnderEditsOfOtherFunctions) {
  auto source = read_source(repo_path("examples/gpt_tiny.psk"));
  std::string edited = source->text;
  std::string before = "    let h = x + attn.apply(ln1.apply(x))";
  size_t at = edited.find(before);
  ASSERT_NE(at, std::string::npos);
  edited.replace(at, before.size(), "    let extra = exp(x) * 2\n    let h = x + attn.apply(ln1.apply(x + extra))");
  ir::Program original = compile(source, options_with({{"T", 4}}));
  ir::Program changed = compile(source_of(edited), options_with({{"T", 4}}));
  EXPECT_NE(ops_of(function(original, "Block.apply")), ops_of(function(changed, "Block.apply")));
  for (const ir::Function& f : original.functions) {
    if (f.name == "Block.apply") continue;
    const ir::Function& g = function(changed, f.name);
    ASSERT_EQ(f.lets.size(), g.lets.size()) << f.name;
    for (uint32_t i = 0; i < f.lets.size(); ++i) {
      EXPECT_EQ(f.site_name(i), g.site_name(i));
      EXPECT_EQ(f.lets[i].op, g.lets[i].op) << f.site_name(i);
      EXPECT_EQ(f.lets[i].attrs, g.lets[i].attrs) << f.site_name(i);
    }
  }
}

TEST(SiteNames, EveryComputedValueIsALet) {
  ir::Program p = compile(read_source(repo_path("examples/layernorm.psk")), options_with({{"T", 8}}));
  const ir::Function& f = function(p, "LayerNorm.apply");
  EXPECT_EQ(f.lets.size(), 12u);  // mean sub mul mean literal add rsqrt mul param mul param add
  EXPECT_EQ(f.site_name(4), "LayerNorm.apply/%4");
  EXPECT_EQ(f.lets[4].op, ir::Op::literal);
  EXPECT_EQ(f.lets[8].op, ir::Op::param);
  EXPECT_EQ(f.lets[8].attrs.path, "g");
}

TEST(Ast, DumpShowsDeclarationsAndBudget) {
  std::string ast = dump_ast(read_source(repo_path("examples/layernorm.psk")));
  EXPECT_NE(ast.find("module LayerNorm"), std::string::npos);
  EXPECT_NE(ast.find("precision budget rel_error=1e-3"), std::string::npos);
  EXPECT_NE(ast.find("let mu = (call mean x axis: D)"), std::string::npos) << ast;
}

}  // namespace
}  // namespace presk::lang::testing
