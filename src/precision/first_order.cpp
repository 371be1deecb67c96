// First-order predictions of a weight move (first_order.h).
#include "precision/first_order.h"

#include <algorithm>
#include <cmath>

#include "ad/vjp.h"
#include "exec/reference/interpreter.h"
#include "precision/native_sweep.h"
#include "support/diagnostics.h"

namespace presk::precision {
namespace {

using reference::MpfrArith;
using Exact = reference::Value<MpfrArith>;

void not_scalar(const ir::Function& entry) {
  user_error("E1120").hint("give a scalar entry (a loss); for a tensor entry the split alone measures the gap, and "
           "`presk solve --menu f64,f32,bf16,int8,int4` prices integers by s·max|ŵ − w|")
      << "the first-order predictions need an entry with one real scalar result; `" << entry.name << "` returns "
      << (entry.results.empty() ? std::string("nothing") : ir::type_to_string(entry.type_of(entry.results[0])));
}

const ir::Function& scalar_vjp(const ir::Program& program, const ir::Function& entry) {
  require_scalar_entry(entry);
  const ir::Function* vjp = program.find_function(ad::vjp_name(entry.name));
  if (vjp == nullptr) not_scalar(entry);
  return *vjp;
}

}  // namespace

void require_scalar_entry(const ir::Function& entry) {
  const bool scalar = entry.results.size() == 1 && entry.type_of(entry.results[0]).kind == ir::ElemKind::Real &&
                      entry.type_of(entry.results[0]).rank() == 0;
  if (!scalar) not_scalar(entry);
}

ParameterGradients binary64_parameter_gradients(const ir::Program& program, const ir::Function& entry,
                                                const reference::ParameterStore& parameters, int64_t count,
                                                const SampleInputs& inputs, int threads,
                                                const GradientSink& each) {
  const ir::Program with_vjps = ad::add_vjps(program);
  scalar_vjp(with_vjps, *with_vjps.find_function(entry.name));
  const exec::native::PreparedParameters binary64 = binary64_parameters(program, parameters);
  ParameterGradients gradients;
  for (int64_t k = 0; k < count; ++k) {
    auto sample = binary64_parameter_cotangents(with_vjps, entry.name, binary64, inputs(k), threads);
    if (each) {
      each(std::move(sample));
    } else {
      gradients.samples.push_back(std::move(sample));
    }
  }
  return gradients;
}

ParameterGradients exact_parameter_gradients(const ir::Program& program, const ir::Function& entry,
                                             const reference::ParameterStore& parameters, int64_t count,
                                             const SampleInputs& inputs, long bits, int threads,
                                             const GradientSink& each) {
  const ir::Program with_vjps = ad::add_vjps(program);
  const ir::Function& vjp = scalar_vjp(with_vjps, *with_vjps.find_function(entry.name));
  const MpfrArith arith(bits);
  reference::RunOptions options;
  options.bits = bits;
  options.threads = threads;
  ParameterGradients gradients;
  for (int64_t k = 0; k < count; ++k) {
    std::vector<Exact> arguments;
    for (const reference::HostTensor& input : inputs(k)) arguments.push_back(reference::to_value(arith, input));
    arguments.push_back(reference::to_value(arith, reference::HostTensor{ir::Type{}, {1.0}, {}}));
    std::vector<Exact> cotangents = reference::run_function<MpfrArith>(with_vjps, vjp, parameters, arguments, options);
    std::map<std::string, std::vector<double>> sample;
    for (size_t r = 0; r < cotangents.size(); ++r) {
      const std::string& name = vjp.result_names[r];
      if (name.starts_with("$") || !cotangents[r].is_real()) continue;  // an argument's
      std::vector<double>& g = sample[name];
      g.resize(static_cast<size_t>(cotangents[r].size()));
      for (size_t i = 0; i < g.size(); ++i) g[i] = arith.to_double(cotangents[r].real(static_cast<int64_t>(i)));
      cotangents[r] = Exact{};  // released as it is copied
    }
    if (each) {
      each(std::move(sample));
    } else {
      gradients.samples.push_back(std::move(sample));
    }
  }
  return gradients;
}

std::map<std::string, std::vector<FirstOrderSums>> first_order_sums(
    const ParameterGradients& gradients, const reference::ParameterStore& true_weights,
    const reference::ParameterStore& moved_weights, const std::vector<std::string>& paths) {
  const MpfrArith arith(128);
  Exact t = Exact::make_real(arith, {5});  // δ, g·δ, Σ g·δ, Σ |g·δ|, Σ (g·δ)²
  std::map<std::string, std::vector<FirstOrderSums>> out;
  for (const auto& sample : gradients.samples) {
    for (const auto& [path, g] : sample) {
      if (!paths.empty() && std::find(paths.begin(), paths.end(), path) == paths.end()) continue;
      const std::vector<double>* w = true_weights.find(path);
      const std::vector<double>* moved = moved_weights.find(path);
      internal_assert(w != nullptr && moved != nullptr && w->size() == g.size() && moved->size() == g.size());
      for (int s = 2; s < 5; ++s) arith.set_zero(t.real(s));
      for (size_t i = 0; i < g.size(); ++i) {
        arith.set_double(t.real(0), (*moved)[i]);
        arith.set_double(t.real(1), (*w)[i]);
        arith.sub(t.real(0), t.real(0), t.real(1));  // δ (at 128 bits)
        arith.set_double(t.real(1), g[i]);
        arith.mul(t.real(1), t.real(1), t.real(0));  // g·δ
        arith.add(t.real(2), t.real(2), t.real(1));
        arith.abs(t.real(0), t.real(1));
        arith.add(t.real(3), t.real(3), t.real(0));
        arith.mul(t.real(0), t.real(1), t.real(1));
        arith.add(t.real(4), t.real(4), t.real(0));
      }
      out[path].push_back({arith.to_double(t.real(3)), arith.to_double(t.real(2)), arith.to_double(t.real(4))});
    }
  }
  return out;
}

FirstOrderPrediction combine(const std::map<std::string, std::vector<FirstOrderSums>>& sums) {
  std::vector<FirstOrderSums> per_sample;
  for (const auto& [path, samples] : sums) {
    per_sample.resize(std::max(per_sample.size(), samples.size()));
    for (size_t k = 0; k < samples.size(); ++k) {
      per_sample[k].bound += samples[k].bound;
      per_sample[k].signed_sum += samples[k].signed_sum;
      per_sample[k].squares += samples[k].squares;
    }
  }
  FirstOrderPrediction prediction;
  for (const FirstOrderSums& s : per_sample) {
    prediction.bound = std::max(prediction.bound, s.bound);
    if (std::fabs(s.signed_sum) > std::fabs(prediction.signed_sum)) prediction.signed_sum = s.signed_sum;
    prediction.rss = std::max(prediction.rss, std::sqrt(s.squares));
  }
  return prediction;
}

}  // namespace presk::precision
