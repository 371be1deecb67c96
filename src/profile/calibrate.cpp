// Measuring this machine and fitting its profile (calibrate.h).
#include "profile/calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <thread>

#include "exec/native/executor.h"
#include "lang/frontend.h"
#include "precision/calibrate.h"
#include "support/alternating.h"
#include "support/diagnostics.h"

namespace presk::profile {
namespace {

namespace native = exec::native;

// One entry per class (the op it times), one for edges and one for a parameter's load.
constexpr const char* kProgram = R"(dim N
dim M
dim K
module W {
  param w : R[K, M] = normal(0.02)
}
entry contraction(a : R[N, K], b : R[K, M]) -> R[N, M] = a @ b
entry contraction_batched(a : R[2, N, K], b : R[2, K, M]) -> R[2, N, M] = a @ b
entry elementwise(x : R[N, M], y : R[N, M]) -> R[N, M] = (x * y) * y
entry elementwise_add(x : R[N, M], y : R[N, M]) -> R[N, M] = (x + y) + y
entry transcendental(x : R[N, M]) -> R[N, M] = tanh(tanh(x))
entry transcendental_exp(x : R[N, M]) -> R[N, M] = exp(exp(x))
entry reduction(x : R[N, M]) -> R[N, 1] = sum(x, axis: 1)
entry reduction_max(x : R[N, M]) -> R[N, 1] = max(x, axis: 1)
entry normalization(x : R[N, M]) -> R[N, M] = softmax(x, axis: 1)
entry normalization_log(x : R[N, M]) -> R[N, M] = log_softmax(x, axis: 1)
entry layout(x : R[N, M]) -> R[M, N] = transpose(x) * 2
entry layout_concat(x : R[N, M]) -> R[N, 2 * M] = concat(x, x, axis: 1) * 2
entry edge(x : R[N, M]) -> R[N, M] = abs(abs(x))
entry load(p : W, x : R[N, K]) -> R[N, M] = x @ p.w
)";

struct Shape {
  int64_t n = 1, m = 1, k = 1;
};

// Per class 9 shapes (12 contractions), each timed on the class's two kernels; 9 loads. One in
// three held out. From a few hundred elements to half a million.
const std::vector<Shape> kRows = {{16, 64},   {32, 64},    {64, 64},    {64, 256},  {128, 256},
                                  {256, 256}, {128, 1024}, {256, 1024}, {512, 1024}};
const std::vector<Shape> kContractions = {{16, 64, 64},   {64, 64, 64},     {256, 64, 64},  {64, 256, 256},
                                          {256, 256, 64}, {256, 64, 256},   {256, 256, 256}, {1, 1024, 256},
                                          {8, 256, 1024}, {32, 128, 128},   {128, 128, 512}, {512, 64, 64}};
const std::vector<Shape> kLoads = {{1, 1024, 256},  {8, 512, 512},  {64, 256, 256},
                                   {256, 256, 256}, {16, 256, 512}, {128, 128, 512},
                                   {4, 1024, 512},  {32, 512, 256}, {1, 2048, 128}};
constexpr size_t kHeldOutEvery = 3;  // shapes 1, 4, 7, … of each list are held out

double type_bytes(const std::string& type) {
  if (type == "int8") return 1;
  if (type == "int4") return 0.5;
  return facts(native::element_type_of(*native::real_type_from_name(type))).bits / 8.0;
}


// Deterministic inputs in [−1, 1).
Tensor input(const std::vector<int64_t>& shape, uint64_t salt) {
  Tensor tensor(ElementType::f64, shape);
  uint64_t state = 0x9e3779b97f4a7c15ULL ^ salt;
  for (uint64_t i = 0; i < tensor.element_count(); ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    tensor.set(i, static_cast<double>(state >> 11) / static_cast<double>(uint64_t{1} << 52) - 1);
  }
  return tensor;
}

// One entry compiled at one shape, ready to run under any realization.
class Bench {
 public:
  Bench(const std::string& entry, const Shape& shape, int threads) : threads_(threads) {
    lang::FrontendOptions options;
    options.entry = entry;
    options.dims = {{"N", shape.n}, {"M", shape.m}, {"K", shape.k}};
    program_ = lang::compile(std::make_shared<SourceFile>(SourceFile{"<calibrate>", kProgram}), options);
    function_ = program_.find_function(entry);
    weights_.resize(static_cast<size_t>(shape.k * shape.m));
    const Tensor w = input({shape.k, shape.m}, 7);
    for (size_t i = 0; i < weights_.size(); ++i) weights_[i] = w.get(i) * 0.05;
    for (size_t a = 0; a < function_->argument_types.size(); ++a) inputs_.push_back(input(function_->argument_types[a].shape, a));
  }
  const ir::Function& function() const { return *function_; }
  // The typable lets of the entry, in order.
  std::vector<uint32_t> sites() const {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < function_->lets.size(); ++i) {
      if (native::is_typable(function_->lets[i])) out.push_back(i);
    }
    return out;
  }
  // The seconds per call of op kind "OP TYPE" (`kind`) under `realization`, one probe each:
  // after a warm-up of each, `rounds` rounds run every probe once in turn (alternating, so that a
  // change of the machine's speed falls on all of them alike); each probe's median over the rounds.
  struct Probe {
    const native::Realization* realization;
    std::string kind;
  };
  std::vector<double> medians(const std::vector<Probe>& probes, int rounds) const {
    std::vector<native::PreparedParameters> parameters;
    const native::ExecuteOptions plain{threads_, false};
    for (const Probe& probe : probes) {
      parameters.push_back(native::prepare_parameters(program_, *probe.realization,
                                                      [this](const std::string&) { return &weights_; }));
      native::execute(program_, function_->name, *probe.realization, inputs_, parameters.back(), plain);  // warm-up
    }
    std::vector<std::vector<double>> times(probes.size());
    for (int r = 0; r < rounds; ++r) {
      for (size_t p = 0; p < probes.size(); ++p) times[p].push_back(per_call(probes[p], parameters[p]));
    }
    std::vector<double> out;
    for (std::vector<double>& t : times) out.push_back(median_of(t));
    return out;
  }
  double seconds(const native::Realization& realization, const std::string& kind, int rounds) const {
    return medians({{&realization, kind}}, rounds).at(0);
  }

