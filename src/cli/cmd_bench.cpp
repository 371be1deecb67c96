// `presk bench PROGRAM --entry E --realize R [-n N] [--json]`: times the native executor on one
// entry under one realization. Parameters and inputs are synthesized from --seed exactly as the
// reference does (support/random.h through reference::synthesize_*), or read from --weights and
// --data (the sample at --offset), converted once under the realization (not timed); one warm-up run, then N timed runs; prints median, min and max ms
// and the first element of the first output (the loss of a loss entry).
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/pipeline.h"
#include "exec/native/executor.h"
#include "exec/reference/parameters.h"
#include "lang/frontend.h"

namespace presk::cli {
namespace {

struct BenchOptions {
  RunInputOptions input;  // the program, its entry, bindings, --weights, --data, --offset
  std::string realize;
  int runs = 10;
  bool scalar = false;
};

int run_bench(const BenchOptions& options, const GlobalOptions& global) {
  const PreparedRun prepared = prepare_run(options.input, global);
  const ir::Program& program = prepared.program;
  const exec::native::Realization realization = exec::native::load_realization(options.realize, program);
  const int threads = global.threads;
  const std::vector<Tensor> inputs = to_tensors(prepared.inputs(0, global.seed));
  const exec::native::PreparedParameters parameters = exec::native::prepare_parameters(
      program, realization, [&](const std::string& path) { return prepared.parameters.find(path); });
  const exec::native::ExecuteOptions run_options{threads, options.scalar};
  const std::vector<Tensor> outputs =
      exec::native::execute(program, options.input.entry, realization, inputs, parameters, run_options);  // warm-up
  const double first = outputs.empty() || outputs[0].element_count() == 0 ? 0.0 : outputs[0].get(0);
  std::vector<double> ms;
  for (int r = 0; r < std::max(options.runs, 1); ++r) {
    const auto start = std::chrono::steady_clock::now();
    exec::native::execute(program, options.input.entry, realization, inputs, parameters, run_options);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                          : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  if (global.json) {
    nlohmann::json out = {{"program", options.input.program_path}, {"entry", options.input.entry}, {"realize", options.realize},
                          {"threads", threads}, {"runs", ms.size()}, {"scalar", options.scalar},
                          {"median_ms", median}, {"min_ms", sorted.front()}, {"max_ms", sorted.back()},
                          {"first_output", first}};
    std::cout << out.dump() << "\n";
  } else {
    std::cout << options.input.program_path << " --entry " << options.input.entry << " --realize " << options.realize << " ("
              << threads << " threads, " << ms.size() << " runs after a warm-up" << (options.scalar ? ", scalar" : "")
              << ")\n  first output element " << std::setprecision(17) << first << std::setprecision(6) << "\n  median " << median << " ms   min " << sorted.front() << " ms   max " << sorted.back() << " ms\n";
  }
  return 0;
}

Registration registration("bench", 45, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command = app.add_subcommand("bench", "Time the native executor on an entry under a realization");
  add_run_input_options(*command, options->input);
  command->add_option("--realize", options->realize, "f64, f32, bf16, or @realization.json")->required();
  command->add_option("-n,--runs", options->runs, "Timed runs after one warm-up")->capture_default_str();
  command->add_flag("--scalar", options->scalar, "Use the scalar kernels (they define the bits)");
  add_threads_option(*command, global);
  add_seed_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_bench(*options, global); };
});

}  // namespace
}  // namespace presk::cli
