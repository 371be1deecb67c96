// The margins of an entry and ε*(δ) (margins.h).
#include "precision/margins.h"

#include <fmt/format.h>
#include <mpfr.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "exec/native/executor.h"
#include "exec/reference/interpreter.h"
#include "support/diagnostics.h"
#include "support/ranks.h"

namespace presk::precision {
namespace {

using Exact = reference::Value<reference::MpfrArith>;
constexpr long double kMinusInfinity = -std::numeric_limits<long double>::infinity();

// A 53-bit MPFR number for directed roundings into binary64.
class Binary64 {
 public:
  Binary64() { mpfr_init2(number_, 53); }
  ~Binary64() { mpfr_clear(number_); }
  Binary64(const Binary64&) = delete;
  Binary64& operator=(const Binary64&) = delete;
  // x − y rounded down (rnd = MPFR_RNDD) or up (MPFR_RNDU), as a binary64 number.
  double difference(const __mpfr_struct* x, const __mpfr_struct* y, mpfr_rnd_t rnd) {
    mpfr_sub(number_, x, y, rnd);
    return mpfr_get_d(number_, rnd);
  }
  const __mpfr_struct* set(double x) {
    mpfr_set_d(number_, x, MPFR_RNDN);  // exact: 53 bits
    return number_;
  }

