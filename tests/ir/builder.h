// Builds small IR programs by hand for the IR tests: a FunctionBuilder appends lets and
// arguments; sample_program() is a tiny GPT-shaped program (stacked blocks, calls, a
// fold, parameters) that verifies; all_ops_function() uses every elementwise, layout and
// normalization op once.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace presk::ir::testing {

inline Type real(std::vector<int64_t> shape, std::vector<std::string> axes = {}) {
  return Type{ElemKind::Real, std::move(shape), std::move(axes)};
}
inline Type integer(std::vector<int64_t> shape) {
  return Type{ElemKind::Int, std::move(shape), {}};
}
inline Type boolean(std::vector<int64_t> shape) {
  return Type{ElemKind::Bool, std::move(shape), {}};
}

inline Attrs axes(std::vector<int64_t> values) {
  Attrs attrs;
  attrs.axes = std::move(values);
  return attrs;
}
inline Attrs spec(std::string text) {
  Attrs attrs;
  attrs.spec = std::move(text);
  return attrs;
}
inline Attrs path(std::string text) {
  Attrs attrs;
  attrs.path = std::move(text);
  return attrs;
}
inline Attrs literal(std::string text) {
  Attrs attrs;
  attrs.literal = std::move(text);
  return attrs;
}
inline Attrs callee(std::string name, std::string module_path = "") {
  Attrs attrs;
  attrs.callee = std::move(name);
  attrs.path = std::move(module_path);
  return attrs;
}
inline Attrs slice(std::vector<int64_t> on, std::vector<int64_t> starts,
                   std::vector<int64_t> stops) {
  Attrs attrs;
  attrs.axes = std::move(on);
  attrs.starts = std::move(starts);
  attrs.stops = std::move(stops);
  return attrs;
}

class FunctionBuilder {
 public:
  explicit FunctionBuilder(std::string name, std::string module = "", bool entry = false) {
    function_.name = std::move(name);
    function_.module = std::move(module);
    function_.is_entry = entry;
  }
  ValueRef arg(std::string name, Type type) {
    function_.argument_names.push_back(std::move(name));
    function_.argument_types.push_back(std::move(type));
    return ValueRef::argument(static_cast<uint32_t>(function_.argument_types.size() - 1));
  }
  ValueRef let(Op op, std::vector<ValueRef> operands, Type type, Attrs attrs = {}) {
    function_.lets.push_back(Let{op, std::move(type), std::move(operands), std::move(attrs), {}});
    return ValueRef::let(static_cast<uint32_t>(function_.lets.size() - 1));
  }
  Function done(ValueRef result) {
    function_.results = {result};
    return std::move(function_);
  }

 private:
  Function function_;
};

inline Param param(std::string path, Type type, Initializer::Kind kind, double a = 0,
                   int stack = 0) {
  return Param{std::move(path), std::move(type), Initializer{kind, a, 0}, stack};
}

// LayerNorm over the last axis of R[8, 4], reading parameters g and b of its module.
inline Function layer_norm_function() {
  FunctionBuilder f("LayerNorm.apply", "LayerNorm");
  ValueRef x = f.arg("x", real({8, 4}, {"T", "D"}));
  ValueRef mu = f.let(Op::mean, {x}, real({8, 1}), axes({1}));
  ValueRef xc = f.let(Op::sub, {x, mu}, real({8, 4}, {"T", "D"}));
  ValueRef sq = f.let(Op::mul, {xc, xc}, real({8, 4}));
  ValueRef var = f.let(Op::mean, {sq}, real({8, 1}), axes({1}));
  ValueRef eps = f.let(Op::literal, {}, real({}), literal("1e-5"));
  ValueRef shifted = f.let(Op::add, {var, eps}, real({8, 1}));
  ValueRef scale = f.let(Op::rsqrt, {shifted}, real({8, 1}));
  ValueRef normed = f.let(Op::mul, {xc, scale}, real({8, 4}));
  ValueRef g = f.let(Op::param, {}, real({4}, {"D"}), path("g"));
  ValueRef scaled = f.let(Op::mul, {normed, g}, real({8, 4}));
  ValueRef b = f.let(Op::param, {}, real({4}), path("b"));
  return f.done(f.let(Op::add, {scaled, b}, real({8, 4}, {"T", "D"})));
}

// Block: x + gelu(LayerNorm(x) · w), with its parameters under a stack of 2.
inline Function block_function() {
  FunctionBuilder f("Block.apply", "Block");
  ValueRef x = f.arg("x", real({8, 4}));
  ValueRef normed = f.let(Op::call, {x}, real({8, 4}), callee("LayerNorm.apply", "ln"));
  ValueRef w = f.let(Op::param, {}, real({4, 4}), path("w"));
  ValueRef mixed = f.let(Op::contract, {normed, w}, real({8, 4}), spec("td,de->te"));
  ValueRef activated = f.let(Op::gelu_tanh, {mixed}, real({8, 4}));
  return f.done(f.let(Op::add, {x, activated}, real({8, 4})));
}

