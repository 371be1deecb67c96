// The calibration (calibrate.h): an observer per sample tallies every real site's largest
// magnitude, element counts, rounding errors per machine type and term statistics; the tallies
// are merged in sample order, joined with one reverse sweep's sensitivities, and written into
// an Envelope in program order.
#include "precision/calibrate.h"

#include <mpfr.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <mutex>
#include <optional>

#include "ad/vjp.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/sensitivity.h"
#include "ir/program_hash.h"
#include "support/diagnostics.h"
#include "support/ranks.h"
#include "support/rounding_error.h"

namespace presk::precision {
namespace {

// |fl(x) − x| for a type, from an exact MPFR number, with two scratch numbers of its precision.
class RoundingMeter {
 public:
  explicit RoundingMeter(long bits) {
    mpfr_init2(scaled_, bits);
    mpfr_init2(nearest_, bits);
  }
  ~RoundingMeter() {
    mpfr_clear(scaled_);
    mpfr_clear(nearest_);
  }
  RoundingMeter(const RoundingMeter&) = delete;
  RoundingMeter& operator=(const RoundingMeter&) = delete;

  // x finite. fl(x) = 2^q · roundeven(x · 2^−q), q the quantum of x's binade in the type;
  // the difference is exact in the scratch precision and rounded up to binary64 at the end.
  double error(mpfr_srcptr x, BinaryFormat format) {
    if (mpfr_zero_p(x)) return 0;
    long leading = static_cast<long>(mpfr_get_exp(x)) - 1;  // 2^leading ≤ |x| < 2^(leading+1)
    long quantum = std::max(leading, long{format.min_exponent}) - (format.precision - 1);
    mpfr_mul_2si(scaled_, x, -quantum, MPFR_RNDN);  // exact
    mpfr_roundeven(nearest_, scaled_);              // an integer of at most `precision` bits
    if (!mpfr_zero_p(nearest_) && mpfr_get_exp(nearest_) - 1 + quantum > format.max_exponent) {
      return std::numeric_limits<double>::infinity();  // overflows the type
    }
    mpfr_sub(scaled_, scaled_, nearest_, MPFR_RNDN);  // exact: |·| ≤ 1/2, within x's bits
    mpfr_abs(scaled_, scaled_, MPFR_RNDN);
    mpfr_mul_2si(scaled_, scaled_, quantum, MPFR_RNDN);
    return mpfr_get_d(scaled_, MPFR_RNDU);
  }

  RoundingEnvelope errors(mpfr_srcptr x) {
    return {error(x, kBinary64), error(x, kBinary32), error(x, kBfloat16)};
  }

  // A binary64 value of a `--sweep f64` run: f32 and bf16 as above of the value itself; f64
  // half an ulp of it (what rounding any real number to it can have cost; 0 for 0).
  RoundingEnvelope errors(double x) {
    RoundingEnvelope r = stored_errors(x);
    if (x != 0) r.f64 = std::ldexp(1.0, std::max(std::ilogb(x), -1022) - 53);
    return r;
  }

  // A finite binary64 value stored as it is (a parameter): f64 costs nothing; f32 and bf16 as
  // above, computed exactly in binary64 (support/rounding_error.h: the same numbers, no MPFR).
  static RoundingEnvelope stored_errors(double x) {
    return {0, rounding_error(x, kBinary32), rounding_error(x, kBfloat16)};
  }

