// The step envelope (docs/step.md, "The step envelope"): a JSON file (format 1) with the
// step's identity, the options of its state, the batch, the norms, floors and sampling noise,
// and a companion safetensors file beside it with the f64 state (θ, m, v), the exact update Δ
// and the exact gradient g per parameter path and the batch's windows. `presk calibrate --step
// --out` writes it; `calibrate --step --envelope` and `solve --step` read it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "step/exact_step.h"
#include "support/tensor.h"
#include "train/checkpoint.h"
#include "train/schedule.h"

namespace presk::step {

inline constexpr int kStepEnvelopeFormat = 1;
inline constexpr const char* kStepEnvelopeKind = "presk step envelope";

// What the step's θ′ is: the exact step on the reference (MPFR at `bits`), or, where that cannot
// run (a course-scale model), the native all-f64 step from the same state, an estimate labelled
// so: a gap against it is a gap against f64, not against the reals.
enum class Yardstick { exact, native_f64 };
const char* yardstick_name(Yardstick y);  // "exact", "native f64"

struct StepEnvelope {
  std::string program;  // the path it was calibrated on (for messages)
  std::string program_hash;  // ir::program_hash of the entry compiled for training
  std::string entry = "loss";
  std::map<std::string, std::string> bindings;  // --const/--dim as given
  long bits = 128;  // the exact step's; 53 under the native f64 yardstick
  Yardstick yardstick = Yardstick::exact;
  // The state: --weights, then `warmup_steps` native f64 steps of `presk train` on --data.
  std::string weights, weights_sha256, data, data_sha256;
  int64_t warmup_steps = 0, batch = 1, steps = 1;
  uint64_t seed = 0;
  train::Schedule schedule;
  train::AdamWOptions adamw;
  std::string dropout = "program", remat = "store";
  // The measured step: t (= warmup_steps + 1), its rate, the batch's rows of --data and the next
  // step's (the sampling noise's), and what the exact step gave.
  int64_t step = 1;
  double learning_rate = 0;
  std::vector<int64_t> rows, next_rows;
  double theta_norm = 0, update_norm = 0, gradient_norm = 0;
  StorageFloors floors;
  double sampling_noise = 0;  // ‖g_B − g_B′‖₂ / ‖g_B‖₂, native f64 gradients
  double exact_seconds = 0;
  std::string companion;  // the companion's file name, in the JSON's folder
  // The companion's tensors.
  train::TrainState state;                           // θ, m, v after warmup_steps (binary64)
  std::vector<std::vector<double>> update, gradient;  // Δ, g per parameter
  std::vector<Tensor> windows;                       // the batch's rows, one tensor each
};

// Writes `envelope` to `path` (JSON) and its companion `<path without .json>.safetensors`
// beside it (the name recorded), each to a temporary renamed into place, the companion first.
// Sets envelope.companion.
void write_step_envelope(StepEnvelope& envelope, const std::string& path);

// Reads a step envelope and its companion: E1254 when the file cannot be read or is not JSON,
// E1255 for a field missing, of the wrong kind or out of range (named), or `format` not 1,
// E1253 for a companion that is missing, not the one recorded (SHA-256) or lacks a tensor.
StepEnvelope read_step_envelope(const std::string& path);

}  // namespace presk::step
