// `presk calibrate --step PROGRAM --entry loss --weights W --data D --warmup K [--realize R]…`:
// the state (W, then K native f64 steps of presk train), the exact step K + 1 on the reference,
// and each realization's native step measured against it (src/step, docs/step.md); or, with
// --envelope STEP.json, the realizations measured against a saved step. Progress on stderr.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/calibrate_step.h"
#include "cli/envelope_run.h"
#include "step/calibrate_step.h"
#include "step/measure_step.h"
#include "step/step_price.h"
#include "support/diagnostics.h"
#include "train/trainer.h"

namespace presk::cli {
namespace {

// The options of --precision that the step mode does not take (E1257).
void check_step_mode(const RunInputOptions& input, const StepCommandOptions& options) {
  const char* foreign = input.samples != 0 ? "--samples" : input.offset != 0 ? "--offset"
                        : input.token_range != 0 ? "--token-range" : nullptr;
  if (foreign) {
    usage_error("E1257").hint("the step's batch is drawn from --data by the seed, as presk train draws it; drop " +
                              std::string(foreign))
        << "`presk calibrate --step` takes no " << foreign << " (an option of --precision)";
  }
  if (!options.envelope.empty() && options.yardstick != "exact") {
    usage_error("E1260").hint("leave out --yardstick: a saved envelope keeps the yardstick it was calibrated with")
        << "`--yardstick " << options.yardstick << "` with --envelope: the yardstick is chosen when the step is calibrated";
  }
  if (options.envelope.empty() && !options.warmup) {
    usage_error("E1250").hint("pass --warmup K (K ≥ 1 native f64 steps before the measured one), or --envelope STEP.json")
        << "`presk calibrate --step` needs --warmup K";
  }
}

ir::Program compile_training(const RunInputOptions& input, const StepCommandOptions& options) {
  lang::FrontendOptions frontend = frontend_options(input.bindings, input.entry);
  frontend.training = true;
  ir::Program program = lang::compile(lang::read_source(input.program_path), frontend);
  if (options.dropout) train::set_dropout_rates(program, *options.dropout);
  return program;
}

std::map<std::string, std::string> bindings_of(const BindingOptions& bindings) {
  std::map<std::string, std::string> out;
  for (const auto* texts : {&bindings.consts, &bindings.dims}) {
    for (const std::string& text : *texts) {
      const size_t equals = text.find('=');
      out[text.substr(0, equals)] = equals == std::string::npos ? "" : text.substr(equals + 1);
    }
  }
  return out;
}

step::StepEnvelope measure_exact(const RunInputOptions& input, const StepCommandOptions& options, ir::Program program,
                                 long bits, bool quiet, const GlobalOptions& global) {
  step::CalibrateStepOptions o;
  o.program = std::move(program);
  o.program_path = input.program_path;
  o.bindings = bindings_of(input.bindings);
  o.entry = input.entry;
  o.weights = input.weights;
  o.data = input.data;
  o.warmup_steps = *options.warmup;
  o.batch = options.batch;
  o.steps = options.steps;
  o.schedule = options.schedule;
  o.schedule.kind = *train::schedule_from_name(options.schedule_kind);
  o.schedule.floor = options.min_lr ? *options.min_lr : o.schedule.peak / 10;
  o.adamw = options.adamw;
  if (options.dropout) o.dropout = ir::real_to_string(*options.dropout);
  o.remat = options.remat == "recompute" ? ad::Remat::Recompute : ad::Remat::Store;  // auto: store under f64
  o.bits = bits;
  o.yardstick = options.yardstick == "f64" ? step::Yardstick::native_f64 : step::Yardstick::exact;
  o.seed = global.seed;
  o.threads = global.threads;
  if (!quiet) {
    o.on_warmup_step = [](const train::StepReport& r) {
      std::cerr << fmt::format("warm-up step {}  loss {:.4f}  lr {:.3g}  (f64)\n", r.step, r.loss, r.learning_rate);
    };
    if (o.yardstick == step::Yardstick::native_f64) std::cerr << "yardstick: the native f64 step (no exact step)\n";
    o.on_window = [bits](int64_t done, int64_t count) {
      std::cerr << fmt::format("exact step: window {}/{} at {} bits\n", done, count, bits);
    };
  }
  return step::calibrate_step(o);
}

std::string gap_text(double value) { return fmt::format("{:.2e}", value); }

// --profile: each realization's predicted seconds per step, and all-f64's (src/step/step_price.h).
struct Predicted {
  std::vector<double> seconds;  // by realization; empty without --profile
  double all_f64 = 0;
};

Predicted predict(const ir::Program& program, const std::string& entry, const StepCommandOptions& options,
                  double windows) {
  Predicted out;
  if (options.profile.empty()) return out;
  const profile::Profile machine = profile::read_profile(options.profile);
  out.all_f64 = step::predict_step(program, entry, exec::native::uniform_realization(exec::native::RealType::f64), machine, windows).seconds;
  for (const std::string& realization : options.realize) {
    out.seconds.push_back(
        step::predict_step(program, entry, step::load_step_realization(program, entry, realization), machine, windows).seconds);
  }
  return out;
}

std::string predicted_text(const Predicted& p, size_t k) {
  if (p.seconds.empty()) return "";
  return fmt::format("  {:>9.3e}  {:>7.3f}", p.seconds[k], p.seconds[k] > 0 ? p.all_f64 / p.seconds[k] : 0);
}

void print_table(const step::StepEnvelope& e, const std::vector<step::StepMeasures>& measures, const Predicted& predicted,
                 const std::string& out) {
  const bool exact = e.yardstick == step::Yardstick::exact;
  std::cout << fmt::format("presk calibrate --step: step {} of {} of `{}` (lr {:.4g}), {} window{}, {}\n", e.step, e.steps,
                           e.entry, e.learning_rate, e.batch, e.batch == 1 ? "" : "s",
                           exact ? fmt::format("exact at {} bits", e.bits)
                                 : std::string("against the native f64 step (an estimate: not the exact step)"));
  std::cout << fmt::format("# state: {} then {} native f64 warm-up step{} on {}; seed {}\n", e.weights, e.warmup_steps,
                           e.warmup_steps == 1 ? "" : "s", e.data, e.seed);
  std::cout << fmt::format("# ‖θ‖ / ‖θ′ − θ‖ = {:.4g}; sampling noise ‖g_B − g_B′‖ / ‖g_B‖ = {:.3g} (native f64 gradients); "
                           "{} step {:.1f} s\n",
                           e.theta_norm / e.update_norm, e.sampling_noise, exact ? "exact" : "yardstick", e.exact_seconds);
  if (!out.empty()) std::cout << "# step envelope " << out << " (+ " << e.companion << ")\n";
  if (measures.empty()) return;
  size_t width = 11;
  for (const step::StepMeasures& m : measures) width = std::max(width, m.realization.size());
  std::cout << fmt::format("{:<{}}  {:<6}  {:>10}  {:>13}  {:>12}  {:>21}{}\n", "realization", width, "master",
                           "update gap", "storage floor", "gradient gap", "native step s (range)",
                           predicted.seconds.empty() ? "" : "  predicted  vs f64");
  for (size_t k = 0; k < measures.size(); ++k) {
    const step::StepMeasures& m = measures[k];
    std::cout << fmt::format("{:<{}}  {:<6}  {:>10}  {:>13}  {:>12}  {:>21}{}\n", m.realization, width,
                             exec::native::real_type_name(m.master), gap_text(m.update_gap), gap_text(m.storage_floor),
                             gap_text(m.gradient_gap),
                             m.rounds > 1 ? fmt::format("{:.3g} ({:.3g}–{:.3g})", m.seconds, m.least, m.greatest)
                                          : fmt::format("{:.3g} (one step)", m.seconds),
                             predicted_text(predicted, k));
  }
  if (measures.front().rounds > 1) {
    std::cout << fmt::format("# native step s: the median of {} rounds in alternation (one step each), least–greatest\n",
                             measures.front().rounds);
  }
  if (!predicted.seconds.empty()) {
    std::cout << fmt::format("# predicted: seconds per step by the profile (all-f64 {:.3e} s), and all-f64's over it\n",
                             predicted.all_f64);
  }
}

void print_json(const step::StepEnvelope& e, const std::vector<step::StepMeasures>& measures, const Predicted& predicted,
                const std::string& out) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (size_t k = 0; k < measures.size(); ++k) {
    const step::StepMeasures& m = measures[k];
    rows.push_back({{"realization", m.realization}, {"master", exec::native::real_type_name(m.master)},
                    {"update_gap", m.update_gap}, {"storage_floor", m.storage_floor}, {"gradient_gap", m.gradient_gap},
                    {"seconds", m.seconds}, {"seconds_least", m.least}, {"seconds_greatest", m.greatest},
                    {"rounds", m.rounds}});
    if (!predicted.seconds.empty()) {
      rows.back()["predicted_seconds"] = predicted.seconds[k];
      rows.back()["predicted_speedup"] = predicted.seconds[k] > 0 ? predicted.all_f64 / predicted.seconds[k] : 0;
    }
  }
  nlohmann::ordered_json json = {
      {"program_hash", e.program_hash}, {"entry", e.entry}, {"step", e.step}, {"steps", e.steps},
      {"warmup_steps", e.warmup_steps}, {"batch", e.batch}, {"rows", e.rows}, {"bits", e.bits},
      {"yardstick", step::yardstick_name(e.yardstick)},
      {"learning_rate", e.learning_rate}, {"theta_norm", e.theta_norm}, {"update_norm", e.update_norm},
      {"gradient_norm", e.gradient_norm}, {"sampling_noise", e.sampling_noise},
      {"storage_floors", {{"f64", e.floors.f64}, {"f32", e.floors.f32}, {"bf16", e.floors.bf16}}},
      {"exact_seconds", e.exact_seconds}, {"out", out}, {"realizations", rows}};
  if (!predicted.seconds.empty()) json["predicted_all_f64_seconds"] = predicted.all_f64;
  std::cout << json.dump(2) << "\n";
}

}  // namespace