 private:
  // One timed run's seconds per call of the probe's op kind; no such op timed (the executor's
  // op names and this bench's kinds disagree) is E1529, never a time of 0.
  double per_call(const Probe& probe, const native::PreparedParameters& parameters) const {
    native::OpProfile times;
    native::ExecuteOptions timed{threads_, false};
    timed.profile = &times;
    native::execute(program_, function_->name, *probe.realization, inputs_, parameters, timed);
    double total = 0;
    uint64_t calls = 0;
    for (const auto& [key, time] : times) {
      if (key == probe.kind || key.rfind(probe.kind + " ", 0) == 0) total += time.seconds, calls += time.calls;
    }
    if (calls == 0) {
      std::string timed;
      for (const auto& [key, time] : times) timed += (timed.empty() ? "" : ", ") + key;
      user_error("E1529").hint("report it: this presk's executor and its calibration disagree on the ops' names")
          << "presk bench --calibrate timed no op `" << probe.kind << "` in `" << function_->name << "` (it timed "
          << (timed.empty() ? "none" : timed) << "), so it has no time to fit";
    }
    return total / static_cast<double>(calls);
  }

  ir::Program program_;
  const ir::Function* function_ = nullptr;
  std::vector<double> weights_;
  std::vector<Tensor> inputs_;
  int threads_;
};

// W and Q of the entry's first let of op `op`: its elements times its weight, and the bytes of
// its result at `type` and of each operand at operand_type(operand) (default: `type`).
Sample work_and_bytes(const ir::Function& function, ir::Op op, const std::string& type,
                      const std::function<std::string(const ir::ValueRef&)>& operand_type = {}) {
  for (const ir::Let& let : function.lets) {
    if (let.op != op) continue;
    Sample sample;
    const double elements = static_cast<double>(let.type.element_count());
    sample.work = elements * precision::arithmetic_weight(function, let);
    sample.bytes = elements * type_bytes(type);
    for (const ir::ValueRef& operand : let.operands) {
      sample.bytes += static_cast<double>(function.type_of(operand).element_count()) *
                      type_bytes(operand_type ? operand_type(operand) : type);
    }
    return sample;
  }
  return {};
}

// A parameter operand at `param_type`, the rest at `type`.
std::function<std::string(const ir::ValueRef&)> parameter_at(const ir::Function& function, const std::string& type,
                                                             const std::string& param_type) {
  return [&function, type, param_type](const ir::ValueRef& operand) {
    const bool param = operand.kind == ir::ValueRef::Kind::Let && function.lets[operand.index].op == ir::Op::param;
    return param ? param_type : type;
  };
}

native::Realization uniform(const std::string& type) { return native::uniform_realization(*native::real_type_from_name(type)); }

