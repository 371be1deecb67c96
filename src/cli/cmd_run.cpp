// `presk run PROGRAM --entry E --exact`: compiles the program, takes its parameters from
// --weights or synthesizes them from the seed, synthesizes the entry's data arguments, runs
// the exact reference interpreter (MPFR, or Arb balls with --arith ball) and prints each
// output to --digits significant digits, or every element as decimal strings with --json.
// The --const K=V / --dim N=V parser is local to this file, as is cmd_dump.cpp's (same codes);
// a shared helper in src/cli would replace both.
#include <chrono>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/weights.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"

namespace presk::cli {
namespace {

struct RunCommandOptions {
  std::string program_path;
  std::string entry;
  bool exact = false;
  long bits = 256;
  std::string arith = "mpfr";
  std::vector<std::string> consts;  // "K=V"
  std::vector<std::string> dims;    // "N=V"
  std::string weights;
  std::string data;
  int64_t offset = 0;
  int digits = 10;
  int64_t token_range = 0;  // 0: default_token_range
};

constexpr int64_t kShownElements = 64;  // elements a table prints per output

// "NAME=INTEGER" → Binding; anything else is `code` (E0004 for --const, E0005 for --dim, the
// codes `presk dump` uses for the same mistake).
std::vector<lang::Binding> parse_bindings(const std::vector<std::string>& texts,
                                          const char* option, const char* code) {
  std::vector<lang::Binding> bindings;
  for (const std::string& text : texts) {
    size_t equals = text.find('=');
    std::string value = equals == std::string::npos ? "" : text.substr(equals + 1);
    char* end = nullptr;
    long long number = value.empty() ? 0 : std::strtoll(value.c_str(), &end, 10);
    if (equals == 0 || equals == std::string::npos || value.empty() || *end != '\0') {
      user_error(code).hint(std::string("write ") + option + " NAME=INTEGER, e.g. " + option + " T=16")
          << option << " `" << text << "` is not NAME=INTEGER";
    }
    bindings.push_back({text.substr(0, equals), static_cast<int64_t>(number)});
  }
  return bindings;
}

// Digits that identify a `bits`-bit binary number: ⌈bits·log₁₀2⌉ + 1.
int exact_digits(long bits) { return static_cast<int>(std::ceil(bits * 0.30102999566398120)) + 1; }

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
  int digits = exact_digits(arith.bits());
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

struct Prepared {
  ir::Program program;
  const ir::Function* entry = nullptr;
  reference::ParameterStore parameters;
  std::vector<reference::HostTensor> inputs;
};

Prepared prepare(const RunCommandOptions& options, const GlobalOptions& global) {
  lang::FrontendOptions frontend;
  frontend.consts = parse_bindings(options.consts, "--const", "E0004");
  frontend.dims = parse_bindings(options.dims, "--dim", "E0005");
  frontend.entry = options.entry;
  Prepared prepared;
  prepared.program = lang::compile(lang::read_source(options.program_path), frontend);
  prepared.entry = &reference::find_entry(prepared.program, options.entry);
  prepared.parameters = options.weights.empty()
      ? reference::synthesize_parameters(prepared.program, global.seed, global.threads)
      : reference::load_weights(prepared.program, options.weights);
  bool has_integer_input = false;
  for (const ir::Type& type : prepared.entry->argument_types) {
    has_integer_input |= type.kind == ir::ElemKind::Int;
  }
  int64_t token_range = options.token_range;
  if (token_range == 0 && has_integer_input && options.data.empty()) token_range = reference::default_token_range(prepared.program);
  prepared.inputs = options.data.empty()
      ? reference::synthesize_inputs(*prepared.entry, global.seed, token_range)
      : reference::load_inputs(*prepared.entry, options.data, options.offset);
  return prepared;
}

template <class A>
int run_in(const Prepared& prepared, const RunCommandOptions& options, const GlobalOptions& global) {
  A arith(options.bits);
  reference::RunOptions run_options;
  run_options.bits = options.bits;
  run_options.threads = global.threads;
  std::vector<reference::Value<A>> arguments;
  for (const reference::HostTensor& input : prepared.inputs) arguments.push_back(reference::to_value(arith, input));
  auto start = std::chrono::steady_clock::now();
  std::vector<reference::Value<A>> outputs = reference::run_function<A>(
      prepared.program, *prepared.entry, prepared.parameters, arguments, run_options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (global.json) {
    nlohmann::json report = {{"entry", prepared.entry->name}, {"arith", A::kName},
                             {"bits", options.bits},          {"seed", global.seed},
                             {"threads", global.threads},     {"weights", options.weights},
                             {"seconds", seconds},            {"outputs", outputs_json(arith, *prepared.entry, outputs)}};
    std::cout << report.dump(2) << '\n';
    return 0;
  }
  std::cout << "# exact " << A::kName << " at " << options.bits << " bits, seed " << global.seed
            << ", " << global.threads << " thread" << (global.threads == 1 ? "" : "s") << ", "
            << (options.weights.empty() ? "synthesized parameters" : options.weights) << ", "
            << seconds << " s\n";
  print_table(arith, *prepared.entry, outputs, options.digits);
  return 0;
}

int run_command(const RunCommandOptions& options, const GlobalOptions& global) {
  if (!options.exact) {
    user_error("E0540").hint("add --exact (the native executor is not part of this build yet)")
        << "presk run needs --exact: only the reference interpreter can run this entry";
  }
  reference::Arithmetic arithmetic =
      options.arith == "ball" ? reference::Arithmetic::Ball : reference::Arithmetic::Mpfr;
  Prepared prepared = prepare(options, global);
  if (arithmetic == reference::Arithmetic::Ball) return run_in<reference::BallArith>(prepared, options, global);
  return run_in<reference::MpfrArith>(prepared, options, global);
}

Registration registration("run", 20, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<RunCommandOptions>();
  CLI::App* command = app.add_subcommand("run", "Run an entry of a program (--exact: the reference interpreter)");
  command->add_option("program", options->program_path, "The .psk program")->required();
  command->add_option("--entry", options->entry, "The entry to run")->required();
  command->add_flag("--exact", options->exact, "Run the exact reference interpreter");
  command->add_option("--bits", options->bits, "Working precision in bits (MPFR, or Arb's)")
      ->capture_default_str();
  command->add_option("--arith", options->arith, "mpfr: correctly rounded; ball: Arb enclosures")
      ->check(CLI::IsMember({"mpfr", "ball"}))->capture_default_str();
  command->add_option("--const", options->consts, "Override a const: --const D=32");
  command->add_option("--dim", options->dims, "Bind a dim: --dim T=256");
  command->add_option("--weights", options->weights, "Parameters from a safetensors file");
  command->add_option("--data", options->data,
                      "Data arguments from a safetensors file (one tensor per argument, by name)");
  command->add_option("--offset", options->offset, "The sample of --data to run (its leading axis)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--digits", options->digits, "Significant digits printed")
      ->check(CLI::Range(1, 100000))->capture_default_str();
  command->add_option("--token-range", options->token_range,
                      "Synthesized Z inputs lie in [0, V) (default: rows of the embedded table)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 62));
  add_threads_option(*command, global);
  add_seed_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_command(*options, global); };
});

}  // namespace
}  // namespace presk::cli