 private:
  mpfr_t scaled_;
  mpfr_t nearest_;
};

void raise_to(double& maximum, double value) {
  if (value > maximum || std::isnan(value)) maximum = value;
}

void raise_to(RoundingEnvelope& maximum, const RoundingEnvelope& value) {
  raise_to(maximum.f64, value.f64);
  raise_to(maximum.f32, value.f32);
  raise_to(maximum.bf16, value.bf16);
}

// What one sample showed of one site, over its calls and layers.
struct SiteTally {
  double max_abs = 0;
  int64_t elements = 0;
  int64_t non_finite = 0;
  RoundingEnvelope rounding;
  std::optional<TermEnvelope> terms;  // `terms` (k) is filled when the envelope is built
};

void merge(SiteTally& total, const SiteTally& part) {
  raise_to(total.max_abs, part.max_abs);
  total.elements += part.elements;
  total.non_finite += part.non_finite;
  raise_to(total.rounding, part.rounding);
  if (!part.terms) return;
  if (!total.terms) total.terms.emplace();
  raise_to(total.terms->sum_abs_terms, part.terms->sum_abs_terms);
  raise_to(total.terms->root_sum_squares, part.terms->root_sum_squares);
  raise_to(total.terms->operand_factors[0], part.terms->operand_factors[0]);
  raise_to(total.terms->operand_factors[1], part.terms->operand_factors[1]);
}

using SiteKey = std::pair<const ir::Function*, uint32_t>;
using SiteTallies = std::map<SiteKey, SiteTally>;

// The let that is the only reader of each let of `function` when it is a softmax (a value read
// by nothing else and not returned), else -1.
std::vector<int64_t> sole_softmax_readers(const ir::Function& function) {
  std::vector<int64_t> reader(function.lets.size(), -1);
  std::vector<int> reads(function.lets.size(), 0);
  for (const ir::ValueRef& result : function.results) {
    if (result.kind == ir::ValueRef::Kind::Let) reads[result.index] += 2;
  }
  for (uint32_t j = 0; j < function.lets.size(); ++j) {
    for (const ir::ValueRef& operand : function.lets[j].operands) {
      if (operand.kind != ir::ValueRef::Kind::Let) continue;
      ++reads[operand.index];
      reader[operand.index] = function.lets[j].op == ir::Op::softmax ? static_cast<int64_t>(j) : int64_t{-1};
    }
  }
  for (size_t j = 0; j < reader.size(); ++j) {
    if (reads[j] != 1) reader[j] = -1;
  }
  return reader;
}

// Tallies every real value and every term statistic of one sample. The rounding of a value read
// only by a softmax counts only at the elements the softmax does not send to exactly 0 (a mask of
// -3.4e38, torch.finfo(float32).min, added or selected): exp(x − max) underflowed there (below
// 2^-1074 in binary64, MPFR's least exponent in the reference), so ∂softmax/∂x is as small and a
// rounding of x, at most 2^1024, moves no output (docs/precision.md, "rounding").
class SampleObserver final : public reference::Observer {
 public:
  explicit SampleObserver(long bits) : meter_(bits) {}

  void on_value(const reference::SiteContext& site, const reference::ValueView& value) override {
    if (value.mpfr == nullptr && value.f64 == nullptr) return;  // integer and boolean values: no rounding
    SiteKey key{&site.function, site.let_index};
    settle_pending(key, value);
    SiteTally& tally = sites[key];
    tally.elements += value.count;
    int64_t softmax = softmax_reader(site.function, site.let_index);
    std::vector<RoundingEnvelope>* deferred = nullptr;
    if (softmax >= 0) {
      Pending& pending = pending_[{&site.function, static_cast<uint32_t>(softmax)}];
      pending = Pending{key, std::vector<RoundingEnvelope>(static_cast<size_t>(value.count))};
      deferred = &pending.rounding;
    }
    auto record = [&](int64_t i, const RoundingEnvelope& rounding) {
      if (deferred != nullptr) (*deferred)[static_cast<size_t>(i)] = rounding;
      else raise_to(tally.rounding, rounding);
    };
    for (int64_t i = 0; value.f64 != nullptr && i < value.count; ++i) {
      if (!std::isfinite(value.f64[i])) {
        ++tally.non_finite;
        continue;
      }
      raise_to(tally.max_abs, std::fabs(value.f64[i]));
      record(i, meter_.errors(value.f64[i]));
    }
    for (int64_t i = 0; value.mpfr != nullptr && i < value.count; ++i) {
      mpfr_srcptr x = value.mpfr + i;
      if (!mpfr_number_p(x)) {
        ++tally.non_finite;
        continue;
      }
      raise_to(tally.max_abs, std::fabs(mpfr_get_d(x, MPFR_RNDA)));
      record(i, meter_.errors(x));
    }
  }

