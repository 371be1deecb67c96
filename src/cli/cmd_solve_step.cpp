// `presk solve PROGRAM --step STEP.json --budget ε --out R.json`: one type per function of the
// training step, measured against a step envelope's exact step (src/step/solve_step.h,
// docs/step.md); writes the realization with its `solve` record and prints the table.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/calibrate_step.h"
#include "cli/solve_setup.h"
#include "profile/profile.h"
#include "step/calibrate_step.h"
#include "step/solve_step.h"
#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "train/trainer.h"

namespace presk::cli {
namespace {

double budget_of(const SolveCommandOptions& options) {
  if (!options.budget_abs.empty() || options.budget.empty()) {
    usage_error("E1258").hint("pass --budget ε, e.g. --budget 1e-3 (relative to the update ‖θ′ − θ‖)")
        << (options.budget.empty() ? "`presk solve --step` needs --budget ε" : "`presk solve --step` takes no --budget-abs");
  }
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(options.budget, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != options.budget.size() || !(value > 0)) {
    usage_error("E1258").hint("a number above 0, e.g. --budget 1e-3") << "--budget " << options.budget << " is not a number above 0";
  }
  return value;
}

ir::Program training_program(const SolveCommandOptions& options, const step::StepEnvelope& envelope) {
  lang::FrontendOptions frontend = frontend_options(options.run.bindings, envelope.entry);
  frontend.training = true;
  ir::Program program = lang::compile(lang::read_source(options.run.program), frontend);
  if (envelope.dropout != "program") train::set_dropout_rates(program, std::stod(envelope.dropout));
  return program;
}

void print_solution(const step::StepSolution& s, double budget, const std::string& out, const profile::Profile* machine) {
  std::cout << fmt::format("presk solve --step: budget {:.3g} on the update gap, by {}; all-f64 {:.3e}\n", budget,
                           s.grain == step::Grain::value ? "stored value" : "function", s.baseline);
  size_t width = 8;
  for (const step::FunctionGaps& f : s.functions) width = std::max(width, f.function.size());
  std::cout << fmt::format("{:<{}}  {:>5}  {:>10}  {:>10}  {}{}\n", s.grain == step::Grain::value ? "value" : "function", width, "sites",
                           "alone f32", "alone bf16", s.priced ? "saved f32   saved bf16  " : "", "type");
  for (const step::FunctionGaps& f : s.functions) {
    const std::string saved = s.priced ? fmt::format("{:>+10.3e}  {:>+10.3e}  ", f.saved_f32, f.saved_bf16) : "";
    std::cout << fmt::format("{:<{}}  {:>5}  {:>10.3e}  {:>10.3e}  {}{}\n", f.function, width, f.sites, f.f32, f.bf16, saved,
                             f.offered ? exec::native::real_type_name(f.chosen) : "(no effect)");
  }
  if (s.priced) {
    const step::StepTimes& t = s.times;
    std::cout << fmt::format("predicted   {:.4g} s per step all-f64, {:.4g} s this realization ({:.3f}×), {:.4g} s all-f32 ({:.3f}×); "
                             "saved: seconds per step alone against all-f64 (profile of {}, {} thread{}; a prediction, not a "
                             "measurement)\n",
                             t.all_f64, t.realization, t.realization > 0 ? t.all_f64 / t.realization : 0, t.all_f32,
                             t.all_f32 > 0 ? t.all_f64 / t.all_f32 : 0, machine->cpu, machine->threads,
                             machine->threads == 1 ? "" : "s");
  }
  std::cout << fmt::format("estimate    {:.3e} (root-sum-square of the isolated gaps)\n", s.estimate);
  std::cout << fmt::format("measured    update gap {:.3e}, gradient gap {:.3e}, storage floor {:.3e}: {}\n",
                           s.measured.update_gap, s.measured.gradient_gap, s.measured.storage_floor,
                           s.inside ? "inside" : "OUTSIDE the budget");
  if (s.held_out) {
    std::cout << fmt::format("            held out (the next step's batch, never solved on): update gap {:.3e}, gradient gap "
                             "{:.3e} (all-f64 {:.3e}){}\n",
                             s.held_out->update_gap, s.held_out->gradient_gap, s.held_out_baseline,
                             s.held_out->update_gap > budget ? ": ABOVE the budget" : "");
  } else {
    std::cout << "            " << s.held_out_note << "\n";
  }
  std::cout << fmt::format("            {} native steps measured\n", s.measurements);
  std::cout << "written     " << out << " (presk train --realize @" << out << ")\n";
}

}  // namespace

int run_solve_step(const SolveCommandOptions& options, const std::string& step_path, const std::string& grain,
                   const GlobalOptions& global) {
  if (!options.run.envelope.empty()) {
    usage_error("E1258").hint("solve an entry with --precision, or a training step with --step") << "--precision and --step both given";
  }
  if (!options.report.empty()) {
    usage_error("E1263").hint("leave out --report: presk explain R.json prints a step solve's decisions, and the "
                              "solve's own table its predicted times")
        << "--report is an entry solve's HTML report; `presk solve --step` writes none";
  }
  const double budget = budget_of(options);
  check_output_files({{"--out", options.out}},
                     {{"the program", options.run.program}, {"--step", step_path}, {"--profile", options.profile}});
  const step::StepEnvelope envelope = step::read_step_envelope(step_path);
  if (envelope.yardstick != step::Yardstick::exact) {
    user_error("E1261").hint("calibrate the step without --yardstick f64 (at a size the exact step fits), and solve against that")
        << "the step envelope `" << step_path << "` measures against the native f64 step, not the exact one: "
        << "a solve binds the update gap to the exact step";
  }
  std::optional<profile::Profile> machine;
  if (!options.profile.empty()) machine = profile::read_profile(options.profile);
  const ir::Program program = training_program(options, envelope);
  step::check_envelope_program(envelope, program);
  std::function<void(const std::string&)> progress;
  if (!options.quiet) progress = [](const std::string& line) { std::cerr << "solve --step: " << line << "\n"; };
  std::string why;
  if (progress) progress("the exact step on the held-out batch (the next step's rows)");
  const std::optional<step::StepEnvelope> held_out = step::held_out_envelope(envelope, program, global.threads, why);
  step::StepSolution solution = step::solve_step(envelope, program, budget, global.threads, progress,
                                                 grain == "value" ? step::Grain::value : step::Grain::function,
                                                 machine ? &*machine : nullptr, held_out ? &*held_out : nullptr);
  if (!held_out) solution.held_out_note = "nothing held out: " + why;
  const nlohmann::json file = step::step_solution_json(solution, envelope, budget, step_path);
  write_file_atomically(options.out, file.dump(1) + "\n");
  if (global.json) {
    nlohmann::json out = file["solve"];
    out["out"] = options.out;
    std::cout << out.dump(2) << "\n";
  } else {
    print_solution(solution, budget, options.out, machine ? &*machine : nullptr);
  }
  return solution.inside ? 0 : 4;
}

}  // namespace presk::cli
