// `presk bench PROGRAM --entry E --realize R [-n N] [--json]`: times the native executor on one
// entry under one realization. Parameters and inputs are synthesized from --seed exactly as the
// reference does (support/random.h through reference::synthesize_*), converted once under the
// realization (not timed); one warm-up run, then N timed runs; prints median, min and max ms
// and the first element of the first output (the loss of a loss entry).
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "exec/native/executor.h"
#include "exec/reference/parameters.h"
#include "lang/frontend.h"

namespace presk::cli {
namespace {

struct BenchOptions {
  std::string program_path;
  std::string entry;
  std::string realize;
  int runs = 10;
  bool scalar = false;
  std::vector<std::string> consts;  // "K=V"
  std::vector<std::string> dims;    // "N=V"
  int64_t token_range = 0;          // 0: the reference's default
};

std::vector<lang::Binding> bindings(const std::vector<std::string>& texts, const char* option, const char* code) {
  std::vector<lang::Binding> out;
  for (const std::string& text : texts) {
    const size_t equals = text.find('=');
    char* end = nullptr;
    const std::string value = equals == std::string::npos ? "" : text.substr(equals + 1);
    const long long number = value.empty() ? 0 : std::strtoll(value.c_str(), &end, 10);
    if (equals == 0 || equals == std::string::npos || value.empty() || *end != '\0') {
      user_error(code).hint(std::string("write ") + option + " NAME=INTEGER") << option << " `" << text << "` is not NAME=INTEGER";
    }
    out.push_back({text.substr(0, equals), static_cast<int64_t>(number)});
  }
  return out;
}

std::vector<Tensor> tensors_of(const std::vector<reference::HostTensor>& hosts) {
  std::vector<Tensor> out;
  for (const reference::HostTensor& host : hosts) {
    if (host.type.kind == ir::ElemKind::Real) {
      Tensor t(ElementType::f64, host.type.shape);
      for (size_t i = 0; i < host.reals.size(); ++i) t.set(i, host.reals[i]);
      out.push_back(std::move(t));
    } else {
      Tensor t(host.type.kind == ir::ElemKind::Int ? ElementType::i64 : ElementType::boolean, host.type.shape);
      for (size_t i = 0; i < host.integers.size(); ++i) t.set_integer(i, host.integers[i]);
      out.push_back(std::move(t));
    }
  }
  return out;
}

int run_bench(const BenchOptions& options, const GlobalOptions& global) {
  lang::FrontendOptions frontend;
  frontend.consts = bindings(options.consts, "--const", "E0004");
  frontend.dims = bindings(options.dims, "--dim", "E0005");
  frontend.entry = options.entry;
  const ir::Program program = lang::compile(lang::read_source(options.program_path), frontend);
  const ir::Function* entry = program.find_function(options.entry);
  if (!entry) user_error("E0621") << "the program has no entry `" << options.entry << "`";
  const exec::native::Realization realization = exec::native::load_realization(options.realize, program);
  const int threads = global.threads > 0 ? global.threads : static_cast<int>(std::thread::hardware_concurrency());
  const reference::ParameterStore store = reference::synthesize_parameters(program, global.seed, threads);
  bool integer_input = false;
  for (const ir::Type& type : entry->argument_types) integer_input |= type.kind == ir::ElemKind::Int;
  int64_t token_range = options.token_range;
  if (token_range == 0 && integer_input) token_range = reference::default_token_range(program);
  const std::vector<Tensor> inputs = tensors_of(reference::synthesize_inputs(*entry, global.seed, token_range));
  const exec::native::PreparedParameters parameters = exec::native::prepare_parameters(
      program, realization, [&](const std::string& path) { return store.find(path); });
  const exec::native::ExecuteOptions run_options{threads, options.scalar};
  const std::vector<Tensor> outputs =
      exec::native::execute(program, options.entry, realization, inputs, parameters, run_options);  // warm-up
  const double first = outputs.empty() || outputs[0].element_count() == 0 ? 0.0 : outputs[0].get(0);
  std::vector<double> ms;
  for (int r = 0; r < std::max(options.runs, 1); ++r) {
    const auto start = std::chrono::steady_clock::now();
    exec::native::execute(program, options.entry, realization, inputs, parameters, run_options);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                          : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  if (global.json) {
    nlohmann::json out = {{"program", options.program_path}, {"entry", options.entry}, {"realize", options.realize},
                          {"threads", threads}, {"runs", ms.size()}, {"scalar", options.scalar},
                          {"median_ms", median}, {"min_ms", sorted.front()}, {"max_ms", sorted.back()},
                          {"first_output", first}};
    std::cout << out.dump() << "\n";
  } else {
    std::cout << options.program_path << " --entry " << options.entry << " --realize " << options.realize << " ("
              << threads << " threads, " << ms.size() << " runs after a warm-up" << (options.scalar ? ", scalar" : "")
              << ")\n  first output element " << std::setprecision(17) << first << std::setprecision(6) << "\n  median " << median << " ms   min " << sorted.front() << " ms   max " << sorted.back() << " ms\n";
  }
  return 0;
}

Registration registration("bench", 45, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command = app.add_subcommand("bench", "Time the native executor on an entry under a realization");
  command->add_option("program", options->program_path, "The .psk program")->required();
  command->add_option("--entry", options->entry, "The entry to run")->required();
  command->add_option("--realize", options->realize, "f64, f32, bf16, or @realization.json")->required();
  command->add_option("-n,--runs", options->runs, "Timed runs after one warm-up")->capture_default_str();
  command->add_flag("--scalar", options->scalar, "Use the scalar kernels (they define the bits)");
  command->add_option("--const", options->consts, "Override a const: --const D=32");
  command->add_option("--dim", options->dims, "Bind a dim: --dim T=256");
  command->add_option("--token-range", options->token_range, "Draw integer inputs from [0, V)");
  add_threads_option(*command, global);
  add_seed_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_bench(*options, global); };
});

}  // namespace
}  // namespace presk::cli
