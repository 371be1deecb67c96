// `presk run PROGRAM --entry E --exact`: compiles the program, takes its parameters from
// --weights or synthesizes them from the seed, reads the entry's data arguments from --data
// or synthesizes them, runs the exact reference interpreter (MPFR, or Arb balls with
// --arith ball) on --samples N samples from --offset K, and prints each output to --digits
// significant digits, or every element as decimal strings with --json, and with --out
// writes them to a safetensors file. With --realize R the native executor runs the entry
// under realization R instead (cli/run_native.cpp), and with --exact too, beside its gap to
// the exact value; with --grad the entry's vjp instead (cli/run_gradient.cpp), on the reference
// (--exact), natively (--realize R), or both with each cotangent's gap.
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <type_traits>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/pipeline.h"
#include "cli/run_gradient.h"
#include "cli/run_native.h"
#include "exec/reference/exact_dot.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/output_file.h"
#include "exec/reference/weights.h"
#include "lang/frontend.h"
#include "precision/measure.h"
#include "support/diagnostics.h"

namespace presk::cli {
namespace {

struct RunCommandOptions {
  RunInputOptions input;
  bool exact = false;
  long bits = 256;
  std::string arith = "mpfr";
  std::string out;      // --out F.safetensors
  int digits = 10;
  std::string realize;  // --realize R: the native executor under R
  bool scalar = false;  // --scalar: the native executor's defining scalar kernels
  bool grad = false;    // --grad: the entry's vjp (cli/run_gradient.cpp)
  std::string contraction = "exact";  // --contraction exact|mpfr-dot|fma-chain (MPFR, docs/reference.md)
};

constexpr int64_t kShownElements = 64;  // elements a table prints per output

std::string index_text(int64_t flat, const std::vector<int64_t>& shape) {
  std::string text;
  for (size_t i = shape.size(); i-- > 0;) {
    text = std::to_string(flat % shape[i]) + (text.empty() ? "" : ", ") + text;
    flat /= shape[i];
  }
  return "[" + text + "]";
}

template <class A>
std::string element_text(const A& arith, const reference::Value<A>& value, int64_t i, int digits) {
  if (!value.is_real()) return std::to_string(value.integers[i]);
  std::string text = arith.to_decimal(value.real(i), digits);
  if constexpr (A::kIsBall) text += " ± " + arith.radius_decimal(value.real(i));
  return text;
}

template <class A>
void print_table(const A& arith, const ir::Function& entry, const std::vector<reference::Value<A>>& outputs,
                 int digits) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    const reference::Value<A>& value = outputs[k];
    ir::Type type = entry.type_of(entry.results[k]);
    std::cout << entry.name << (outputs.size() > 1 ? "#" + std::to_string(k) : "") << " : "
              << ir::type_to_string(type);
    if (value.shape.empty()) {
      std::cout << " = " << element_text(arith, value, 0, digits) << '\n';
      continue;
    }
    std::cout << '\n';
    int64_t shown = std::min(value.size(), kShownElements);
    for (int64_t i = 0; i < shown; ++i) {
      std::cout << "  " << index_text(i, value.shape) << "  " << element_text(arith, value, i, digits) << '\n';
    }
    if (shown < value.size()) {
      std::cout << "  … " << value.size() - shown << " more elements (--json prints all)\n";
    }
  }
}

template <class A>
nlohmann::json outputs_json(const A& arith, const ir::Function& entry,
                            const std::vector<reference::Value<A>>& outputs) {
  nlohmann::json list = nlohmann::json::array();
  int digits = reference::exact_digits(arith.bits());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const reference::Value<A>& value = outputs[k];
    nlohmann::json values = nlohmann::json::array(), radii = nlohmann::json::array();
    for (int64_t i = 0; i < value.size(); ++i) {
      values.push_back(value.is_real() ? arith.to_decimal(value.real(i), digits)
                                       : std::to_string(value.integers[i]));
      if (A::kIsBall && value.is_real()) radii.push_back(arith.radius_decimal(value.real(i)));
    }
    nlohmann::json output = {{"type", ir::type_to_string(entry.type_of(entry.results[k]))},
                             {"shape", value.shape},
                             {"values", values}};
    if (A::kIsBall) output["radius"] = radii;
    list.push_back(std::move(output));
  }
  return list;
}