void add_step_options(CLI::App& command, StepCommandOptions& o) {
  command.add_option("--warmup", o.warmup, "--step: native f64 training steps from --weights before the measured one (K ≥ 1)");
  command.add_option("--batch", o.batch, "--step: windows per step, as presk train's")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  command.add_option("--steps", o.steps, "--step: the schedule's length N (default: K + 1)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  command.add_option("--lr", o.schedule.peak, "--step: peak learning rate η_max")->check(CLI::PositiveNumber)->capture_default_str();
  command.add_option("--min-lr", o.min_lr, "--step: the cosine's floor η_min (default: --lr / 10)")->check(CLI::NonNegativeNumber);
  command.add_option("--warmup-steps", o.schedule.warmup, "--step: steps of the schedule's linear warm-up (presk train's --warmup)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command.add_option("--schedule", o.schedule_kind, "--step: cosine or constant after the warm-up")
      ->check(CLI::IsMember({"cosine", "constant"}))
      ->capture_default_str();
  command.add_option("--weight-decay", o.adamw.weight_decay, "--step: AdamW's λ (matrices only)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command.add_option("--beta1", o.adamw.beta1, "--step: AdamW's β₁")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  command.add_option("--beta2", o.adamw.beta2, "--step: AdamW's β₂")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  command.add_option("--eps", o.adamw.epsilon, "--step: AdamW's ε")->check(CLI::PositiveNumber)->capture_default_str();
  command.add_option("--dropout", o.dropout, "--step: every dropout's rate (default: the program's)")->check(CLI::Range(0.0, 0.999999));
  command.add_option("--remat", o.remat, "--step: the warm-up's reverse mode (auto: store; the same bits)")
      ->check(CLI::IsMember({"auto", "recompute", "store"}))
      ->capture_default_str();
  command.add_option("--realize", o.realize, "--step: a realization to measure (f64, f32, bf16, @file.json, or recipe: every site bf16, the optimizer f32); repeatable");
  command.add_option("--envelope", o.envelope, "--step: measure --realize against this saved step envelope (no exact run)");
  command.add_option("--yardstick", o.yardstick,
                     "--step: what θ′ the gaps are measured against: exact (the reference at --bits) or f64 (the native "
                     "all-f64 step from the same state, an estimate for models too large for the exact step)")
      ->check(CLI::IsMember({"exact", "f64"}))
      ->capture_default_str();
  command.add_option("--profile", o.profile, "--step: a profile (presk bench --calibrate): each realization's predicted seconds per step");
  command.add_option("--rounds", o.rounds,
                     "--step: time each --realize's native step in this many alternating rounds (median and spread; 0: "
                     "the one measured step's time)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
}

int run_calibrate_step(const RunInputOptions& input, const StepCommandOptions& options, std::optional<long> bits,
                       const std::string& out, bool quiet, const GlobalOptions& global) {
  check_step_mode(input, options);
  std::vector<CommandFile> inputs = run_input_files(input);
  inputs.push_back({"--envelope", options.envelope});
  inputs.push_back({"--profile", options.profile});
  for (const std::string& r : options.realize) {
    if (r != "recipe") inputs.push_back({"--realize", realization_file(r)});
  }
  check_output_files({{"--out", out}}, inputs);
  std::optional<step::StepEnvelope> saved;
  StepCommandOptions compiled = options;
  if (!options.envelope.empty()) {
    saved = step::read_step_envelope(options.envelope);
    // The envelope's dropout rates unless --dropout says otherwise: its program hash includes them.
    if (!options.dropout && saved->dropout != "program") compiled.dropout = std::stod(saved->dropout);
  }
  RunInputOptions bound = input;  // with --envelope and no --const/--dim: the envelope's
  if (saved) bound.bindings = recorded_bindings(input.bindings, saved->bindings, input.program_path, options.envelope);
  ir::Program program = compile_training(bound, compiled);
  if (saved) step::check_envelope_program(*saved, program);
  for (const std::string& realization : options.realize) step::load_step_realization(program, input.entry, realization);
  if (!options.profile.empty()) profile::read_profile(options.profile);  // before the exact step runs
  step::StepEnvelope envelope =
      saved ? std::move(*saved) : measure_exact(input, options, program, bits.value_or(128), quiet, global);
  if (!out.empty()) step::write_step_envelope(envelope, out);
  std::vector<step::StepMeasures> measures;
  for (const std::string& realization : options.realize) {
    measures.push_back(step::measure_step(envelope, program, realization, global.threads));
    if (!quiet) std::cerr << fmt::format("native step under {}: measured, {:.2f} s\n", realization, measures.back().seconds);
  }
  if (!measures.empty() && options.rounds > 0) {
    step::time_steps(envelope, program, measures, options.rounds, global.threads, [&](int round) {
      if (!quiet) std::cerr << fmt::format("timing the native steps: round {} of {}\n", round + 1, options.rounds);
    });
  }
  const Predicted predicted = predict(program, input.entry, options, static_cast<double>(envelope.windows.size()));
  if (global.json) print_json(envelope, measures, predicted, out);
  else print_table(envelope, measures, predicted, out);
  return 0;
}

}  // namespace presk::cli
