// `presk train`: trains a program's loss entry with AdamW on token windows under a
// realization, with progress on stderr and checkpoints (docs/training.md).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/pipeline.h"
#include "cli/profile_table.h"
#include "train/trainer.h"

namespace presk::cli {
namespace {

struct TrainCommandOptions {
  std::string program_path;
  BindingOptions bindings;
  train::TrainOptions run;
  std::string schedule = "cosine";
  std::string remat = "auto";
  std::optional<double> dropout;
  std::optional<double> min_lr;
};

std::string duration_text(double seconds) {
  const auto total = static_cast<int64_t>(std::llround(seconds));
  if (total >= 3600) return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
  if (total >= 60) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}s", total);
}

train::TrainCallbacks progress_on_stderr() {
  train::TrainCallbacks callbacks;
  callbacks.on_step = [](const train::StepReport& r) {
    std::cerr << fmt::format("step {}/{}  loss {:.4f}  lr {:.3g}  {:.0f} tok/s  ETA {}\n", r.step,
                             r.steps, r.loss, r.learning_rate, r.tokens_per_second,
                             duration_text(r.eta_seconds));
  };
  callbacks.on_validation = [](const train::ValidationReport& r) {
    std::cerr << fmt::format("step {}  val {:.4f}  (f64, {} windows)\n", r.step, r.loss, r.windows);
  };
  callbacks.on_checkpoint = [](const std::string& path) {
    std::cerr << "checkpoint " << path << "\n";
  };
  return callbacks;
}

ir::Program compile_for(const TrainCommandOptions& options, bool training) {
  lang::FrontendOptions frontend = frontend_options(options.bindings, options.run.entry);
  frontend.training = training;
  return lang::compile(lang::read_source(options.program_path), frontend);
}

void print_result(const train::TrainResult& result, const train::TrainOptions& run, bool json) {
  const double last_loss = result.steps.empty() ? NAN : result.steps.back().loss;
  if (json) {
    nlohmann::json out = {{"program_hash", result.program_hash},
                          {"first_step", result.first_step},
                          {"last_step", result.last_step},
                          {"seconds", result.seconds},
                          {"remat", run.remat == ad::Remat::Store ? "store" : "recompute"},
                          {"checkpoint", run.out},
                          {"steps", nlohmann::json::array()},
                          {"validations", nlohmann::json::array()}};
    for (const train::StepReport& r : result.steps) {
      out["steps"].push_back({{"step", r.step}, {"loss", r.loss}, {"lr", r.learning_rate}});
    }
    for (const train::ValidationReport& r : result.validations) {
      out["validations"].push_back({{"step", r.step}, {"loss", r.loss}, {"windows", r.windows}});
    }
    if (run.profile) out["profile"] = profile_json(result.profile, result.steps.size());  // per step
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("program     {}\n", result.program_hash);
  std::cout << fmt::format("steps       {} → {} of {} (batch {})\n", result.first_step,
                           result.last_step, run.steps, run.batch);
  if (!result.steps.empty()) {
    std::cout << fmt::format("train loss  {:.4f} (last step, with dropout)\n", last_loss);
  }
  if (!result.validations.empty()) {
    const train::ValidationReport& first = result.validations.front();
    const train::ValidationReport& last = result.validations.back();
    std::cout << fmt::format(
        "val loss    {:.4f} at step {} (from {:.4f} at step {}; f64, {} windows)\n", last.loss,
        last.step, first.loss, first.step, last.windows);
  }
  std::cout << fmt::format(
      "wall time   {:.1f} s ({:.2f} s/step)\n", result.seconds,
      result.seconds / std::max<double>(1.0, static_cast<double>(result.steps.size())));
  std::cout << fmt::format("checkpoint  {}\n", run.out);
  if (!run.profile) return;
  double profiled = 0;  // windows on several threads overlap: shares are of the ops' own time
  for (const auto& [op, time] : result.profile) profiled += time.seconds * 1e3;
  print_profile(result.profile, result.steps.size(), profiled, "step", "the ops' time, summed over the windows");
}

int run_train(TrainCommandOptions& options, const GlobalOptions& global) {
  train::TrainOptions& run = options.run;
  // --out may be the --resume checkpoint (a run continues in place); nothing else may alias.
  check_output_files({{"--out", run.out}, {"--weights-out", run.weights_out}},
                     {{"the program", options.program_path}, {"--data", run.data}, {"--val", run.validation},
                      {"--init", run.init}, {"--realize", realization_file(run.realization_argument)}});
  check_output_files({{"--weights-out", run.weights_out}}, {{"--resume", run.resume}});
  run.seed = global.seed;
  run.threads = global.threads;
  run.schedule.kind = *train::schedule_from_name(options.schedule);
  run.schedule.steps = run.steps;
  run.schedule.floor = options.min_lr ? *options.min_lr : run.schedule.peak / 10;
  // auto: store (no forward op recomputed) where the realization types no sites (a type name,
  // or a file with only a default and an order), else recompute (E1002); both give the same bits.
  const bool uniform = run.realization_argument.empty() ||
                       exec::native::read_realization(run.realization_argument).sites.empty();
  run.remat = ad::parse_remat(options.remat == "auto" ? (uniform ? "store" : "recompute") : options.remat);
  run.program = compile_for(options, true);
  run.evaluation = compile_for(options, false);
  if (options.dropout) {
    train::set_dropout_rates(run.program, *options.dropout);
    run.dropout = ir::real_to_string(*options.dropout);
  }
  train::TrainResult result = train::run_training(run, progress_on_stderr());
  print_result(result, run, global.json);
  return 0;
}

void add_optimizer_options(CLI::App& train, TrainCommandOptions& o) {
  train::TrainOptions& run = o.run;
  train.add_option("--lr", run.schedule.peak, "Peak learning rate η_max")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train.add_option("--min-lr", o.min_lr, "The cosine's floor η_min (default: --lr / 10)")
      ->check(CLI::NonNegativeNumber);
  train.add_option("--warmup", run.schedule.warmup, "Steps of linear warm-up")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  train
      .add_option("--schedule", o.schedule,
                  "After the warm-up: cosine (to --min-lr at --steps) or constant")
      ->check(CLI::IsMember({"cosine", "constant"}))
      ->capture_default_str();
  train
      .add_option("--weight-decay", run.adamw.weight_decay,
                  "AdamW's decoupled weight decay λ (matrices only)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  train.add_option("--beta1", run.adamw.beta1, "AdamW's β₁")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  train.add_option("--beta2", run.adamw.beta2, "AdamW's β₂")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  train.add_option("--eps", run.adamw.epsilon, "AdamW's ε")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train
      .add_option("--dropout", o.dropout, "Every dropout's rate (default: the program's own rates)")
      ->check(CLI::Range(0.0, 0.999999));
}

Registration registration("train", 80, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<TrainCommandOptions>();
  train::TrainOptions& run = options->run;
  CLI::App* train = app.add_subcommand("train", "Train a loss entry with AdamW on token windows");
  train->add_option("program", options->program_path, "The .psk program")->required();
  train->add_option("--entry", run.entry, "The loss entry to train")->capture_default_str();
  add_binding_options(*train, options->bindings);
  train->add_option("--data", run.data, "Training windows (presk data prepare's train.safetensors)")
      ->required();
  train->add_option("--val", run.validation, "Validation windows (val.safetensors)");
  train
      ->add_option("--val-windows", run.validation_windows,
                   "Validation windows evenly spread over --val (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  train->add_option("--steps", run.steps, "Optimizer steps of the run")
      ->required()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  train->add_option("--batch", run.batch, "Windows per step")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  add_optimizer_options(*train, *options);
  train
      ->add_option("--realize", run.realization_argument,
                   "Realization of the steps: f64, f32, bf16 or @file.json")
      ->capture_default_str();
  train
      ->add_option("--remat", options->remat,
                   "Reverse mode: recompute (E.vjp), store (E.fwd, E.bwd; same bits, faster, more memory), "
                   "or auto: store unless the realization types sites (then recompute)")
      ->check(CLI::IsMember({"auto", "recompute", "store"}))
      ->capture_default_str();
  CLI::Option* init = train->add_option("--init", run.init,
                                        "Start from these parameters (a checkpoint or weights)");
  train->add_option("--resume", run.resume, "Continue a checkpoint's run")->excludes(init);
  train
      ->add_option("--out", run.out,
                   "The checkpoint (rewritten every --every steps and at the end)")
      ->required();
  train->add_option(
      "--weights-out", run.weights_out,
      "Also write the parameters alone (the --weights file of presk run, calibrate, …)");
  train->add_option("--every", run.every, "Validate and checkpoint every K steps (0: at the end)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  train
      ->add_option("--until", run.until,
                   "Stop after step K (a later --resume continues; the schedule spans --steps)")
      ->check(CLI::NonNegativeNumber);
  train->add_flag("--profile", run.profile,
                  "Also time each op kind of the gradient's passes (op and site type) and print them per step, most first");
  add_seed_option(*train, global);
  add_threads_option(*train, global);
  add_json_option(*train, global);
  return [options, &global] { return run_train(*options, global); };
});

}  // namespace
}  // namespace presk::cli