  // Rounding still deferred (a softmax that was never observed) counts whole.
  SiteTallies finish() {
    for (const auto& [softmax, pending] : pending_) {
      for (const RoundingEnvelope& rounding : pending.rounding) raise_to(sites[pending.site].rounding, rounding);
    }
    pending_.clear();
    return std::move(sites);
  }

  bool wants_terms() const override { return true; }

  // Factor 0 is Σ|wᵢ|, what x's error is multiplied by: a contraction's second operand, and
  // for a sum or mean (wᵢ = 1) the term count, set when the envelope is built.
  void on_terms(const reference::SiteContext& site, std::span<const reference::TermStatistics> terms) override {
    if (terms.empty()) return;
    SiteTally& tally = sites[{&site.function, site.let_index}];
    if (!tally.terms) tally.terms.emplace();
    bool contraction = site.function.lets[site.let_index].op == ir::Op::contract;
    for (const reference::TermStatistics& s : terms) {
      raise_to(tally.terms->sum_abs_terms, s.sum_abs_terms);
      raise_to(tally.terms->root_sum_squares, s.root_sum_squares);
      if (contraction) raise_to(tally.terms->operand_factors[0], s.operand_abs_sums[1]);
      raise_to(tally.terms->operand_factors[1], s.operand_abs_sums[0]);
    }
  }

  SiteTallies sites;

 private:
  // The per-element rounding of a value whose only reader is the softmax it is filed under.
  struct Pending {
    SiteKey site;
    std::vector<RoundingEnvelope> rounding;
  };

  int64_t softmax_reader(const ir::Function& function, uint32_t let) {
    auto found = softmax_readers_.find(&function);
    if (found == softmax_readers_.end()) found = softmax_readers_.emplace(&function, sole_softmax_readers(function)).first;
    return let < found->second.size() ? found->second[let] : -1;
  }

  // `value` is the softmax `key`'s: its operand's rounding counts where the softmax is not 0.
  void settle_pending(const SiteKey& key, const reference::ValueView& value) {
    auto found = pending_.find(key);
    if (found == pending_.end()) return;
    RoundingEnvelope& rounding = sites[found->second.site].rounding;
    const std::vector<RoundingEnvelope>& deferred = found->second.rounding;
    for (int64_t i = 0; i < value.count && i < static_cast<int64_t>(deferred.size()); ++i) {
      bool zero = value.f64 != nullptr ? value.f64[i] == 0 : mpfr_zero_p(value.mpfr + i) != 0;
      if (!zero) raise_to(rounding, deferred[static_cast<size_t>(i)]);
    }
    pending_.erase(found);
  }