Fit fit_shapes(const std::vector<Sample>& samples) {
  std::vector<Sample> fitted, held_out;
  for (size_t i = 0; i < samples.size(); ++i) (i % kHeldOutEvery == 1 ? held_out : fitted).push_back(samples[i]);
  return fit_roofline(fitted, held_out);
}

int rounds_of(const CalibrateOptions& options) { return std::max(kMinRounds, options.runs); }

struct Kernel {
  const char* entry;
  ir::Op op;
};
struct ClassCase {
  OpClass op_class;
  std::vector<Kernel> kernels;  // each timed on every shape of the class
};

void measure_classes(const CalibrateOptions& options, Profile& profile) {
  const ClassCase cases[] = {
      {OpClass::contraction, {{"contraction", ir::Op::contract}, {"contraction_batched", ir::Op::contract}}},
      {OpClass::elementwise, {{"elementwise", ir::Op::mul}, {"elementwise_add", ir::Op::add}}},
      {OpClass::reduction, {{"reduction", ir::Op::sum}, {"reduction_max", ir::Op::reduce_max}}},
      {OpClass::normalization, {{"normalization", ir::Op::softmax}, {"normalization_log", ir::Op::log_softmax}}},
      {OpClass::transcendental, {{"transcendental", ir::Op::tanh}, {"transcendental_exp", ir::Op::exp}}},
      {OpClass::layout, {{"layout", ir::Op::transpose}, {"layout_concat", ir::Op::concat}}}};
  for (const ClassCase& c : cases) {
    for (const char* type : kFloatTypes) {
      const auto measure = [&](int rounds) {
        std::vector<Sample> samples;
        for (const Shape& shape : c.op_class == OpClass::contraction ? kContractions : kRows) {
          for (const Kernel& kernel : c.kernels) {
            const Bench bench(kernel.entry, shape, options.threads);
            Sample sample = work_and_bytes(bench.function(), kernel.op, type);
            sample.seconds = bench.seconds(uniform(type), std::string(ir::op_name(kernel.op)) + " " + type, rounds);
            samples.push_back(sample);
          }
        }
        return samples;
      };
      profile.rooflines[class_name(c.op_class)][type] =
          fit_measured(options, fmt::format("{} {}", class_name(c.op_class), type), measure);
    }
  }
}

// abs(abs(x)) with the first abs at `from`, the rest at `to`: the second pays from>to, the
// first (reading the argument, at `to`) pays to>from, each over the same op run uniformly, the
// mixed and the uniform runs in alternating rounds. The roofline of an elementwise op at the
// reader's type prices the bytes the two read (a `from` value against a `to` one); that traffic
// is taken out, the rest is the conversion.
void measure_edges(const CalibrateOptions& options, Profile& profile) {
  const auto traffic = [&](const ir::Function& f, const std::string& own, const std::string& operand) {
    const Roofline& roofline = profile.roofline(OpClass::elementwise, own);
    const Sample with = work_and_bytes(f, ir::Op::abs, own, [&](const ir::ValueRef&) { return operand; });
    const Sample without = work_and_bytes(f, ir::Op::abs, own);
    return roofline.predict(with.work, with.bytes) - roofline.predict(without.work, without.bytes);
  };
  for (const char* from : kFloatTypes) {
    for (const char* to : kFloatTypes) {
      if (std::string(from) >= to) continue;  // each unordered pair once: it gives both directions
      std::vector<ConversionPoint> forward, backward;
      const auto measure = [&](int rounds) {
        forward.clear(), backward.clear();
        for (const Shape& shape : kRows) {
          const Bench bench("edge", shape, options.threads);
          native::Realization mixed = uniform(to);
          mixed.sites[bench.function().site_name(bench.sites().at(0))] = *native::real_type_from_name(from);
          const native::Realization at_to_only = uniform(to), at_from_only = uniform(from);
          const std::string at_from = std::string("abs ") + from, at_to = std::string("abs ") + to;
          const std::vector<double> t =
              bench.medians({{&mixed, at_to}, {&at_to_only, at_to}, {&mixed, at_from}, {&at_from_only, at_from}}, rounds);
          const double n = static_cast<double>(shape.n * shape.m);
          forward.push_back({n, t[0], t[1], traffic(bench.function(), to, from)});
          backward.push_back({n, t[2], t[3], traffic(bench.function(), from, to)});
        }
      };
      profile.edge[conversion_key(from, to)] = conversion_measured(options, "edge " + conversion_key(from, to), [&](int rounds) {
        measure(rounds);
        return forward;
      });
      // The backward points of the forward's last measurement; measured again alone when rejected.
      bool first = true;
      profile.edge[conversion_key(to, from)] = conversion_measured(options, "edge " + conversion_key(to, from), [&](int rounds) {
        if (!first) measure(rounds);
        first = false;
        return backward;
      });
    }
  }
}

