// bf16 sites against their definition, where the executor widens and rounds in pieces.
// A bf16 site's elementwise op runs tile by tile (ops_elementwise.cpp): operands widened a
// tile at a time, the op in f32, each tile rounded into the result. Every element must be the
// definition's — round_bf16(op(round_bf16(x), round_bf16(y))) for f32 arguments entering a
// bf16 site — for each way operand 1 is read (same shape, a row repeated with a period shorter
// and longer than a tile, each element repeated, a scalar), for a unary op, on the scalar and
// SIMD paths and on 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "exec/native/executor.h"
#include "exec/native/kernels.h"
#include "exec/native/numeric.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"

namespace presk::exec::native {
namespace {

TEST(Bf16Tiles, EachElementIsWidenComputeRound) {
  const std::string text = R"(
dim A
dim B
entry same(x : R[A, B], y : R[A, B]) -> R[A, B] = x * y
entry rows(x : R[A, B], y : R[B]) -> R[A, B] = x + y
entry repeat(x : R[A, B], y : R[A, 1]) -> R[A, B] = x / y
entry scalar(x : R[A, B]) -> R[A, B] = x - 3.0
entry maxima(x : R[A, B], y : R[A, B]) -> R[A, B] = max(x, y)
entry unary(x : R[A, B]) -> R[A, B] = tanh(x)
)";
  const auto source = std::make_shared<SourceFile>(SourceFile{"bf16_tiles.psk", text});
  const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 3.0e38, -1.0e-40, 1.00390625};
  auto value = [&](uint64_t i, uint64_t salt) {
    const uint64_t h = (i + salt) * 2654435761u % 1000003;
    return h % 53 == 0 ? specials[h % 8] : std::ldexp(static_cast<double>(h % 2001) - 1000.0, static_cast<int>(h % 13) - 9);
  };
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{3, 5000}, {700, 7}}) {  // periods past and under a tile
    lang::FrontendOptions options;
    options.dims = {{"A", rows}, {"B", cols}};
    const ir::Program program = lang::compile(source, options);
    Tensor x(ElementType::f32, {rows, cols}), y(ElementType::f32, {rows, cols}), r(ElementType::f32, {cols}),
        s(ElementType::f32, {rows, 1});
    for (uint64_t i = 0; i < x.element_count(); ++i) x.set(i, value(i, 1)), y.set(i, value(i, 2));
    for (uint64_t i = 0; i < r.element_count(); ++i) r.set(i, value(i, 3));
    for (uint64_t i = 0; i < s.element_count(); ++i) s.set(i, value(i, 4));
    auto in = [](const Tensor& t, uint64_t i) { return round_bf16(static_cast<float>(t.get(i))); };
    auto check = [&](const std::string& entry, const std::vector<Tensor>& args, const std::function<float(uint64_t)>& f) {
      for (ExecuteOptions run : {ExecuteOptions{1, false}, ExecuteOptions{2, false}, ExecuteOptions{1, true}}) {
        const Tensor got = execute(program, entry, uniform_realization(RealType::bf16), args, {}, run).at(0);
        for (uint64_t i = 0; i < got.element_count(); ++i) {
          const float want = round_bf16(f(i)), have = static_cast<float>(got.get(i));
          const bool same = std::isnan(want) ? std::isnan(have) : std::memcmp(&want, &have, 4) == 0;
          ASSERT_TRUE(same) << entry << " [" << rows << ", " << cols << "] threads " << run.threads << " scalar "
                            << run.force_scalar << " element " << i << ": " << have << " against " << want;
        }
      }
    };
    const uint64_t c = static_cast<uint64_t>(cols);
    check("same", {x, y}, [&](uint64_t i) { return in(x, i) * in(y, i); });
    check("rows", {x, r}, [&](uint64_t i) { return in(x, i) + in(r, i % c); });
    check("repeat", {x, s}, [&](uint64_t i) { return in(x, i) / in(s, i / c); });
    check("scalar", {x}, [&](uint64_t i) { return in(x, i) - 3.0f; });
    check("maxima", {x, y}, [&](uint64_t i) {
      const float p = in(x, i), q = in(y, i);
      if (std::isnan(p)) return q;
      if (std::isnan(q)) return p;
      return p > q ? p : q > p ? q : (std::signbit(p) ? q : p);  // maxNum, +0 above -0
    });
    check("unary", {x}, [&](uint64_t i) { return unary_scalar(UnaryFn::tanh, in(x, i)); });
  }
}

// softmax and log_softmax at a bf16 site, over rows that span several of the normalization's
// row blocks: every element against the definition (rows widened from bf16, m = max, d = x − m,
// e = exp(d), s = Σ e in order, e / s or d − log(s), rounded once to bf16), 1 and 2 threads.
TEST(Bf16Tiles, NormalizationsWidenAndRoundEachBlock) {
  const std::string text = R"(
dim A
dim B
entry probabilities(x : R[A, B]) -> R[A, B] = softmax(x, axis: -1)
entry log_probabilities(x : R[A, B]) -> R[A, B] = log_softmax(x, axis: -1)
)";
  const auto source = std::make_shared<SourceFile>(SourceFile{"bf16_normalize.psk", text});
  const int64_t rows = 53, cols = 37;
  lang::FrontendOptions options;
  options.dims = {{"A", rows}, {"B", cols}};
  const ir::Program program = lang::compile(source, options);
  Tensor x(ElementType::f32, {rows, cols});
  for (uint64_t i = 0; i < x.element_count(); ++i) x.set(i, std::ldexp(static_cast<double>(i * 7919 % 401) - 200.0, -5));
  for (const bool log : {false, true}) {
    for (ExecuteOptions run : {ExecuteOptions{1, false}, ExecuteOptions{2, false}, ExecuteOptions{1, true}}) {
      const Tensor got = execute(program, log ? "log_probabilities" : "probabilities", uniform_realization(RealType::bf16), {x}, {},
                                 run).at(0);
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<float> d(static_cast<size_t>(cols));
        float m = -INFINITY, s = 0.0f;
        for (int64_t j = 0; j < cols; ++j) m = std::max(m, round_bf16(static_cast<float>(x.get(static_cast<uint64_t>(r * cols + j)))));
        for (int64_t j = 0; j < cols; ++j) {
          d[static_cast<size_t>(j)] = round_bf16(static_cast<float>(x.get(static_cast<uint64_t>(r * cols + j)))) - m;
          s = j == 0 ? unary_scalar(UnaryFn::exp, d[0]) : s + unary_scalar(UnaryFn::exp, d[static_cast<size_t>(j)]);
        }
        for (int64_t j = 0; j < cols; ++j) {
          const float dj = d[static_cast<size_t>(j)];
          const float want = round_bf16(log ? dj - unary_scalar(UnaryFn::log, s) : unary_scalar(UnaryFn::exp, dj) / s);
          const float have = static_cast<float>(got.get(static_cast<uint64_t>(r * cols + j)));
          ASSERT_EQ(std::memcmp(&want, &have, 4), 0) << (log ? "log_softmax" : "softmax") << " threads " << run.threads
                                                      << " row " << r << " column " << j << ": " << have << " against " << want;
        }
      }
    }
  }
}

}  // namespace
}  // namespace presk::exec::native