  RoundingMeter meter_;
  std::map<const ir::Function*, std::vector<int64_t>> softmax_readers_;
  std::map<SiteKey, Pending> pending_;  // by the softmax let that settles it
};

struct SampleResult {
  SiteTallies sites;
  double output_max_abs = 0;
};

double finite_max_abs(const std::vector<reference::Value<reference::MpfrArith>>& values) {
  double maximum = 0;
  for (const auto& value : values) {
    if (!value.is_real()) continue;
    for (int64_t i = 0; i < value.size(); ++i) {
      if (mpfr_number_p(value.real(i))) raise_to(maximum, std::fabs(mpfr_get_d(value.real(i), MPFR_RNDA)));
    }
  }
  return maximum;
}

std::vector<reference::Value<reference::MpfrArith>> arguments_of(const reference::MpfrArith& arith,
                                                                 const std::vector<reference::HostTensor>& hosts) {
  std::vector<reference::Value<reference::MpfrArith>> arguments;
  for (const reference::HostTensor& host : hosts) arguments.push_back(reference::to_value(arith, host));
  return arguments;
}

// One sample on the reference: with `observe`, every site's tallies; always its exact outputs'
// largest magnitude.
SampleResult run_sample(const ir::Program& program, const ir::Function& entry,
                        const reference::ParameterStore& parameters, const std::vector<reference::HostTensor>& inputs,
                        reference::RunOptions options, bool observe = true) {
  reference::MpfrArith arith(std::clamp(options.bits, reference::kMinBits, reference::kMaxBits));
  SampleObserver observer(arith.bits());
  if (observe) options.observer = &observer;
  auto outputs = reference::run_function<reference::MpfrArith>(program, entry, parameters,
                                                                arguments_of(arith, inputs), options);
  return {observer.finish(), finite_max_abs(outputs)};
}

// The element count of the axis `axis` (negative: from the end) of `type`.
int64_t extent(const ir::Type& type, int64_t axis) {
  auto rank = static_cast<int64_t>(type.shape.size());
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? type.shape[axis] : 1;
}

// k of a contraction: the product of the extents of the letters absent from the output.
int64_t contracted_terms(const std::string& spec, const ir::Type& x, const ir::Type& w) {
  std::string text;
  for (char c : spec) if (c != ' ') text += c;
  size_t comma = text.find(','), arrow = text.find("->");
  if (comma == std::string::npos || arrow == std::string::npos) return 0;
  std::map<char, int64_t> extents;
  std::string x_letters = text.substr(0, comma), w_letters = text.substr(comma + 1, arrow - comma - 1);
  for (size_t i = 0; i < x_letters.size() && i < x.shape.size(); ++i) extents[x_letters[i]] = x.shape[i];
  for (size_t i = 0; i < w_letters.size() && i < w.shape.size(); ++i) extents[w_letters[i]] = w.shape[i];
  std::string out = text.substr(arrow + 2);
  int64_t k = 1;
  for (const auto& [letter, size] : extents) {
    if (out.find(letter) == std::string::npos) k *= size;
  }
  return k;
}

// Reports progress: one call at a time, with the counts so far.
class ProgressReport {
 public:
  ProgressReport(const CalibrationOptions& options, int64_t samples, bool sweep)
      : callback_(options.progress), start_(std::chrono::steady_clock::now()) {
    state_.samples = samples;
    state_.sensitivity_done = !sweep;
    if (options.sweep == Sweep::f64) state_.exact = samples;
  }