 private:
  mpfr_t number_;
};

// What one sample contributes: its margins (written in place), its flips and its largest gap.
struct SampleResult {
  int64_t flipped = 0;
  double gap = 0;
};

// The first index of the largest of row[0 … classes).
int64_t exact_argmax(const Exact& logits, int64_t row, int64_t classes) {
  int64_t top = row * classes;
  for (int64_t j = top + 1; j < (row + 1) * classes; ++j) {
    if (mpfr_cmp(logits.real(j), logits.real(top)) > 0) top = j;
  }
  return top - row * classes;
}

int64_t native_argmax(const Tensor& logits, int64_t row, int64_t classes) {
  int64_t top = 0;
  double best = logits.get(static_cast<uint64_t>(row * classes));
  for (int64_t j = 1; j < classes; ++j) {
    const double value = logits.get(static_cast<uint64_t>(row * classes + j));
    if (value > best || (std::isnan(best) && !std::isnan(value))) best = value, top = j;
  }
  return top;
}

// Each position's margin, top − second rounded down, into `margins` (E1154 if not finite).
void record_margins(const Exact& logits, const MarginShape& shape, int64_t sample, double* margins) {
  Binary64 scratch;
  for (int64_t i = 0; i < logits.size(); ++i) {
    if (!mpfr_number_p(logits.real(i))) {
      user_error("E1154").hint("margins need finite logits: check the weights and the data")
          << "exact logit " << i << " of sample " << sample << " is not finite";
    }
  }
  for (int64_t row = 0; row < shape.positions; ++row) {
    const int64_t top = exact_argmax(logits, row, shape.classes);
    const __mpfr_struct* second = nullptr;
    for (int64_t j = 0; j < shape.classes; ++j) {
      const __mpfr_struct* x = logits.real(row * shape.classes + j);
      if (j != top && (second == nullptr || mpfr_cmp(x, second) > 0)) second = x;
    }
    margins[row] = scratch.difference(logits.real(row * shape.classes + top), second, MPFR_RNDD);
  }
}

// A realization's flips and largest gap, |native − exact| rounded up, on one sample.
SampleResult compare_native(const Tensor& native, const Exact& exact, const MarginShape& shape) {
  SampleResult result;
  Binary64 value, difference;
  for (int64_t i = 0; i < exact.size(); ++i) {
    const double x = native.get(static_cast<uint64_t>(i));
    if (!std::isfinite(x)) {
      result.gap = std::numeric_limits<double>::infinity();
      continue;
    }
    const __mpfr_struct* v = value.set(x);
    const double gap = mpfr_cmp(v, exact.real(i)) >= 0 ? difference.difference(v, exact.real(i), MPFR_RNDU)
                                                        : difference.difference(exact.real(i), v, MPFR_RNDU);
    result.gap = std::max(result.gap, gap);
  }
  for (int64_t row = 0; row < shape.positions; ++row) {
    result.flipped += native_argmax(native, row, shape.classes) != exact_argmax(exact, row, shape.classes);
  }
  return result;
}

struct SampleRun {
  const ir::Program& program;
  const ir::Function& entry;
  const reference::ParameterStore& parameters;
  const SampleInputs& inputs;
  const std::vector<exec::native::PreparedParameters>& prepared;  // per realization
  const MarginOptions& options;
  MarginShape shape;
};

// Sample k: its margins into `margins`, and what each realization does on it.
std::vector<SampleResult> run_sample(const SampleRun& run, int64_t k, int threads, double* margins) {
  const reference::MpfrArith arith(run.options.bits);
  const std::vector<reference::HostTensor> host = run.inputs(k);
  std::vector<Exact> arguments;
  for (const reference::HostTensor& input : host) arguments.push_back(reference::to_value(arith, input));
  reference::RunOptions options;
  options.bits = run.options.bits;
  options.threads = threads;
  const std::vector<Exact> exact = reference::run_function(run.program, run.entry, run.parameters, arguments, options);
  internal_assert(exact.size() == 1 && exact[0].size() == run.shape.positions * run.shape.classes);
  record_margins(exact[0], run.shape, k, margins);
  std::vector<SampleResult> results;
  const std::vector<Tensor> tensors = reference::to_tensors(host);
  for (size_t r = 0; r < run.prepared.size(); ++r) {
    const std::vector<Tensor> native = exec::native::execute(run.program, run.entry.name, *run.options.realizations[r],
                                                             tensors, run.prepared[r], {threads, false});
    internal_assert(native.size() == 1);
    results.push_back(compare_native(native[0], exact[0], run.shape));
  }
  return results;
}

// log(e^a + e^b).
long double log_add(long double a, long double b) {
  if (a < b) std::swap(a, b);
  if (b == kMinusInfinity) return a;
  return a + log1pl(expl(b - a));
}

// Calls step(i, log P(X ≤ i)) for i = 0, 1, … ≤ last while it returns true; X ~ Bin(n, p), 0 < p < 1.
template <class Step>
void walk_binomial_cdf(int64_t last, int64_t n, long double p, Step step) {
  const long double log_odds = logl(p) - log1pl(-p);
  long double term = static_cast<long double>(n) * log1pl(-p);  // log P(X = 0)
  long double total = term;
  for (int64_t i = 0; i <= last && step(i, total); ++i) {
    // P(X = i + 1) = P(X = i) · (n − i)/(i + 1) · p/(1 − p)
    term += logl(static_cast<long double>(n - i)) - logl(static_cast<long double>(i + 1)) + log_odds;
    total = std::min(log_add(total, term), 0.0L);
  }
}

long double log_binomial_cdf(int64_t k, int64_t n, long double p) {
  if (k < 0) return kMinusInfinity;
  if (k >= n || p <= 0) return 0;
  if (p >= 1) return kMinusInfinity;
  long double result = 0;
  walk_binomial_cdf(k, n, p, [&](int64_t i, long double total) {
    if (i == k) result = total;
    return i < k;
  });
  return result;
}

// K: the largest k < n with P(X ≤ k; n, δ) ≤ 1 − confidence, i.e. Clopper–Pearson upper(k) ≤ δ
// (the CDF falls as p rises); −1 when there is none.
int64_t most_close_calls(int64_t n, double delta, double confidence) {
  const long double threshold = log1pl(-static_cast<long double>(confidence));
  int64_t most = -1;
  walk_binomial_cdf(n - 1, n, delta, [&](int64_t i, long double total) {
    if (total > threshold) return false;
    most = i;
    return true;
  });
  return most;
}

bool enough_positions(int64_t n, double delta, double confidence) {
  return static_cast<long double>(n) * log1pl(-static_cast<long double>(delta)) <=
         log1pl(-static_cast<long double>(confidence));
}

}  // namespace

MarginShape margin_shape(const ir::Function& entry) {
  const ir::Type* type = entry.results.size() == 1 ? &entry.type_of(entry.results[0]) : nullptr;
  if (type == nullptr || type->is_tuple() || type->kind != ir::ElemKind::Real || type->rank() < 1 ||
      type->shape.back() < 2) {
    user_error("E1150").hint("margins read logits: an entry returning one R[…, V] with V ≥ 2, e.g. `logits`")
        << "entry `" << entry.name << "` returns "
        << (type == nullptr ? fmt::format("{} results", entry.results.size()) : ir::type_to_string(*type))
        << ", not one real tensor of rank ≥ 1 whose last axis has at least two classes";
  }
  MarginShape shape;
  shape.classes = type->shape.back();
  shape.positions = type->element_count() / shape.classes;
  return shape;
}

Margins measure_margins(const ir::Program& program, const ir::Function& entry,
                        const reference::ParameterStore& parameters, int64_t count,
                        const SampleInputs& inputs, const MarginOptions& options) {
  Margins margins;
  margins.shape = margin_shape(entry);
  margins.samples = count;
  margins.sorted.assign(static_cast<size_t>(count * margins.shape.positions), 0.0);
  std::vector<exec::native::PreparedParameters> prepared;
  for (const exec::native::Realization* realization : options.realizations) {
    prepared.push_back(exec::native::prepare_parameters(
        program, *realization, [&](const std::string& path) { return parameters.view(path); }));
  }
  const SampleRun run{program, entry, parameters, inputs, prepared, options, margins.shape};
  std::vector<std::vector<SampleResult>> results(static_cast<size_t>(count));
  std::mutex mutex;
  int64_t done = 0;
  const int threads = std::max(1, options.threads);
  // The samples split across the ranks of a distributed run (support/ranks.h), if any; this
  // rank's in parallel, each on one thread; fewer samples than threads: each over the threads.
  ranks::SampleShare share("margins: samples", count);
  const std::vector<int64_t>& mine = share.mine();
  const bool across = std::ssize(mine) >= threads && threads > 1;
  auto one = [&](int64_t k) {
    results[k] = run_sample(run, k, across ? 1 : threads, margins.sorted.data() + k * margins.shape.positions);
    std::lock_guard<std::mutex> lock(mutex);
    if (options.progress) options.progress(++done, count);
  };
  if (across) {
    tbb::task_arena arena(threads);
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<int64_t>(0, std::ssize(mine), 1), [&](const tbb::blocked_range<int64_t>& range) {
        for (int64_t i = range.begin(); i < range.end(); ++i) one(mine[i]);
      }, tbb::simple_partitioner());
    });
  } else {
    for (int64_t k : mine) one(k);
  }
  const int64_t positions = margins.shape.positions;
  share.exchange(
      [&](int64_t k) {
        ranks::Packer packer;
        for (int64_t i = 0; i < positions; ++i) packer.put<double>(margins.sorted[k * positions + i]);
        for (const SampleResult& result : results[k]) packer.put<SampleResult>(result);
        return packer.take();
      },
      [&](int64_t k, std::string_view bytes) {
        ranks::Unpacker unpacker(bytes);
        for (int64_t i = 0; i < positions; ++i) margins.sorted[k * positions + i] = unpacker.get<double>();
        results[k].resize(options.realizations.size());
        for (SampleResult& result : results[k]) result = unpacker.get<SampleResult>();
      });
  for (int64_t k = 0; k < count; ++k) {  // each window's smallest margin, before the positions are sorted
    const auto first = margins.sorted.begin() + k * margins.shape.positions;
    margins.window_minima.push_back(*std::min_element(first, first + margins.shape.positions));
  }
  std::sort(margins.window_minima.begin(), margins.window_minima.end());
  std::sort(margins.sorted.begin(), margins.sorted.end());
  for (size_t r = 0; r < options.realizations.size(); ++r) {
    RealizedMargins realized;
    for (const std::vector<SampleResult>& sample : results) {
      realized.gap = std::max(realized.gap, sample[r].gap);
      realized.flipped += sample[r].flipped;
    }
    // A flip at a position of margin m needs m ≤ 2·gap: m is rounded down, 2·gap up (exactly).
    const double twice = 2 * realized.gap;
    realized.allowed = std::upper_bound(margins.sorted.begin(), margins.sorted.end(), twice) - margins.sorted.begin();
    margins.realized.push_back(realized);
  }
  return margins;
}

