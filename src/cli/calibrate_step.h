// `presk calibrate --step` (docs/step.md): the options only the step mode has, and its run;
// cmd_calibrate.cpp registers them on the calibrate command beside --precision's.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/pipeline.h"
#include "train/adamw.h"
#include "train/schedule.h"

namespace presk::cli {

struct StepCommandOptions {
  std::optional<int64_t> warmup;  // --warmup K: native f64 steps before the measured one
  int64_t batch = 1;
  int64_t steps = 0;  // --steps N, the schedule's length (0: K + 1)
  train::Schedule schedule;
  std::optional<double> min_lr;
  std::string schedule_kind = "cosine";
  train::AdamWOptions adamw;
  std::optional<double> dropout;
  std::string remat = "auto";
  std::vector<std::string> realize;  // --realize, repeatable
  std::string envelope;              // --envelope STEP.json: re-measure without the exact run
  std::string profile;               // --profile PROFILE.json: each realization's predicted time
  int rounds = 5;                    // --rounds: the native steps timed in alternation (0: not timed)
  std::string yardstick = "exact";   // --yardstick exact|f64: what the gaps are measured against
};

void add_step_options(CLI::App& command, StepCommandOptions& options);

// Runs the step mode. `bits` and `out` are the shared --bits (default 128) and --out (the step
// envelope, optional).
int run_calibrate_step(const RunInputOptions& input, const StepCommandOptions& options, std::optional<long> bits,
                       const std::string& out, bool quiet, const GlobalOptions& global);

}  // namespace presk::cli

namespace presk::cli {

struct SolveCommandOptions;

// `presk solve PROGRAM --step STEP.json --budget ε --out R.json`: the step solved by function
// (src/step/solve_step.h) against a step envelope. Exit 0 inside the budget, 4 outside.
int run_solve_step(const SolveCommandOptions& options, const std::string& step_path, const std::string& grain,
                   const GlobalOptions& global);

}  // namespace presk::cli