  enum class Task { sample, sweep, exact_output };
  void finished(Task task) {
    if (!callback_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (task == Task::sample) ++state_.samples_done;
    else if (task == Task::sweep) state_.sensitivity_done = true;
    else ++state_.exact_done;
    state_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    callback_(state_);
  }

 private:
  const std::function<void(const CalibrationProgress&)>& callback_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  CalibrationProgress state_;
};

SiteEnvelope site_envelope(const ir::Function& function, uint32_t j, const SiteTally& total,
                           int64_t first_sample_elements, const reference::Sensitivity* sensitivity) {
  const ir::Let& let = function.lets[j];
  SiteEnvelope site;
  site.site = function.site_name(j);
  site.op = std::string(ir::op_name(let.op));
  site.type = ir::type_to_string(let.type);
  site.max_abs = total.max_abs;
  site.elements = total.elements;
  site.elements_per_sample = first_sample_elements;
  site.non_finite = total.non_finite;
  site.weight = arithmetic_weight(function, let);
  site.rounding = total.rounding;
  site.terms = total.terms;
  if (site.terms) {
    site.terms->terms = term_count(function, let);
    if (let.op != ir::Op::contract) site.terms->operand_factors[0] = static_cast<double>(site.terms->terms);
  }
  if (sensitivity != nullptr) {
    auto found = sensitivity->sites.find(site.site);
    if (found != sensitivity->sites.end()) site.sensitivity = found->second;
  }
  return site;
}

// Every real parameter with values: its magnitude and rounding at rest, its sensitivity.
std::vector<ParameterEnvelope> parameter_envelopes(const ir::Program& program, const reference::ParameterStore& parameters,
                                                   const reference::Sensitivity* sensitivity) {
  std::vector<ParameterEnvelope> list;
  for (const ir::Param& param : program.params) {
    const ParamView values = parameters.view(param.path);  // read in place, never widened whole
    if (param.type.kind != ir::ElemKind::Real || !values) continue;
    ParameterEnvelope entry{param.path, ir::type_to_string(param.type), 0, static_cast<int64_t>(values.size()), {}, {}};
    values.for_each_block([&](uint64_t, const double* block, uint64_t count) {
      for (uint64_t i = 0; i < count; ++i) {
        const double value = block[i];
        if (!std::isfinite(value)) continue;
        raise_to(entry.max_abs, std::fabs(value));
        raise_to(entry.rounding, RoundingMeter::stored_errors(value));
      }
    });
    if (sensitivity != nullptr) {
      auto found = sensitivity->parameters.find(param.path);
      if (found != sensitivity->parameters.end()) entry.sensitivity = found->second;
    }
    list.push_back(std::move(entry));
  }
  return list;
}

// The samples' tallies merged in sample order, as sites in program order.
std::vector<SiteEnvelope> site_envelopes(const ir::Program& program, const std::vector<SampleResult>& results,
                                         const reference::Sensitivity* sensitivity) {
  SiteTallies totals;
  for (const SampleResult& result : results) {
    for (const auto& [key, tally] : result.sites) merge(totals[key], tally);
  }
  std::vector<SiteEnvelope> sites;
  for (const ir::Function& function : program.functions) {
    for (uint32_t j = 0; j < function.lets.size(); ++j) {
      auto found = totals.find({&function, j});
      if (found == totals.end() || function.lets[j].type.is_tuple()) continue;
      auto first = results.front().sites.find({&function, j});
      int64_t first_elements = first == results.front().sites.end() ? 0 : first->second.elements;
      sites.push_back(site_envelope(function, j, found->second, first_elements, sensitivity));
    }
  }
  return sites;
}

}  // namespace

int64_t term_count(const ir::Function& function, const ir::Let& let) {
  if (let.op == ir::Op::contract) {
    return contracted_terms(let.attrs.spec, function.type_of(let.operands.at(0)),
                            function.type_of(let.operands.at(1)));
  }
  if (let.op != ir::Op::sum && let.op != ir::Op::mean) return 0;
  int64_t result = let.type.element_count();
  return result == 0 ? 0 : function.type_of(let.operands.at(0)).element_count() / result;
}

double arithmetic_weight(const ir::Function& function, const ir::Let& let) {
  constexpr double T = kTranscendentalWeight;
  auto k = static_cast<double>(term_count(function, let));
  switch (let.op) {
    case ir::Op::add: case ir::Op::sub: case ir::Op::mul: case ir::Op::div: case ir::Op::max:
    case ir::Op::min: case ir::Op::neg: case ir::Op::abs: case ir::Op::sqrt: case ir::Op::rsqrt:
    case ir::Op::relu: case ir::Op::lt: case ir::Op::le: case ir::Op::gt: case ir::Op::ge:
    case ir::Op::eq: case ir::Op::ne: case ir::Op::where: case ir::Op::dropout: return 1;
    case ir::Op::exp: case ir::Op::log: case ir::Op::tanh: return T;
    case ir::Op::gelu_tanh: return T + 8;       // x³ (2), ·c, + x, ·√(2/π), 1 + t, x/2, ·
    case ir::Op::gelu_erf: return T + 4;        // x/√2, 1 + erf, x/2, ·
    case ir::Op::gelu_tanh_grad: return T + 15;  // the forward's 8 and the chain rule's 7
    case ir::Op::gelu_erf_grad: return 2 * T + 6;  // Φ(x) (erf) + x·φ(x) (exp)
    case ir::Op::erf: case ir::Op::sin: case ir::Op::cos: case ir::Op::atan: return T;
    case ir::Op::round: case ir::Op::floor: case ir::Op::ceil: case ir::Op::round_f16:
    case ir::Op::round_bf16: return 1;
    case ir::Op::erf_grad: return T + 3;          // x², e^(−x²), ·2/√π
    case ir::Op::sum: return std::max(0.0, k - 1);
    case ir::Op::mean: return k;  // k − 1 additions and the division
    case ir::Op::reduce_max: {
      int64_t result = let.type.element_count();
      return result == 0 ? 0 : static_cast<double>(function.type_of(let.operands.at(0)).element_count() / result - 1);
    }
    case ir::Op::contract: return std::max(0.0, 2 * k - 1);
    case ir::Op::softmax: case ir::Op::log_softmax: {
      // per element: − max, exp, and the row's max and sum (n − 1 each) shared by its n
      // elements; softmax divides (1), log_softmax takes one log per row and subtracts (1)
      double n = static_cast<double>(std::max<int64_t>(1, extent(let.type, let.attrs.axes.at(0))));
      double shared = 2 * (n - 1) / n + (let.op == ir::Op::log_softmax ? T / n : 0);
      return 2 + T + shared;
    }
    case ir::Op::cross_entropy: {
      // per position of n classes: max (n − 1), − max (n), exp (n·T), sum (n − 1), log (T),
      // the target's difference (1); then the mean over P positions (P)
      const ir::Type& logits = function.type_of(let.operands.at(0));
      double n = static_cast<double>(std::max<int64_t>(1, extent(logits, -1)));
      double positions = static_cast<double>(logits.element_count()) / n;
      return positions * (n * (1 + T) + 2 * (n - 1) + T + 1) + positions;
    }
    default: return 0;  // sources, layout, gather, convert, call, fold, get, fold_trace, fold_vjp
  }
}

RoundingEnvelope rounding_errors(double x) {
  if (!std::isfinite(x)) return {};
  RoundingMeter meter(64);
  mpfr_t exact;
  mpfr_init2(exact, 64);
  mpfr_set_d(exact, x, MPFR_RNDN);
  RoundingEnvelope errors = meter.errors(exact);
  mpfr_clear(exact);
  return errors;
}

std::string utc_date_now() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

namespace {

// What the samples and the sweep measured.
struct Measured {
  std::vector<SampleResult> results;
  std::optional<reference::Sensitivity> sensitivity;
};

// A sample's tallies or the sweep's sensitivities as bytes and back, for the ranks of a
// distributed run (support/ranks.h): every number as it is, so the merge gives the same bits.
std::string encode_sample(const ir::Program& program, const SampleResult& result) {
  ranks::Packer packer;
  packer.put<double>(result.output_max_abs).put<uint64_t>(result.sites.size());
  for (const auto& [key, tally] : result.sites) {
    packer.put<int64_t>(key.first - program.functions.data()).put<uint32_t>(key.second);
    packer.put<double>(tally.max_abs).put<int64_t>(tally.elements).put<int64_t>(tally.non_finite);
    packer.put<RoundingEnvelope>(tally.rounding).put<uint8_t>(tally.terms ? 1 : 0);
    if (tally.terms) packer.put<TermEnvelope>(*tally.terms);
  }
  return packer.take();
}

SampleResult decode_sample(const ir::Program& program, std::string_view bytes) {
  ranks::Unpacker unpacker(bytes);
  SampleResult result;
  result.output_max_abs = unpacker.get<double>();
  for (auto n = unpacker.get<uint64_t>(); n > 0; --n) {
    const auto function = unpacker.get<int64_t>();
    const auto let = unpacker.get<uint32_t>();
    SiteTally& tally = result.sites[{&program.functions.at(static_cast<size_t>(function)), let}];
    tally.max_abs = unpacker.get<double>();
    tally.elements = unpacker.get<int64_t>();
    tally.non_finite = unpacker.get<int64_t>();
    tally.rounding = unpacker.get<RoundingEnvelope>();
    if (unpacker.get<uint8_t>() != 0) tally.terms = unpacker.get<TermEnvelope>();
  }
  return result;
}

std::string encode_sensitivity(const reference::Sensitivity& sensitivity) {
  ranks::Packer packer;
  packer.put<uint64_t>(sensitivity.sites.size());
  for (const auto& [site, value] : sensitivity.sites) packer.put_string(site).put<uint8_t>(value ? 1 : 0).put<double>(value.value_or(0));
  packer.put<uint64_t>(sensitivity.parameters.size());
  for (const auto& [path, value] : sensitivity.parameters) packer.put_string(path).put<double>(value);
  return packer.take();
}

reference::Sensitivity decode_sensitivity(std::string_view bytes) {
  ranks::Unpacker unpacker(bytes);
  reference::Sensitivity sensitivity;
  for (auto n = unpacker.get<uint64_t>(); n > 0; --n) {
    const std::string site(unpacker.get_string());
    const bool known = unpacker.get<uint8_t>() != 0;
    const auto value = unpacker.get<double>();
    sensitivity.sites[site] = known ? std::optional<double>(value) : std::nullopt;
  }
  for (auto n = unpacker.get<uint64_t>(); n > 0; --n) {
    const std::string path(unpacker.get_string());
    sensitivity.parameters[path] = unpacker.get<double>();
  }
  return sensitivity;
}

// Sends this rank's tasks (task 0 the sweep when first_sample is 1, then the samples) and
// receives every other rank's.
void exchange_statistics(ranks::SampleShare& share, const ir::Program& program, int64_t first_sample,
                         Measured& measured) {
  share.exchange(
      [&](int64_t task) {
        return task < first_sample ? encode_sensitivity(*measured.sensitivity)
                                   : encode_sample(program, measured.results[task - first_sample]);
      },
      [&](int64_t task, std::string_view bytes) {
        if (task < first_sample) measured.sensitivity = decode_sensitivity(bytes);
        else measured.results[task - first_sample] = decode_sample(program, bytes);
      });
}

// Every statistic on the reference: task 0 is the reverse sweep (the longest), when there is
// one; then the samples, in parallel over the threads.
Measured measure_exact(const ir::Program& program, const ir::Program& differentiated, const std::string& entry,
                       const reference::ParameterStore& parameters, int64_t samples, const SampleInputs& inputs,
                       const CalibrationOptions& options, bool sweep, ProgressReport& progress) {
  const ir::Function& function = reference::find_entry(program, entry);
  int64_t first_sample = sweep ? 1 : 0, tasks = samples + first_sample;
  // The tasks split across the ranks of a distributed run (the sweep, task 0, on rank 0).
  ranks::SampleShare share("calibrate: the reverse sweep and the samples", tasks);
  const std::vector<int64_t>& mine = share.mine();
  int threads = std::max(1, options.threads);
  reference::RunOptions run;
  run.bits = options.bits;
  run.threads = static_cast<int>(std::max<int64_t>(1, threads / std::max<int64_t>(1, std::ssize(mine))));
  Measured measured;
  measured.results.resize(static_cast<size_t>(samples));
  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, std::ssize(mine), 1), [&](const tbb::blocked_range<int64_t>& range) {
      for (int64_t i = range.begin(); i < range.end(); ++i) {
        const int64_t task = mine[i];
        if (task < first_sample) {
          reference::MpfrArith arith(std::clamp(options.bits, reference::kMinBits, reference::kMaxBits));
          measured.sensitivity =
              reference::sensitivity(differentiated, entry, parameters, arguments_of(arith, inputs(0)), run);
        } else {
          int64_t k = task - first_sample;
          measured.results[k] = run_sample(program, function, parameters, inputs(k), run);
        }
        progress.finished(task >= first_sample ? ProgressReport::Task::sample : ProgressReport::Task::sweep);
      }
    }, tbb::simple_partitioner());
  });
  exchange_statistics(share, program, first_sample, measured);
  return measured;
}