long double binomial_cdf(int64_t k, int64_t n, long double p) { return expl(log_binomial_cdf(k, n, p)); }

long double clopper_pearson_upper(int64_t k, int64_t n, long double confidence) {
  if (k >= n) return 1;
  const long double threshold = log1pl(-confidence);
  long double low = 0, high = 1;  // P(X ≤ k; high) ≤ 1 − confidence < P(X ≤ k; low)
  for (int iteration = 0; iteration < 200; ++iteration) {
    const long double middle = (low + high) / 2;
    if (middle <= low || middle >= high) break;
    (log_binomial_cdf(k, n, middle) > threshold ? low : high) = middle;
  }
  return high;
}

int64_t minimum_positions(double delta, double confidence) {
  check_delta(delta);
  check_confidence(confidence);
  const long double ratio = log1pl(-static_cast<long double>(confidence)) / log1pl(-static_cast<long double>(delta));
  if (!(ratio < 9e18L)) return std::numeric_limits<int64_t>::max();
  auto n = static_cast<int64_t>(ceill(ratio));
  while (n > 1 && enough_positions(n - 1, delta, confidence)) --n;
  while (!enough_positions(n, delta, confidence)) ++n;
  return std::max<int64_t>(n, 1);
}

void check_delta(double delta) {
  if (!(delta > 0 && delta < 1)) {
    user_error("E1151").hint("δ is the accuracy a realization may lose, a fraction in (0, 1), e.g. --delta 1e-3")
        << "--delta " << delta << " is not in (0, 1)";
  }
}