// x @ p.w with w stored at `from` (or quantized) and the contraction at `to`, against the
// contraction with w at `to`, in alternating rounds. The difference less what the contraction's
// roofline at `to` prices for reading w's bytes at `from` (an integer weight's: 1 or ½ a byte,
// its traffic saving) is the load's cost.
void measure_loads(const CalibrateOptions& options, Profile& profile) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const char* from : kFloatTypes) {
    for (const char* to : kFloatTypes) {
      if (std::string(from) != to) pairs.emplace_back(from, to);
    }
  }
  for (const char* integer : kIntegerTypes) pairs.emplace_back(integer, "f32");
  for (const auto& [from, to] : pairs) {
    const bool integer = from == "int8" || from == "int4";
    std::vector<ConversionPoint> points;
    const auto measure = [&](int rounds) {
      std::vector<Sample> samples;
      points.clear();
      for (const Shape& shape : kLoads) {
        const Bench bench("load", shape, options.threads);
        native::Realization mixed = uniform(to);
        if (integer) {
          mixed.quant["w"] = native::QuantSpec{from == "int8" ? 8 : 4, -2, native::QuantScheme::absmax};
        } else {
          mixed.params["w"] = *native::real_type_from_name(from);
        }
        const native::Realization plain = uniform(to);
        const std::string kind = "contract " + to;
        const std::vector<double> t = bench.medians({{&mixed, kind}, {&plain, kind}}, rounds);
        Sample sample = work_and_bytes(bench.function(), ir::Op::contract, to, parameter_at(bench.function(), to, from));
        const Sample plain_sample = work_and_bytes(bench.function(), ir::Op::contract, to);
        const Roofline& roofline = profile.roofline(OpClass::contraction, to);
        points.push_back({static_cast<double>(shape.k * shape.m), t[0], t[1],
                          roofline.predict(sample.work, sample.bytes) - roofline.predict(plain_sample.work, plain_sample.bytes)});
        sample.seconds = t[0];
        samples.push_back(sample);
      }
      return samples;
    };
    if (integer) {
      profile.rooflines[class_name(OpClass::contraction)][from] =
          fit_measured(options, fmt::format("contraction {} (the weight at {})", from, from), measure);
    } else {
      measure(rounds_of(options));
    }
    bool first = true;  // the points of the measurement above; measured again when rejected
    profile.load[conversion_key(from, to)] = conversion_measured(options, "load " + conversion_key(from, to), [&](int rounds) {
      if (!first) measure(rounds);
      first = false;
      return points;
    });
  }
}

}  // namespace

ConversionFit fit_conversion(const std::vector<ConversionPoint>& points) {
  ConversionFit fit;
  fit.points = static_cast<int>(points.size());
  double xy = 0, xx = 0;
  for (const ConversionPoint& p : points) xy += p.elements * (p.with - p.without - p.traffic), xx += p.elements * p.elements;
  if (!(xx > 0)) return fit;
  fit.cost = xy / xx;
  double squares = 0;
  for (const ConversionPoint& p : points) {
    const double r = p.with - p.without - p.traffic - fit.cost * p.elements;
    squares += r * r;
  }
  fit.error = points.size() > 1 ? std::sqrt(squares / static_cast<double>(points.size() - 1) / xx) : std::fabs(fit.cost);
  return fit;
}

const char* conversion_confidence(const ConversionFit& fit) {
  if (fit.cost <= 0) return "LOW";
  return fit.error <= 0.25 * fit.cost ? "good" : fit.error <= 0.5 * fit.cost ? "fair" : "LOW";
}

double recorded_cost(const ConversionFit& fit) { return std::max(0.0, fit.cost); }

// Fits `measure(rounds)`'s samples. A fit whose held-out residual passes kResidualLimit is
// rejected and measured again with twice the rounds, up to kMeasurements times; when none
// passes, the best is kept, its confidence LOW. The progress line gives the confidence and each
// rejection.
Fit fit_measured(const CalibrateOptions& options, const std::string& what,
                 const std::function<std::vector<Sample>(int rounds)>& measure) {
  Fit best;
  std::string rejected;
  int rounds = rounds_of(options);
  for (int attempt = 0; attempt < kMeasurements; ++attempt, rounds *= 2) {
    const Fit fit = fit_shapes(measure(rounds));
    if (attempt == 0 || fit.residual < best.residual) best = fit;
    if (fit.residual <= kResidualLimit) break;
    rejected += fmt::format("{}rejected at {} rounds (held-out residual {:.0f}% > {:.0f}%)", rejected.empty() ? "; " : ", ",
                            rounds, 100 * fit.residual, 100 * kResidualLimit);
  }
  if (options.progress) {
    options.progress(fmt::format("{}: {} samples ({} held out), held-out residual {:.0f}%, confidence {}{}{}", what,
                                 best.points + best.held_out, best.held_out, 100 * best.residual, fit_confidence(best),
                                 rejected, best.residual > kResidualLimit ? "; kept the best: its decisions are unreliable" : ""));
  }
  return best;
}