// The JSON report: one sample's outputs as before; with --samples, one entry per sample.
template <class A>
nlohmann::json report_json(const A& arith, const PreparedRun& prepared, const RunCommandOptions& options,
                           const GlobalOptions& global,
                           const std::vector<std::vector<reference::Value<A>>>& samples, double seconds) {
  nlohmann::json report = {{"entry", prepared.entry->name}, {"arith", A::kName},
                           {"bits", options.bits},          {"seed", global.seed},
                           {"threads", global.threads},     {"weights", options.input.weights},
                           {"offset", prepared.first},      {"seconds", seconds}};
  if (options.input.samples == 0) {
    report["outputs"] = outputs_json(arith, *prepared.entry, samples[0]);
    return report;
  }
  nlohmann::json list = nlohmann::json::array();
  for (size_t k = 0; k < samples.size(); ++k) {
    list.push_back({{"sample", prepared.first + static_cast<int64_t>(k)},
                    {"outputs", outputs_json(arith, *prepared.entry, samples[k])}});
  }
  report["samples"] = std::move(list);
  return report;
}

template <class A>
void write_out(const A& arith, const PreparedRun& prepared, const RunCommandOptions& options,
               const GlobalOptions& global, const std::vector<std::vector<reference::Value<A>>>& samples) {
  reference::RunRecord record{options.input.program_path, prepared.entry->name, A::kName, options.bits,
                              global.seed, prepared.first, options.input.samples > 0, options.input.weights,
                              options.input.data};
  reference::write_outputs(options.out, arith, *prepared.entry, samples, record);
}

