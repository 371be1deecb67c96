// `presk run --realize R [--exact]`: runs the native executor on every sample of a prepared
// run; with --exact also the reference (MPFR at --bits) and reports, per output, the largest
// elementwise gap |native − exact| (computed in MPFR, then rounded), absolute and relative to
// the output's largest exact magnitude. The gap is +∞ when a native element is not finite.
#include "cli/run_native.h"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "exec/native/executor.h"
#include "exec/reference/interpreter.h"
#include "generate/twins.h"
#include "precision/measure.h"
#include "support/safetensors.h"

namespace presk::cli {
namespace {

using Outputs = std::vector<Tensor>;

using Gap = precision::MeasuredGap;  // max |native − exact|, max |exact|

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t extent : shape) text += (text.empty() ? "" : ", ") + std::to_string(extent);
  return shape.empty() ? "" : "[" + text + "]";
}

std::string shortest(double value) {
  std::ostringstream out;
  out << std::setprecision(std::numeric_limits<double>::max_digits10) << value;
  return out.str();
}

std::vector<Outputs> run_samples_natively(const PreparedRun& prepared,
                                          const exec::native::Realization& realization,
                                          const NativeRunOptions& options,
                                          const GlobalOptions& global) {
  exec::native::PreparedParameters parameters = exec::native::prepare_parameters(
      prepared.program, realization,
      [&](const std::string& path) { return prepared.parameters.view(path); });
  exec::native::ExecuteOptions execute{global.threads, options.scalar};
  std::vector<Outputs> samples;
  for (int64_t k = 0; k < prepared.count; ++k) {
    samples.push_back(exec::native::execute(prepared.program, prepared.entry->name, realization,
                                            to_tensors(prepared.inputs(k, global.seed)),
                                            parameters, execute));
  }
  return samples;
}

using Exact = std::vector<reference::Value<reference::MpfrArith>>;

std::vector<Exact> run_samples_exactly(const PreparedRun& prepared, const reference::MpfrArith& arith,
                                       const GlobalOptions& global) {
  reference::RunOptions run_options;
  run_options.bits = arith.bits();
  run_options.threads = global.threads;
  reference::SampleArguments<reference::MpfrArith> arguments_of =
      [&](const reference::MpfrArith& a, int64_t k) {
        Exact arguments;
        for (const reference::HostTensor& input : prepared.inputs(k, global.seed)) {
          arguments.push_back(reference::to_value(a, input));
        }
        return arguments;
      };
  return reference::run_samples<reference::MpfrArith>(prepared.program, *prepared.entry,
                                                      prepared.parameters, prepared.count,
                                                      arguments_of, run_options);
}

Gap gap_of(const reference::MpfrArith& arith, const Tensor& native,
           const reference::Value<reference::MpfrArith>& exact) {
  Gap gap;
  precision::add_gap(arith, native, exact, gap);
  return gap;
}

// Element i as text: an integer exactly (int64 is wider than a double's significand), a real
// as its shortest round-trip decimal.
std::string element_text(const Tensor& tensor, uint64_t i) {
  return facts(tensor.type()).is_float ? shortest(tensor.get(i)) : std::to_string(tensor.get_integer(i));
}

nlohmann::json tensor_values(const Tensor& tensor) {
  nlohmann::json values = nlohmann::json::array();
  for (uint64_t i = 0; i < tensor.element_count(); ++i) values.push_back(element_text(tensor, i));
  return values;
}

void print_output(const std::string& name, const Tensor& native, const Gap* gap,
                  const std::string& exact_text) {
  std::cout << name << " : " << type_name(native.type()) << shape_text(native.shape());
  if (native.element_count() == 1) std::cout << " = " << element_text(native, 0);
  else if (native.element_count() > 0) std::cout << ", first element " << element_text(native, 0);
  std::cout << '\n';
  if (gap == nullptr) return;
  std::cout << "  exact " << exact_text << "\n  gap   " << std::setprecision(3) << gap->absolute
            << " absolute, " << gap->relative() << " relative to the largest |exact| "
            << std::setprecision(6) << '\n';
}