// Fits a conversion from `measure(rounds)`'s points; a cost below 0 by more than twice its
// standard error is rejected and measured again with twice the rounds (kMeasurements times at
// most). The recorded cost is the fit's, or 0 when it is below 0: the progress line says which,
// with the standard error.
double conversion_measured(const CalibrateOptions& options, const std::string& what,
                           const std::function<std::vector<ConversionPoint>(int rounds)>& measure) {
  ConversionFit fit;
  std::string rejected;
  int rounds = rounds_of(options);
  for (int attempt = 0; attempt < kMeasurements; ++attempt, rounds *= 2) {
    fit = fit_conversion(measure(rounds));
    if (fit.cost + 2 * fit.error >= 0) break;
    rejected += fmt::format("{}rejected at {} rounds ({:.3g} ± {:.2g} ns per element)", rejected.empty() ? "; " : ", ",
                            rounds, 1e9 * fit.cost, 1e9 * fit.error);
  }
  if (options.progress) {
    options.progress(fmt::format("{}: {:.3g} ± {:.2g} ns per element over {} shapes, confidence {}{}{}", what, 1e9 * fit.cost,
                                 1e9 * fit.error, fit.points, conversion_confidence(fit), rejected,
                                 fit.cost < 0 ? "; recorded as 0" : ""));
  }
  return recorded_cost(fit);
}

const char* fit_confidence(const Fit& fit) {
  return fit.residual <= kGoodResidual ? "good" : fit.residual <= kResidualLimit ? "fair" : "LOW";
}

Fit fit_roofline(const std::vector<Sample>& fitted, const std::vector<Sample>& held_out) {
  Fit best;
  best.points = static_cast<int>(fitted.size());
  best.held_out = static_cast<int>(held_out.size());
  double rate0 = 0, bandwidth0 = 0;
  for (const Sample& s : fitted) {
    if (s.seconds > 0) rate0 = std::max(rate0, s.work / s.seconds), bandwidth0 = std::max(bandwidth0, s.bytes / s.seconds);
  }
  if (!(rate0 > 0)) rate0 = 1e9;
  if (!(bandwidth0 > 0)) bandwidth0 = 1e9;
  constexpr int kSteps = 96;
  double best_error = std::numeric_limits<double>::infinity();
  auto relative = [](const Roofline& r, const Sample& s) {
    return s.seconds > 0 ? (r.predict(s.work, s.bytes) - s.seconds) / s.seconds : 0.0;
  };
  for (int i = 0; i <= kSteps; ++i) {
    for (int j = 0; j <= kSteps; ++j) {
      Roofline r{0, rate0 * std::exp2(-1 + 9.0 * i / kSteps), bandwidth0 * std::exp2(-1 + 9.0 * j / kSteps)};
      double numerator = 0, denominator = 0;
      for (const Sample& s : fitted) {
        if (!(s.seconds > 0)) continue;
        numerator += (s.seconds - std::max(s.work / r.rate, s.bytes / r.bandwidth)) / (s.seconds * s.seconds);
        denominator += 1 / (s.seconds * s.seconds);
      }
      r.latency = denominator > 0 ? std::max(0.0, numerator / denominator) : 0;
      double error = 0;
      for (const Sample& s : fitted) error += relative(r, s) * relative(r, s);
      if (error < best_error) best_error = error, best.roofline = r;
    }
  }
  for (const Sample& s : fitted) best.fit_residual = std::max(best.fit_residual, std::fabs(relative(best.roofline, s)));
  for (const Sample& s : held_out) best.residual = std::max(best.residual, std::fabs(relative(best.roofline, s)));
  return best;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

Profile calibrate_machine(const CalibrateOptions& options) {
  Profile profile;
  profile.cpu = cpu_model();
  profile.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  profile.threads = std::max(1, options.threads);
  profile.date = precision::utc_date_now();
  measure_classes(options, profile);
  measure_edges(options, profile);
  measure_loads(options, profile);
  return profile;
}

}  // namespace presk::profile
