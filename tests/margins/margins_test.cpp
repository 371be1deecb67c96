// The margins stage against facts computed by hand: the Clopper–Pearson bound on known binomial
// cases (closed forms at 0 and n − 1 successes, an independent bisection at 1, a table value),
// ε*(δ) on margins whose order statistics are known, the margins of a program whose logits are
// its input, a realization never flipping more decisions than its margins allow, the coded
// errors, and a token-window file read for a Z[T] argument.
#include "precision/margins.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>

#include "common/error_code.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/weights.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"

namespace presk::precision {
namespace {

using testing::error_code;

ir::Program compile_text(const std::string& text, std::vector<lang::Binding> dims) {
  lang::FrontendOptions options;
  options.dims = std::move(dims);
  return lang::compile(std::make_shared<SourceFile>(SourceFile{"inline.psk", text}), options);
}

// P(X ≤ 1; n, p) in closed form, and its root at 1 − c by bisection in double.
double upper_after_one(int64_t n, double c) {
  auto cdf = [n](double p) { return std::pow(1 - p, n) + n * p * std::pow(1 - p, n - 1); };
  double low = 0, high = 1;
  for (int i = 0; i < 200; ++i) (cdf((low + high) / 2) > 1 - c ? low : high) = (low + high) / 2;
  return high;
}

TEST(ClopperPearson, KnownBinomialCases) {
  for (int64_t n : {1, 10, 100, 2995, 118016}) {
    for (double c : {0.5, 0.9, 0.95, 0.99}) {
      // 0 successes: 1 − (1 − c)^(1/n), written without cancellation.
      const double none = -std::expm1(std::log1p(-c) / static_cast<double>(n));
      EXPECT_NEAR(static_cast<double>(clopper_pearson_upper(0, n, c)), none, 1e-14 * none) << n << " " << c;
      if (n > 1) {
        const double all_but_one = std::pow(c, 1.0 / static_cast<double>(n));  // n − 1 successes
        EXPECT_NEAR(static_cast<double>(clopper_pearson_upper(n - 1, n, c)), all_but_one, 1e-13) << n << " " << c;
        EXPECT_NEAR(static_cast<double>(clopper_pearson_upper(1, n, c)), upper_after_one(n, c), 1e-12) << n << " " << c;
      }
      EXPECT_EQ(clopper_pearson_upper(n, n, c), 1.0L);
    }
  }
  // Tables of the exact binomial interval: 1 in 10 at 95 %, one-sided: 0.3942; 3 in 50: 0.1478.
  EXPECT_NEAR(static_cast<double>(clopper_pearson_upper(1, 10, 0.95)), 0.3941633024365047, 1e-12);
  EXPECT_NEAR(static_cast<double>(clopper_pearson_upper(3, 50, 0.95)), 0.1478371763641812, 1e-12);
  // The binomial CDF itself: Bin(100, 0.1) at 4 and 5.
  EXPECT_NEAR(static_cast<double>(binomial_cdf(4, 100, 0.1L)), 0.023711082663476823, 1e-15);
  EXPECT_NEAR(static_cast<double>(binomial_cdf(5, 100, 0.1L)), 0.057576886487033956, 1e-15);
}

TEST(ClopperPearson, MinimumPositions) {
  // (1 − δ)^n ≤ 1 − c: n ≥ ln 0.05 / ln 0.9 = 28.43 and ln 0.05 / ln 0.999 = 2994.23.
  EXPECT_EQ(minimum_positions(0.1, 0.95), 29);
  EXPECT_EQ(minimum_positions(1e-3, 0.95), 2995);
  EXPECT_EQ(minimum_positions(0.5, 0.5), 1);
  EXPECT_EQ(error_code([] { check_positions(2994, 1e-3, 0.95); }), "E1153");
  EXPECT_EQ(error_code([] { check_positions(2995, 1e-3, 0.95); }), "none");
}

TEST(EpsilonStar, TheOrderStatisticHalved) {
  // 100 margins (k + 1)/64: at δ = 0.1 and 95 %, K = 4 (P(X ≤ 4; 100, 0.1) = 0.0237 ≤ 0.05 <
  // P(X ≤ 5) = 0.0576), so ε* is the fifth smallest margin halved, 5/128.
  std::vector<double> sorted(100);
  for (int k = 0; k < 100; ++k) sorted[k] = (k + 1) / 64.0;
  const EpsilonStar star = epsilon_star(sorted, 0.1, 0.95);
  EXPECT_EQ(star.positions, 100);
  EXPECT_EQ(star.allowed, 4);
  EXPECT_EQ(star.epsilon, 5 / 128.0);
  EXPECT_EQ(star.close_calls, 4);
  EXPECT_LE(star.upper, 0.1);
  EXPECT_GT(static_cast<double>(clopper_pearson_upper(5, 100, 0.95)), 0.1);
  // Ties: three margins of 1/4 and 97 of 1/2. The fifth smallest is 1/2, so ε* = 1/4, and only
  // the three below 2ε* are close calls.
  std::vector<double> tied(100, 0.5);
  std::fill(tied.begin(), tied.begin() + 3, 0.25);
  const EpsilonStar at_ties = epsilon_star(tied, 0.1, 0.95);
  EXPECT_EQ(at_ties.epsilon, 0.25);
  EXPECT_EQ(at_ties.close_calls, 3);
  // Nearest-rank quantiles.
  EXPECT_EQ(margin_quantile(sorted, 0), 1 / 64.0);
  EXPECT_EQ(margin_quantile(sorted, 0.5), 50 / 64.0);
  EXPECT_EQ(margin_quantile(sorted, 0.011), 2 / 64.0);
  EXPECT_EQ(margin_quantile(sorted, 1), 100 / 64.0);
}

TEST(EpsilonStar, CodedErrors) {
  const std::vector<double> sorted(100, 1.0);
  for (double delta : {0.0, 1.0, -0.5, 2.0, std::nan("")}) {
    EXPECT_EQ(error_code([&] { epsilon_star(sorted, delta, 0.95); }), "E1151") << delta;
  }
  for (double confidence : {0.0, 1.0, 1.5, std::nan("")}) {
    EXPECT_EQ(error_code([&] { epsilon_star(sorted, 0.1, confidence); }), "E1152") << confidence;
  }
  EXPECT_EQ(error_code([&] { epsilon_star(sorted, 1e-2, 0.95); }), "E1153");  // needs 299
  EXPECT_EQ(error_code([&] { epsilon_star({}, 0.1, 0.95); }), "E1153");
}

constexpr const char* kProgram =
    "const V = 3\n"
    "dim N\n"
    "entry logits(x : R[N, 2, V]) -> R[N, 2, V] = x * 1\n"
    "entry total(x : R[N, 2, V]) -> R = sum(x)\n"
    "entry one(x : R[N, 2, V]) -> R[N, 2, 1] = sum(x, axis: V)\n";

TEST(Margins, EntryMustReturnLogits) {
  const ir::Program program = compile_text(kProgram, {{"N", 5}});
  EXPECT_EQ(margin_shape(reference::find_entry(program, "logits")).positions, 10);
  EXPECT_EQ(margin_shape(reference::find_entry(program, "logits")).classes, 3);
  EXPECT_EQ(error_code([&] { margin_shape(reference::find_entry(program, "total")); }), "E1150");
  EXPECT_EQ(error_code([&] { margin_shape(reference::find_entry(program, "one")); }), "E1150");
}

// 10 samples of logits R[5, 2, 3] (100 positions): position p has margin (σ(p) + 1)/64 for a
// shuffle σ, its top class p mod 3, the second 1 and the third −1.
std::vector<reference::HostTensor> sample_of(int64_t k, const std::vector<int>& shuffle) {
  reference::HostTensor x;
  x.type = ir::Type{ir::ElemKind::Real, {5, 2, 3}, {}, {}};
  for (int r = 0; r < 10; ++r) {
    const int p = static_cast<int>(k) * 10 + r;
    const double margin = (shuffle[p] + 1) / 64.0;
    for (int j = 0; j < 3; ++j) x.reals.push_back(j == p % 3 ? 1 + margin : j == (p + 1) % 3 ? 1.0 : -1.0);
  }
  return {x};
}

TEST(Margins, HandComputedLogits) {
  const ir::Program program = compile_text(kProgram, {{"N", 5}});
  std::vector<int> shuffle(100);
  std::iota(shuffle.begin(), shuffle.end(), 0);
  std::shuffle(shuffle.begin(), shuffle.end(), std::mt19937(7));
  for (int threads : {1, 3, 16}) {
    MarginOptions options;
    options.threads = threads;
    const Margins margins = measure_margins(program, reference::find_entry(program, "logits"), {}, 10,
                                            [&](int64_t k) { return sample_of(k, shuffle); }, options);
    ASSERT_EQ(margins.sorted.size(), 100u);
    for (int k = 0; k < 100; ++k) EXPECT_EQ(margins.sorted[k], (k + 1) / 64.0) << k;
    EXPECT_EQ(epsilon_star(margins.sorted, 0.1, 0.95).epsilon, 5 / 128.0);
    EXPECT_TRUE(margins.realized.empty());
  }
}

TEST(Margins, ARealizationFlipsNoMoreThanItsMarginsAllow) {
  const ir::Program program = compile_text(kProgram, {{"N", 5}});
  std::mt19937 random(11);
  std::normal_distribution<double> normal(0, 1);
  // Logits close together at several scales, so that f32 and bf16 roundings flip some decisions.
  std::vector<std::vector<reference::HostTensor>> samples(40);
  for (auto& sample : samples) {
    reference::HostTensor x;
    x.type = ir::Type{ir::ElemKind::Real, {5, 2, 3}, {}, {}};
    const double scale = std::ldexp(1.0, static_cast<int>(random() % 24) - 26);
    for (int i = 0; i < 30; ++i) x.reals.push_back(1 + scale * normal(random));
    sample = {x};
  }
  const char* names[] = {"f64", "f32", "bf16"};
  std::vector<exec::native::Realization> realizations;
  for (const char* name : names) realizations.push_back(exec::native::load_realization(name, program));
  MarginOptions options;
  options.threads = 4;
  for (const exec::native::Realization& realization : realizations) options.realizations.push_back(&realization);
  const Margins margins = measure_margins(program, reference::find_entry(program, "logits"), {}, 40,
                                          [&](int64_t k) { return samples[k]; }, options);
  ASSERT_EQ(margins.realized.size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    const RealizedMargins& realized = margins.realized[r];
    EXPECT_LE(realized.flipped, realized.allowed) << names[r];
    if (r == 0) {
      EXPECT_EQ(realized.gap, 0);
      EXPECT_EQ(realized.flipped, 0);
    } else {
      EXPECT_GT(realized.flipped, 0) << names[r];  // the check has something to check
    }
  }
}

TEST(Margins, NonFiniteLogitsAreCoded) {
  const ir::Program program = compile_text(kProgram, {{"N", 5}});
  reference::HostTensor x;
  x.type = ir::Type{ir::ElemKind::Real, {5, 2, 3}, {}, {}};
  x.reals.assign(30, 1.0);
  x.reals[7] = INFINITY;
  EXPECT_EQ(error_code([&] {
              measure_margins(program, reference::find_entry(program, "logits"), {}, 1,
                              [&](int64_t) { return std::vector<reference::HostTensor>{x}; }, {});
            }),
            "E1154");
}

TEST(TokenWindows, AZArgumentReadsEachWindowsFirstTokens) {
  const ir::Program program = compile_text(
      "dim T\n"
      "entry first(tokens : Z[T]) -> Z[T] = tokens\n"
      "entry both(tokens : Z[T + 1]) -> Z[T + 1] = tokens\n",
      {{"T", 4}});
  testing_support::TempFolder folder;
  Tensor windows(ElementType::i32, {3, 5});
  for (uint64_t i = 0; i < 15; ++i) windows.set_integer(i, static_cast<int64_t>(i));
  const std::string path = folder.file("windows.safetensors");
  write_safetensors(path, {{"tokens", windows}});
  const reference::DataFile file(reference::find_entry(program, "first"), path);
  EXPECT_EQ(file.samples(), 3);
  EXPECT_EQ(file.sample(2)[0].integers, (std::vector<int64_t>{10, 11, 12, 13}));
  const reference::DataFile whole(reference::find_entry(program, "both"), path);
  EXPECT_EQ(whole.sample(1)[0].integers, (std::vector<int64_t>{5, 6, 7, 8, 9}));
  // Only one token shorter: a window two tokens longer is still the wrong shape.
  const ir::Program shorter = compile_text("dim T\nentry first(tokens : Z[T]) -> Z[T] = tokens\n", {{"T", 3}});
  EXPECT_EQ(error_code([&] { reference::DataFile(reference::find_entry(shorter, "first"), path); }), "E0515");
}

}  // namespace
}  // namespace presk::precision
