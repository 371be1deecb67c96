// The training loop of `presk train` (docs/training.md): AdamW over the native executor's
// gradient of a loss entry, batches of token windows chosen by the seeded generator, dropout
// masks keyed by (seed, step, window), validation in f64, atomic checkpoints, and a resume
// that continues bit for bit. Errors E1000–E1049.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ad/split.h"
#include "exec/native/executor.h"
#include "ir/ir.h"
#include "train/adamw.h"
#include "train/checkpoint.h"
#include "train/schedule.h"

namespace presk::train {

struct TrainOptions {
  ir::Program program;     // the entry compiled for training (dropout kept, rates final)
  ir::Program evaluation;  // the same entry compiled without dropout, for validation
  std::string entry = "loss";
  // --realize: a type name or "@file.json", validated against the program with its vjps;
  // its `default` is the master type.
  std::string realization_argument = "f32";
  std::string data;                 // --data: train token windows
  std::string validation;           // --val: validation windows ("": none)
  int64_t validation_windows = 64;  // evenly spread over --val; 0: all
  int64_t steps = 1;
  int64_t batch = 1;
  Schedule schedule;
  AdamWOptions adamw;
  std::string dropout =
      "program";  // the rates' origin, as recorded: "program" or --dropout's value
  uint64_t seed = 0;
  // What the gradient keeps between its passes (src/ad/split.h): Recompute runs `E.vjp`,
  // Store `E.fwd` then `E.bwd`; both give the same bits.
  ad::Remat remat = ad::Remat::Recompute;
  std::string init;    // --init: parameters to start from ("": the program's initializers)
  std::string resume;  // --resume: a checkpoint to continue ("": start at step 0)
  std::string out;     // --out: the checkpoint, rewritten every `every` steps and at the end
  std::string weights_out;  // --weights-out: the parameters alone, written with each checkpoint
  int64_t every = 0;   // validation and checkpoint period (0: at the end only)
  std::optional<int64_t> until;  // stop after this step (none: after `steps`; 0: no step); the schedule spans `steps`
  int threads = 1;     // windows run at once; no result depends on it
  bool profile = false;  // time each op kind of the gradient's passes (TrainResult::profile)
  // Hand the last state back in TrainResult::state (a library caller such as the exact step's
  // warm-up, src/step); with it `out` may be empty, and then no checkpoint is written.
  bool keep_state = false;
};

struct StepReport {
  int64_t step = 0;  // completed steps (1 … steps)
  int64_t steps = 0;
  double loss = 0;  // the batch's mean training loss (with dropout)
  double learning_rate = 0;
  double tokens_per_second = 0;
  double seconds = 0;      // since the run started
  double eta_seconds = 0;  // to `until` (or `steps`) at the mean rate so far
};

struct ValidationReport {
  int64_t step = 0;
  double loss = 0;  // mean over the validation windows, binary64, no dropout
  int64_t windows = 0;
};

struct TrainResult {
  int64_t first_step = 0;  // 0, or the resumed checkpoint's step
  int64_t last_step = 0;
  std::vector<StepReport> steps;
  std::vector<ValidationReport> validations;
  double seconds = 0;
  std::string program_hash;
  exec::native::OpProfile profile;  // TrainOptions::profile: summed over every window of every step
  TrainState state;                 // TrainOptions::keep_state: θ, m, v after the last step
};

struct TrainCallbacks {
  std::function<void(const StepReport&)> on_step;
  std::function<void(const ValidationReport&)> on_validation;
  std::function<void(const std::string&)> on_checkpoint;  // the path written
};

// Runs the training. E1001 for a realization that types or quantizes parameters, E1002 for
// --remat store under a realization that types sites, E1003 for an entry that cannot be trained,
// E1000 for a token file that does not fit the entry, E1004–E1007 for a checkpoint that cannot be
// resumed, E1008 for inconsistent options, E1009 for a loss that is not finite.
TrainResult run_training(const TrainOptions& options, const TrainCallbacks& callbacks = {});

// Every dropout of `program` with rate `rate` (the `--dropout` option).
void set_dropout_rates(ir::Program& program, double rate);

}  // namespace presk::train