// --out: one tensor per output (the sample's outputs, or `<entry>#k/sample s`), in its realized
// element type, with the run's description in the metadata.
void write_outputs(const PreparedRun& prepared, const NativeRunOptions& options,
                   const std::vector<Outputs>& samples) {
  std::vector<NamedTensor> named;
  std::vector<std::string> names;
  for (size_t s = 0; s < samples.size(); ++s) {
    for (size_t k = 0; k < samples[s].size(); ++k) {
      std::string name = prepared.entry->name;
      if (samples[s].size() > 1) name += "#" + std::to_string(k);
      if (samples.size() > 1) name += "/sample" + std::to_string(prepared.first + int64_t(s));
      names.push_back(name);
    }
  }
  size_t i = 0;
  for (const Outputs& outputs : samples) {
    for (const Tensor& tensor : outputs) named.push_back({names[i++], tensor});
  }
  write_safetensors(options.out, named,
                    {{"presk:run", "native, realization " + options.realize + ", entry " +
                                       prepared.entry->name}});
}

nlohmann::json report_json(const PreparedRun& prepared, const NativeRunOptions& options,
                           const std::vector<Outputs>& samples, const std::vector<std::vector<Gap>>& gaps,
                           double seconds) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t s = 0; s < samples.size(); ++s) {
    nlohmann::json outputs = nlohmann::json::array();
    for (size_t k = 0; k < samples[s].size(); ++k) {
      nlohmann::json output = {{"type", type_name(samples[s][k].type())},
                               {"shape", samples[s][k].shape()},
                               {"values", tensor_values(samples[s][k])}};
      if (!gaps.empty()) {
        output["gap_absolute"] = gaps[s][k].absolute;
        output["gap_relative"] = gaps[s][k].relative();
      }
      outputs.push_back(std::move(output));
    }
    list.push_back({{"sample", prepared.first + static_cast<int64_t>(s)}, {"outputs", outputs}});
  }
  return {{"entry", prepared.entry->name}, {"realize", options.realize},
          {"scalar", options.scalar},      {"native_seconds", seconds},
          {"samples", list}};
}

}  // namespace

int run_native(const PreparedRun& prepared, const NativeRunOptions& options,
               const GlobalOptions& global) {
  const exec::native::Realization realization = generate::realization_for_entry(
      exec::native::load_realization(options.realize, prepared.program), prepared.program, prepared.entry->name);
  auto start = std::chrono::steady_clock::now();
  std::vector<Outputs> samples = run_samples_natively(prepared, realization, options, global);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!options.out.empty()) write_outputs(prepared, options, samples);

  reference::MpfrArith arith(options.bits);
  std::vector<Exact> exact;
  std::vector<std::vector<Gap>> gaps;
  if (options.exact) {
    exact = run_samples_exactly(prepared, arith, global);
    for (size_t s = 0; s < samples.size(); ++s) {
      gaps.emplace_back();
      for (size_t k = 0; k < samples[s].size(); ++k) {
        gaps.back().push_back(gap_of(arith, samples[s][k], exact[s][k]));
      }
    }
  }
  if (global.json) {
    std::cout << report_json(prepared, options, samples, gaps, seconds).dump(2) << '\n';
    return 0;
  }
  std::cout << "# native, realization " << options.realize << (options.scalar ? ", scalar" : "")
            << ", seed " << global.seed << ", " << global.threads << " thread"
            << (global.threads == 1 ? "" : "s") << ", " << seconds << " s"
            << (options.exact ? "; exact: MPFR at " + std::to_string(options.bits) + " bits" : "")
            << '\n';
  for (size_t s = 0; s < samples.size(); ++s) {
    if (samples.size() > 1) std::cout << "# sample " << prepared.first + int64_t(s) << '\n';
    for (size_t k = 0; k < samples[s].size(); ++k) {
      std::string name = prepared.entry->name + (samples[s].size() > 1 ? "#" + std::to_string(k) : "");
      std::string exact_text;
      if (options.exact && exact[s][k].size() > 0) {
        exact_text = exact[s][k].is_real() ? arith.to_decimal(exact[s][k].real(0), options.digits)
                                           : std::to_string(exact[s][k].integers[0]);
        if (exact[s][k].size() > 1) exact_text = "first element " + exact_text;
      }
      print_output(name, samples[s][k], options.exact ? &gaps[s][k] : nullptr, exact_text);
    }
  }
  return 0;
}

}  // namespace presk::cli
