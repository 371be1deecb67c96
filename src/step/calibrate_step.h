// `presk calibrate --step`'s measurement as a library call (docs/step.md): the state (weights,
// then K native f64 steps of presk train), the exact step K + 1 on its batch, the sampling noise
// against the next step's batch, as a step envelope in memory.
#pragma once

#include <functional>
#include <optional>
#include <map>
#include <string>

#include "ad/split.h"
#include "ir/ir.h"
#include "step/step_envelope.h"
#include "train/trainer.h"

namespace presk::step {

struct CalibrateStepOptions {
  ir::Program program;       // the entry compiled for training (dropout rates final)
  std::string program_path;  // recorded
  std::map<std::string, std::string> bindings;  // recorded
  std::string entry = "loss";
  std::string weights;  // --weights: the state's starting parameters (m = v = 0, t = 0)
  std::string data;     // --data: token windows, as presk train's
  int64_t warmup_steps = 0;  // K ≥ 1: native f64 steps before the measured one
  int64_t batch = 1;
  int64_t steps = 0;  // the schedule's length N (0: K + 1); K < N
  train::Schedule schedule;  // steps is set from `steps`
  train::AdamWOptions adamw;
  std::string dropout = "program";
  ad::Remat remat = ad::Remat::Store;  // of the warm-up (the same bits either way)
  long bits = 128;
  // exact: the reference's step; native_f64: the native all-f64 step (no reference run, no
  // memory beyond a training step's; every gap an estimate against f64).
  Yardstick yardstick = Yardstick::exact;
  uint64_t seed = 0;
  int threads = 1;
  std::function<void(const train::StepReport&)> on_warmup_step;
  WindowProgress on_window;
};

// E1256 without --weights or --data, E1250 for K < 1 or K ≥ N; the errors of presk train's
// run_training (E1000, E1006, E1008, …) for the rest.
StepEnvelope calibrate_step(const CalibrateStepOptions& options);

// The envelope's held-out batch (the measure of a solved step on data it was not solved on): the
// same state, seed and step, the next step's rows of its data file (`next_rows`) as the batch,
// and the exact step on them at the envelope's bits (one more exact step). nullopt, with `why`
// set, when the data file is not there or not the one recorded (its SHA-256), or the envelope
// has no next rows.
std::optional<StepEnvelope> held_out_envelope(const StepEnvelope& envelope, const ir::Program& program, int threads,
                                              std::string& why, const WindowProgress& on_window = {});

}  // namespace presk::step
