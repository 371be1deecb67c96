// The executor's op implementations, by family; each computes one let at a site of type
// `site` from operand values (docs/semantics.md says what each computes and in which order).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "exec/native/executor.h"
#include "exec/native/value.h"

namespace presk::exec::native {

struct OpContext {
  const Realization& realization;
  const ExecuteOptions& options;
  RealType site;  // the let's realized type (for real lets)
  // Where the let runs: its site name ("SelfAttention.apply/%12"), the module path of the
  // call it runs in ("blocks.attn"; "" in the entry) and the layer index of each enclosing
  // stack, outermost first (what a training run's dropout mask is keyed by).
  std::string_view site_name;
  std::string_view module_path;
  std::span<const int64_t> layers;
  // Whether a causal mask overwrites this let's values above the diagonal of its last two
  // axes before anything reads them (the executor's `masked_above_diagonal`): an op may leave
  // them unspecified.
  bool masked_above_diagonal = false;
  // Whether operand 0 is read by no later let and by no other operand of this one: an op may
  // then write its result over operand 0's storage when nothing else holds it.
  bool first_operand_dies = false;
  // A contraction's epilogue (the executor's `epilogues`): the one `add` that reads this
  // contraction adds `bias`, a vector along its last axis, to it; the contraction returns that
  // sum (bias + C when `bias_first`), each element one addition in the site's type (bf16: C
  // rounded to bf16 first, as the add would read it, and the sum rounded again).
  const Value* bias = nullptr;
  bool bias_first = false;
};

// The four IEEE arithmetic ops over a run (ops_elementwise.cpp): out[i] = a[i] op b[i] for
// i < n, or a[i] op b[0] when `one`; out may alias a. Same bits on every clone.
enum class Arith : uint8_t { add, sub, mul, div };
void arith_run(Arith op, float* out, const float* a, const float* b, bool one, size_t n);
void arith_run(Arith op, double* out, const double* a, const double* b, bool one, size_t n);

Value run_literal(const ir::Let& let, const OpContext& ctx);
Value run_iota(const ir::Let& let);
Value run_elementwise(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx);
Value run_reduction(const ir::Let& let, const Value& operand, const OpContext& ctx);
Value run_normalization(const ir::Let& let, const Value& operand, const OpContext& ctx);
// ops_quantize.cpp; `values`: quantize(p, v)'s v (spec "weights|…"), else null.
Value run_quantize(const ir::Let& let, const Value& operand, const Value* values, const OpContext& ctx);
Value run_cross_entropy(const ir::Let& let, const Value& logits, const Value& targets, const OpContext& ctx);
Value run_contract(const ir::Let& let, const Value& a, const Value& b, const OpContext& ctx);
Value run_layout(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx);
Value run_embed(const ir::Let& let, const Value& table, const Value& index, const OpContext& ctx);
// The decode ops (ops_decode.cpp). cache_write writes into the cache's storage when `own` (the
// executor hands it the cache to own and the cache is in the site's type), else into a copy.
Value run_cache_write(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx, bool own);
Value run_causal_mask_at(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx);

// Σ of terms t[offsets[0]], t[offsets[1]], … under the realization's order (sequential and
// blocked: s = t0, s += t1, …; interleaved n: term m into partial m mod n, then the tree).
template <typename C>
C ordered_sum(const C* base, const std::vector<size_t>& offsets, const Order& order);

// Combines partial sums p[0..n) by the stated tree: while more than one, p[r] = p[2r] + p[2r+1]
// (an odd last one carried up unchanged).
template <typename C>
C combine_partials(std::vector<C> partials);

// y = fn(y) elementwise by the type family's kernel (C = double: f64; float: f32), in chunks.
void apply_unary(UnaryFn fn, Buffer<double>& values, const OpContext& ctx);
void apply_unary(UnaryFn fn, Buffer<float>& values, const OpContext& ctx);
// to[i] = fn(from[i]) for i < to.size(), the same kernel out of place.
void apply_unary(UnaryFn fn, const double* from, Buffer<double>& to, const OpContext& ctx);
void apply_unary(UnaryFn fn, const float* from, Buffer<float>& to, const OpContext& ctx);

// Splits [0, n) into chunks run on up to `threads` workers (elementwise kernels).
void parallel_chunks(size_t n, int threads, const std::function<void(size_t, size_t)>& f);

}  // namespace presk::exec::native