// --sweep f64: the sweep and the samples' statistics on the native executor in binary64, one
// run after another over the threads (split across the ranks of a distributed run, the sweep,
// task 0, on rank 0); then the exact outputs alone on the reference, the samples in parallel.
Measured measure_binary64(const ir::Program& program, const ir::Program& differentiated, const std::string& entry,
                          const reference::ParameterStore& parameters, int64_t samples, const SampleInputs& inputs,
                          const CalibrationOptions& options, bool sweep, ProgressReport& progress) {
  const ir::Function& function = reference::find_entry(program, entry);
  const int threads = std::max(1, options.threads);
  Measured measured;
  measured.results.resize(static_cast<size_t>(samples));
  {
    const int64_t first_sample = sweep ? 1 : 0;
    ranks::SampleShare statistics("calibrate: the sweep and the samples in binary64", samples + first_sample);
    const exec::native::PreparedParameters binary64 = binary64_parameters(program, parameters);
    for (const int64_t task : statistics.mine()) {
      if (task < first_sample) {
        measured.sensitivity = binary64_sensitivity(differentiated, entry, binary64, inputs(0), threads);
        progress.finished(ProgressReport::Task::sweep);
        continue;
      }
      SampleObserver observer(reference::kMinBits);
      observe_binary64(program, entry, binary64, inputs(task - first_sample), observer, threads);
      measured.results[task - first_sample].sites = observer.finish();
      progress.finished(ProgressReport::Task::sample);
    }
    exchange_statistics(statistics, program, first_sample, measured);
  }
  ranks::SampleShare share("calibrate: the exact outputs", samples);  // split across the ranks, if any
  const std::vector<int64_t>& mine = share.mine();
  reference::RunOptions run;
  run.bits = options.bits;
  run.threads = static_cast<int>(std::max<int64_t>(1, threads / std::max<int64_t>(1, std::ssize(mine))));
  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, std::ssize(mine), 1), [&](const tbb::blocked_range<int64_t>& range) {
      for (int64_t i = range.begin(); i < range.end(); ++i) {
        const int64_t k = mine[i];
        measured.results[k].output_max_abs = run_sample(program, function, parameters, inputs(k), run, false).output_max_abs;
        progress.finished(ProgressReport::Task::exact_output);
      }
    }, tbb::simple_partitioner());
  });
  share.exchange([&](int64_t k) { return ranks::Packer().put<double>(measured.results[k].output_max_abs).take(); },
                 [&](int64_t k, std::string_view bytes) { measured.results[k].output_max_abs = ranks::Unpacker(bytes).get<double>(); });
  return measured;
}

}  // namespace