inline Function gpt_function() {
  FunctionBuilder f("GPT.apply", "GPT");
  ValueRef tokens = f.arg("tokens", integer({8}));
  ValueRef table = f.let(Op::param, {}, real({10, 4}), path("tok"));
  ValueRef x = f.let(Op::embed, {table, tokens}, real({8, 4}));
  ValueRef y = f.let(Op::fold, {x}, real({8, 4}), callee("Block.apply", "blocks"));
  ValueRef normed = f.let(Op::call, {y}, real({8, 4}), callee("LayerNorm.apply", "ln_f"));
  ValueRef head = f.let(Op::param, {}, real({4, 10}), path("head"));
  return f.done(f.let(Op::contract, {normed, head}, real({8, 10}), spec("td,dv->tv")));
}

inline Function loss_function() {
  FunctionBuilder f("loss", "GPT", true);
  ValueRef tokens = f.arg("tokens", integer({9}));
  ValueRef inputs = f.let(Op::slice, {tokens}, integer({8}), slice({0}, {0}, {8}));
  ValueRef targets = f.let(Op::slice, {tokens}, integer({8}), slice({0}, {1}, {9}));
  ValueRef logits = f.let(Op::call, {inputs}, real({8, 10}), callee("GPT.apply"));
  return f.done(f.let(Op::cross_entropy, {logits, targets}, real({})));
}

inline Program sample_program() {
  using K = Initializer::Kind;
  Program program;
  program.consts = {{"V", 10}, {"D", 4}, {"L", 2}};
  program.dims = {{"T", 8}};
  program.params = {param("tok", real({10, 4}), K::Normal, 0.02),
                    param("blocks.ln.g", real({2, 4}), K::Ones, 0, 1),
                    param("blocks.ln.b", real({2, 4}), K::Zeros, 0, 1),
                    param("blocks.w", real({2, 4, 4}), K::Normal, 0.1, 1),
                    param("ln_f.g", real({4}), K::Ones),
                    param("ln_f.b", real({4}), K::Zeros),
                    param("head", real({4, 10}), K::Zeros)};
  program.functions = {layer_norm_function(), block_function(), gpt_function(), loss_function()};
  return program;
}

// One function that uses every op not in sample_program(), with types that verify.
inline Function all_ops_function() {
  FunctionBuilder f("all_ops");
  ValueRef x = f.arg("x", real({2, 3}));
  ValueRef y = f.arg("y", real({3}));
  ValueRef s = f.let(Op::div, {x, y}, real({2, 3}));
  for (Op op : {Op::max, Op::min}) s = f.let(op, {s, y}, real({2, 3}));
  for (Op op : {Op::neg, Op::abs, Op::exp, Op::log, Op::sqrt, Op::tanh, Op::gelu_erf, Op::relu,
                Op::gelu_tanh_grad, Op::gelu_erf_grad, Op::erf, Op::erf_grad, Op::sin, Op::cos, Op::atan,
                Op::round, Op::floor, Op::ceil, Op::round_f16, Op::round_bf16}) {
    s = f.let(op, {s}, real({2, 3}));
  }
  ValueRef c = f.let(Op::lt, {s, y}, boolean({2, 3}));
  for (Op op : {Op::le, Op::gt, Op::ge, Op::eq, Op::ne}) f.let(op, {x, y}, boolean({2, 3}));
  s = f.let(Op::where, {c, s, x}, real({2, 3}));
  ValueRef i = f.let(Op::iota, {}, integer({2, 3}), axes({1}));
  ValueRef r = f.let(Op::convert, {i}, real({2, 3}));
  s = f.let(Op::add, {s, r}, real({2, 3}));
  Attrs rate;
  rate.rate = 0.1;
  s = f.let(Op::dropout, {s}, real({2, 3}), rate);
  f.let(Op::sum, {s}, real({1, 3}), axes({0}));
  f.let(Op::reduce_max, {s}, real({2, 1}), axes({1}));
  Attrs quantize = axes({1});
  quantize.starts = {3};
  quantize.spec = "absmax/one";
  f.let(Op::quantize, {s}, real({2, 3}), quantize);
  f.let(Op::softmax, {s}, real({2, 3}), axes({1}));
  f.let(Op::log_softmax, {s}, real({2, 3}), axes({0}));
  ValueRef t = f.let(Op::transpose, {s}, real({3, 2}), axes({1, 0}));
  ValueRef m = f.let(Op::reshape, {t}, real({2, 3}));
  ValueRef cat = f.let(Op::concat, {m, s}, real({4, 3}), axes({0}));
  ValueRef b = f.let(Op::broadcast, {y}, real({4, 3}));
  ValueRef sq = f.let(Op::slice, {f.let(Op::add, {cat, b}, real({4, 3}))}, real({3, 3}),
                      slice({0}, {1}, {4}));
  ValueRef masked = f.let(Op::causal_mask, {sq}, real({3, 3}));
  Attrs one;
  one.literal = "1";
  ValueRef at = f.let(Op::literal, {}, integer({}), one);
  ValueRef written = f.let(Op::cache_write, {masked, m, at}, real({3, 3}), axes({0}));
  ValueRef shifted = f.let(Op::causal_mask_at, {written, at}, real({3, 3}));
  return f.done(f.let(Op::sum, {shifted}, real({1, 1}), axes({0, 1})));
}

}  // namespace presk::ir::testing
