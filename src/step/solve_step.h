// The step solved by function or by stored value (docs/step.md, "presk solve --step"): one type per function of the
// training program (its forward functions and their `.vjp`s) and "adamw.step" (the master
// type), each measured alone in f32 and bf16 on the update gap against a step envelope's exact
// step, then src/solve's phases on these units: the one proposal loop (solve/greedy.h) under the
// root-sum-square of the isolated gaps — by the gap alone (every narrowing counts one), or with
// a profile by predicted seconds saved — then measured and widened (solve/verify.h) until the
// measured update gap is inside the budget. Its moves are the float solve's (solve/solution.h),
// recorded for explain.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "exec/native/realization.h"
#include "profile/profile.h"
#include "solve/solution.h"
#include "step/measure_step.h"

namespace presk::step {

inline constexpr const char* kOptimizerFunction = "adamw.step";

// What one type covers: every typable site of a function, or (value) one typable site of more
// than one element; and "adamw.step", the master type, at either grain.
enum class Grain : uint8_t { function, value };

struct FunctionGaps {
  std::string function;  // "Linear.apply.vjp" (a site name at the value grain), or kOptimizerFunction
  int sites = 0;         // typable sites it types (0 for the optimizer)
  double f32 = 0, bf16 = 0;  // the update gap with this function alone in the type, the rest f64
  bool offered = true;       // false: narrowing it moves no bit of the update (the loss value)
  RealType chosen = RealType::f64;
  // With a profile: the predicted seconds per step this narrowing alone saves against all-f64
  // (negative: the profile predicts it slower).
  double saved_f32 = 0, saved_bf16 = 0;
};

// With a profile: the predicted seconds per step (step_price.h).
struct StepTimes {
  double all_f64 = 0, all_f32 = 0, realization = 0;
};

struct StepSolution {
  Grain grain = Grain::function;
  exec::native::Realization realization;  // sites per function; default the optimizer's type
  std::vector<FunctionGaps> functions;
  double baseline = 0;   // all-f64's update gap
  double estimate = 0;   // √Σ isolated gap² of the narrowed functions
  StepMeasures measured;  // the final realization's
  std::vector<std::string> log;  // the progress lines, in order (for a reader; explain reads `moves`)
  // The units as src/solve's offer (one value per entry of `functions`, rungs f64, f32, bf16)
  // and the solve's moves on them: each narrowing taken or refused, measurement and widening.
  solve::Offer offer;
  solve::Solution decisions;
  std::string uniform;  // with a profile: the uniform type kept over the greedy's proposal, or ""
  int measurements = 0;
  bool inside = false;
  bool priced = false;  // solved with a profile: `times` and each function's savings hold
  StepTimes times;
  // The final realization on the held-out batch (the envelope's next rows, never solved on),
  // and all-f64's there; or why nothing was held out.
  std::optional<StepMeasures> held_out;
  double held_out_baseline = 0;
  std::string held_out_note;
};

// E1258 for a budget that is not above 0. `progress` (may be empty) gets each log line. With
// `profile` (not null) the greedy ranks the narrowings by predicted seconds saved per unit of
// isolated gap and takes none the profile predicts slower than the type it replaces.
// With `held_out` (held_out_envelope, calibrate_step.h) the final realization is measured on its
// batch too, as the float solve measures its held-out samples: reported, never solved on.
StepSolution solve_step(const StepEnvelope& envelope, const ir::Program& program, double budget, int threads,
                        const std::function<void(const std::string&)>& progress = {}, Grain grain = Grain::function,
                        const profile::Profile* profile = nullptr, const StepEnvelope* held_out = nullptr);

// The realization's JSON (realization_to_json) with a `solve` record of mode "step".
nlohmann::json step_solution_json(const StepSolution& solution, const StepEnvelope& envelope, double budget,
                                  const std::string& envelope_path);

}  // namespace presk::step

namespace presk::step {

// `presk explain R.json` of a step solution: one line per function, its type and the reason
// (from the record's isolated gaps, budget and widenings). E1259 for a malformed record.
std::vector<std::string> explain_step_solution(const nlohmann::json& file, const std::string& origin);

}  // namespace presk::step