Envelope calibrate(const ir::Program& program, const std::string& entry,
                   const reference::ParameterStore& parameters, int64_t samples,
                   const SampleInputs& inputs, const CalibrationOptions& options) {
  internal_assert(samples >= 1);
  ir::Program differentiated = ad::add_vjps(program);
  bool sweep = differentiated.find_function(ad::vjp_name(entry)) != nullptr;
  ProgressReport progress(options, samples, sweep);
  Measured measured = options.sweep == Sweep::f64
      ? measure_binary64(program, differentiated, entry, parameters, samples, inputs, options, sweep, progress)
      : measure_exact(program, differentiated, entry, parameters, samples, inputs, options, sweep, progress);
  Envelope envelope;
  envelope.program_hash = ir::program_hash(program);
  envelope.entry = entry;
  envelope.samples = samples;
  envelope.bits = static_cast<int>(options.bits);
  envelope.date = utc_date_now();
  envelope.sweep = sweep_name(options.sweep);
  for (const SampleResult& result : measured.results) raise_to(envelope.output_max_abs, result.output_max_abs);
  const reference::Sensitivity* report = measured.sensitivity ? &*measured.sensitivity : nullptr;
  envelope.sites = site_envelopes(program, measured.results, report);
  envelope.parameters = parameter_envelopes(program, parameters, report);
  return envelope;
}

}  // namespace presk::precision