void check_confidence(double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    user_error("E1152").hint("the confidence is a probability in (0, 1), e.g. --confidence 0.95")
        << "--confidence " << confidence << " is not in (0, 1)";
  }
}

void check_positions(int64_t positions, double delta, double confidence) {
  check_delta(delta);
  check_confidence(confidence);
  if (positions > 0 && enough_positions(positions, delta, confidence)) return;
  user_error("E1153").hint(fmt::format("run more windows (--windows), or a larger δ: {} trials (positions, or windows "
                                       "under --over windows) are needed",
                                       minimum_positions(delta, confidence)))
      << fmt::format("{} trials cannot bound a fraction by δ = {:g} at {:g} confidence: even with no close "
                     "call, (1 − δ)^n = {:.3g} is above 1 − confidence",
                     positions, delta, confidence,
                     std::exp(static_cast<double>(positions) * std::log1p(-delta)));
}

EpsilonStar epsilon_star(const std::vector<double>& sorted, double delta, double confidence) {
  const auto n = static_cast<int64_t>(sorted.size());
  check_positions(n, delta, confidence);
  EpsilonStar star;
  star.delta = delta;
  star.confidence = confidence;
  star.positions = n;
  star.allowed = most_close_calls(n, delta, confidence);
  internal_assert(star.allowed >= 0 && star.allowed < n);
  star.upper = static_cast<double>(clopper_pearson_upper(star.allowed, n, confidence));
  const double margin = sorted[static_cast<size_t>(star.allowed)];
  star.epsilon = margin / 2;
  star.close_calls = std::lower_bound(sorted.begin(), sorted.end(), margin) - sorted.begin();
  return star;
}

double margin_quantile(const std::vector<double>& sorted, double q) {
  internal_assert(!sorted.empty() && q >= 0 && q <= 1);
  const auto n = static_cast<double>(sorted.size());
  const auto rank = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(q * n)));
  return sorted[static_cast<size_t>(std::min<int64_t>(rank, static_cast<int64_t>(sorted.size())) - 1)];
}

}  // namespace presk::precision