template <class A>
int run_in(const PreparedRun& prepared, const RunCommandOptions& options, const GlobalOptions& global) {
  A arith(options.bits);
  reference::RunOptions run_options;
  run_options.bits = options.bits;
  run_options.threads = global.threads;
  reference::SampleArguments<A> arguments_of = [&](const A& a, int64_t k) {
    std::vector<reference::Value<A>> arguments;
    for (const reference::HostTensor& input : prepared.inputs(k, global.seed)) {
      arguments.push_back(reference::to_value(a, input));
    }
    return arguments;
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<reference::Value<A>>> samples;
  if constexpr (std::is_same_v<A, reference::MpfrArith>) {  // split across the ranks of a distributed run
    samples = precision::run_exactly(prepared.program, *prepared.entry, prepared.parameters, prepared.count,
                                     [&](int64_t k) { return prepared.inputs(k, global.seed); }, options.bits,
                                     global.threads).samples;
  } else {
    samples = reference::run_samples<A>(prepared.program, *prepared.entry, prepared.parameters, prepared.count,
                                        arguments_of, run_options);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!options.out.empty()) write_out(arith, prepared, options, global, samples);
  if (global.json) {
    std::cout << report_json(arith, prepared, options, global, samples, seconds).dump(2) << '\n';
    return 0;
  }
  std::cout << "# exact " << A::kName << " at " << options.bits << " bits, seed " << global.seed
            << ", " << global.threads << " thread" << (global.threads == 1 ? "" : "s") << ", "
            << (options.input.weights.empty() ? "synthesized parameters" : options.input.weights) << ", "
            << seconds << " s" << (options.out.empty() ? "" : ", written to " + options.out) << '\n';
  for (size_t k = 0; k < samples.size(); ++k) {
    if (options.input.samples > 0) std::cout << "# sample " << prepared.first + static_cast<int64_t>(k) << '\n';
    print_table(arith, *prepared.entry, samples[k], options.digits);
  }
  return 0;
}

int run_command(const RunCommandOptions& options, const GlobalOptions& global) {
  if (!options.exact && options.realize.empty()) {
    user_error("E0540").hint("add --exact (the reference interpreter) or --realize f32 (native)")
        << "presk run needs --exact, --realize R, or both (native beside its gap to exact)";
  }
  reference::Arithmetic arithmetic =
      options.arith == "ball" ? reference::Arithmetic::Ball : reference::Arithmetic::Mpfr;
  if (options.grad && arithmetic == reference::Arithmetic::Ball) {
    user_error("E0541").hint("drop --arith ball: --grad runs the vjp on MPFR (--exact) or natively (--realize R)")
        << "--grad does not run on Arb balls (--arith ball)";
  }
  if (options.contraction != "exact" && (options.grad || !options.realize.empty() ||
                                         arithmetic == reference::Arithmetic::Ball)) {
    user_error("E0521").hint("drop --contraction, or run the forward entry alone with --exact (MPFR)")
        << "--contraction " << options.contraction
        << " selects how the MPFR reference sums a forward run; it does not apply with --grad, --realize or --arith ball";
  }
  reference::set_contraction_sums(options.contraction == "fma-chain" ? reference::ContractionSums::FmaChain
                                  : options.contraction == "mpfr-dot" ? reference::ContractionSums::MpfrDot
                                                                      : reference::ContractionSums::Exact);
  std::vector<CommandFile> inputs = run_input_files(options.input);
  inputs.push_back({"--realize", realization_file(options.realize)});
  check_output_files({{"--out", options.out}}, inputs);
  RunInputOptions input = options.input;
  const bool exact = options.exact || options.realize.empty();
  input.memory.reference_bytes = exact ? reference_bytes_per_element(options.bits, arithmetic == reference::Arithmetic::Ball) : 0;
  input.memory.native_bytes = options.realize.empty() ? 0 : kNativeBytesPerElement;
  input.memory.program_copies = options.grad ? 3 : 1;
  input.memory.observed = options.grad;
  input.memory.keeps_outputs = true;
  PreparedRun prepared = prepare_run(input, global);
  if (options.grad) {
    GradientRunOptions gradient{options.bits, options.digits, options.out, options.realize, options.scalar, options.exact};
    return run_gradient(prepared, gradient, global);
  }
  if (!options.realize.empty()) {
    NativeRunOptions native{options.realize, options.scalar, options.exact, options.bits,
                            options.digits, options.out};
    return run_native(prepared, native, global);
  }
  if (arithmetic == reference::Arithmetic::Ball) return run_in<reference::BallArith>(prepared, options, global);
  return run_in<reference::MpfrArith>(prepared, options, global);
}

Registration registration("run", 20, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<RunCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "run", "Run an entry: --exact (the reference interpreter), --realize R (native), or both");
  add_run_input_options(*command, options->input);
  command->add_flag("--exact", options->exact, "Run the exact reference interpreter");
  command->add_option("--realize", options->realize,
                      "Run natively under a realization: f64, f32, bf16 or @file.json");
  command->add_flag("--grad", options->grad,
                    "Run the entry's vjp (cotangent of ones) on --exact and/or --realize R; print the cotangents' 2-norms");
  command->add_flag("--scalar", options->scalar, "Native: the scalar kernels (they define the bits)");
  command->add_option("--bits", options->bits, "Working precision in bits (MPFR, or Arb's)")
      ->capture_default_str();
  command->add_option("--arith", options->arith, "mpfr: correctly rounded; ball: Arb enclosures")
      ->check(CLI::IsMember({"mpfr", "ball"}))->capture_default_str();
  command->add_option("--contraction", options->contraction,
                      "MPFR contractions: exact (exact sum, rounded once), mpfr-dot (the same number by mpfr_dot, slower) or fma-chain (term by term)")
      ->check(CLI::IsMember({"exact", "mpfr-dot", "fma-chain"}))->capture_default_str();
  command->add_option("--out", options->out,
                      "Write the outputs to a safetensors file (F64, exact decimals in __metadata__)");
  command->add_option("--digits", options->digits, "Significant digits printed")
      ->check(CLI::Range(1, 100000))->capture_default_str();
  add_threads_option(*command, global);
  add_seed_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_command(*options, global); };
});

}  // namespace
}  // namespace presk::cli
