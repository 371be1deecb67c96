// `presk bench PROGRAM --entry E --realize R [-n N] [--profile] [--json]`: times the native executor on one
// entry under one realization. Parameters and inputs are synthesized from --seed exactly as the
// reference does (support/random.h through reference::synthesize_*), or read from --weights and
// --data (the sample at --offset), converted once under the realization (not timed); one warm-up run, then N timed runs; prints median, min and max ms
// and the first element of the first output (the loss of a loss entry). --grad times the
// entry's vjp (`E.vjp`, src/ad/vjp.h) seeded with ones instead, as `presk run --grad` runs it.
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/bench_compare.h"
#include "ad/vjp.h"
#include "cli/pipeline.h"
#include "cli/profile_table.h"
#include "exec/native/executor.h"
#include "exec/reference/parameters.h"
#include "generate/twins.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"

namespace presk::cli {
namespace {

struct BenchOptions {
  RunInputOptions input;  // the program, its entry, bindings, --weights, --data, --offset
  std::string realize;
  int runs = 10;
  bool scalar = false;
  bool grad = false;  // time `E.vjp` (seeded with ones) instead of E
  bool profile = false;  // time each op kind over the timed runs
  bool calibrate = false;  // --calibrate: measure this machine (bench_compare.h)
  std::string out;         // --calibrate's profile file
  std::vector<std::string> vs;  // --vs R: time these too, in alternation (bench_compare.h)
  int rounds = 5;
  std::string machine, precision;  // --vs: predict from a profile and an envelope
};

// The timed entry's inputs under --grad: E's inputs and a cotangent of ones for E's result.
std::vector<Tensor> with_ones_cotangent(std::vector<Tensor> inputs, const ir::Function& entry) {
  const ir::Type& result = entry.type_of(entry.results.at(0));
  Tensor ones(ElementType::f64, result.shape);
  for (uint64_t i = 0; i < ones.element_count(); ++i) ones.set(i, 1.0);
  inputs.push_back(std::move(ones));
  return inputs;
}

int run_bench(const BenchOptions& options, const GlobalOptions& global) {
  if (options.calibrate) return run_calibrate(options.out, options.runs, global);
  if (options.input.program_path.empty() || options.input.entry.empty() || options.realize.empty()) {
    usage_error("E1206").hint("presk bench PROGRAM --entry E --realize R, or presk bench --calibrate --out PROFILE.json")
        << "presk bench needs a program, --entry and --realize (or --calibrate)";
  }
  if (!options.vs.empty()) {
    if (options.grad || options.profile) {
      user_error("E1208").hint("time the forward entry with --vs, or one realization with --grad/--profile")
          << "--vs does not combine with --grad or --profile";
    }
    CompareOptions compare{options.input, {options.realize}, options.runs, options.rounds, options.scalar, options.machine, options.precision};
    compare.realizations.insert(compare.realizations.end(), options.vs.begin(), options.vs.end());
    return run_compare(compare, global);
  }
  RunInputOptions input = options.input;
  input.memory = {0, kNativeBytesPerElement, options.grad ? 3 : 1, false, {}, false};
  const PreparedRun prepared = prepare_run(input, global);
  const ir::Program program = options.grad ? ad::add_vjps(prepared.program) : prepared.program;
  const std::string entry = options.grad ? ad::vjp_name(prepared.entry->name) : prepared.entry->name;
  if (!program.find_function(entry)) user_error("E0542") << "`" << prepared.entry->name << "` has nothing to differentiate";
  const exec::native::Realization realization =
      generate::realization_for_entry(exec::native::load_realization(options.realize, program), program, entry);
  const int threads = global.threads;
  std::vector<Tensor> inputs = to_tensors(prepared.inputs(0, global.seed));
  if (options.grad) inputs = with_ones_cotangent(std::move(inputs), *prepared.entry);
  const exec::native::PreparedParameters parameters = exec::native::prepare_parameters(
      program, realization, [&](const std::string& path) { return prepared.parameters.view(path); });
  const exec::native::ExecuteOptions run_options{threads, options.scalar};
  const std::vector<Tensor> outputs =
      exec::native::execute(program, entry, realization, inputs, parameters, run_options);  // warm-up
  const double first = outputs.empty() || outputs[0].element_count() == 0 ? 0.0 : outputs[0].get(0);
  exec::native::OpProfile profile;
  exec::native::ExecuteOptions timed_options = run_options;
  if (options.profile) timed_options.profile = &profile;
  std::vector<double> ms;
  for (int r = 0; r < std::max(options.runs, 1); ++r) {
    const auto start = std::chrono::steady_clock::now();
    exec::native::execute(program, entry, realization, inputs, parameters, timed_options);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                          : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  if (global.json) {
    nlohmann::json out = {{"program", options.input.program_path}, {"entry", options.input.entry}, {"realize", options.realize},
                          {"threads", threads}, {"runs", ms.size()}, {"scalar", options.scalar}, {"grad", options.grad},
                          {"median_ms", median}, {"min_ms", sorted.front()}, {"max_ms", sorted.back()},
                          {"first_output", first}};
    if (options.profile) out["profile"] = profile_json(profile, ms.size());
    std::cout << out.dump() << "\n";
  } else {
    std::cout << options.input.program_path << " --entry " << options.input.entry << " --realize " << options.realize << (options.grad ? " --grad" : "") << " ("
              << threads << " threads, " << ms.size() << " runs after a warm-up" << (options.scalar ? ", scalar" : "")
              << ")\n  first output element " << std::setprecision(17) << first << std::setprecision(6) << "\n  median " << median << " ms   min " << sorted.front() << " ms   max " << sorted.back() << " ms\n";
    if (options.profile) {
      double total = 0;
      for (double x : ms) total += x;
      print_profile(profile, ms.size(), total, "run", "the mean run; the rest is the walk");
    }
  }
  return 0;
}

Registration registration("bench", 45, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command = app.add_subcommand("bench", "Time the native executor on an entry under a realization");
  add_run_input_options(*command, options->input);
  command->get_option("program")->required(false);
  command->get_option("--entry")->required(false);
  command->add_option("--realize", options->realize, "f64, f32, bf16, or @realization.json (required unless --calibrate)");
  command->add_option("-n,--runs", options->runs, "Timed runs after one warm-up")->capture_default_str();
  command->add_flag("--scalar", options->scalar, "Use the scalar kernels (they define the bits)");
  command->add_flag("--grad", options->grad, "Time the entry's vjp (seeded with ones) instead of the entry");
  command->add_flag("--profile", options->profile,
                    "Also time each op kind (op and site type) over the timed runs and print them, most first");
  command->add_flag("--calibrate", options->calibrate,
                    "Measure this machine: fit a roofline per primitive class and type and each conversion's cost");
  command->add_option("--out", options->out, "--calibrate: write the profile here (JSON, format 1)");
  command->add_option("--vs", options->vs, "Also time this realization, in alternation with --realize (repeatable)");
  command->add_option("--rounds", options->rounds, "--vs: rounds of alternation (each realization -n runs a round)")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  command->add_option("--machine", options->machine, "--vs: a profile (--calibrate) to predict each realization's time");
  command->add_option("--precision", options->precision, "--vs --machine: the envelope whose sites the prediction prices");
  add_threads_option(*command, global);
  add_seed_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_bench(*options, global); };
});

}  // namespace
}  // namespace presk::cli
