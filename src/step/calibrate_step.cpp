// The measurement of `presk calibrate --step` (calibrate_step.h).
#include "step/calibrate_step.h"

#include <chrono>
#include <fstream>

#include "exec/native/realization.h"
#include "ir/footprint.h"
#include "ir/program_hash.h"
#include "step/measure_step.h"
#include "support/diagnostics.h"
#include "support/memory.h"
#include "support/sha256.h"
#include "train/batch_gradient.h"
#include "train/token_windows.h"

namespace presk::step {
namespace {

void check_options(const CalibrateStepOptions& o, int64_t steps) {
  if (o.weights.empty() || o.data.empty()) {
    usage_error("E1256").hint("presk calibrate --step PROGRAM --entry loss --weights W.safetensors --data train.safetensors --warmup K")
        << "the step's state needs " << (o.weights.empty() ? "--weights (the parameters it starts from)" : "--data (the token windows)");
  }
  if (o.warmup_steps < 1) {
    usage_error("E1250").hint("pass --warmup K with K ≥ 1, e.g. --warmup 100")
        << "--warmup " << o.warmup_steps << ": the state needs at least one native step before the measured one "
        << "(after none, AdamW's v is 0)";
  }
  if (o.warmup_steps >= steps) {
    usage_error("E1250").hint("pass --steps N with N > K (the schedule's length), or leave it out (K + 1)")
        << "--warmup " << o.warmup_steps << " with --steps " << steps << ": the measured step "
        << o.warmup_steps + 1 << " lies beyond the schedule";
  }
}

// E0017 before the warm-up when the exact step cannot fit: each window run at once holds every
// let of the vjp program in MPFR at `bits` (the struct, its limbs, the allocator's header), and
// every window's cotangents are kept until the mean.
void check_exact_memory(const CalibrateStepOptions& o, const train::GradientProgram& gradient) {
  const ir::Footprint size = ir::footprint(gradient.program, nullptr);
  const uint64_t number = 48 + 8 * static_cast<uint64_t>((o.bits + 63) / 64);
  const auto at_once = static_cast<uint64_t>(std::max<int64_t>(1, std::min<int64_t>(std::max(o.threads, 1), o.batch)));
  const uint64_t needed =
      saturating_sum(saturating_product(size.let_elements, saturating_product(number, at_once)),
                     saturating_product(size.param_elements, saturating_sum(8 * 8, saturating_product(number, uint64_t(o.batch) + 3))));
  check_memory(needed, "the exact step of `" + o.entry + "` at " + std::to_string(o.bits) + " bits (" +
                           std::to_string(at_once) + " window" + (at_once == 1 ? "" : "s") + " at once)",
               "use fewer --threads, fewer --bits, a smaller --batch, or smaller --dim/--const values");
}

// The entry's one argument: windows of W + 1 tokens.
int64_t window_width(const ir::Program& program, const std::string& entry) {
  const ir::Function* function = program.find_function(entry);
  if (!function || function->argument_types.size() != 1 || function->argument_types[0].rank() != 1) {
    user_error("E1003").hint("train an entry such as examples/gpt.psk's `loss(p : GPT, tokens : Z[T + 1]) -> R`")
        << "`" << entry << "` cannot be trained on token windows: it must take one argument Z[W + 1]";
  }
  return function->argument_types[0].shape[0];
}

// K native f64 steps of presk train from the weights: the state after them.
train::TrainState warm_up(const CalibrateStepOptions& o, int64_t steps) {
  train::TrainOptions run;
  run.program = o.program;
  run.evaluation = o.program;  // no --val: not run
  run.entry = o.entry;
  run.realization_argument = "f64";
  run.data = o.data;
  run.steps = steps;
  run.batch = o.batch;
  run.schedule = o.schedule;
  run.schedule.steps = steps;
  run.adamw = o.adamw;
  run.dropout = o.dropout;
  run.seed = o.seed;
  run.remat = o.remat;
  run.init = o.weights;
  run.until = o.warmup_steps;
  run.threads = o.threads;
  run.keep_state = true;
  train::TrainCallbacks callbacks;
  callbacks.on_step = o.on_warmup_step;
  return train::run_training(run, callbacks).state;
}

std::vector<Tensor> rows_of(const train::TokenWindows& windows, const std::vector<int64_t>& rows) {
  std::vector<Tensor> out;
  for (int64_t row : rows) out.push_back(windows.row(row));
  return out;
}

// The native all-f64 step from the state as the yardstick: Δ = θ̂′ − θ (one binary64 subtraction,
// rounded once), ĝ, their norms and the floors of the binary64 θ̂′.
ExactStep f64_step(const ir::Program& program, const std::string& entry, const train::TrainState& state,
                   const StepInput& input, int threads) {
  const auto start = std::chrono::steady_clock::now();
  const train::GradientProgram store = train::make_gradient_program(program, entry, train::parameter_layout(program), true);
  NativeStep native = native_step(store, exec::native::uniform_realization(RealType::f64), state, input, threads);
  ExactStep out;
  out.bits = 53;
  for (size_t k = 0; k < state.parameters.size(); ++k) {
    const std::vector<double>& theta = state.parameters[k].theta;
    std::vector<double>& update = out.update.emplace_back(theta.size());
    for (size_t i = 0; i < theta.size(); ++i) update[i] = native.theta[k][i] - theta[i];
  }
  std::vector<std::vector<double>> theta;
  for (const train::ParameterState& p : state.parameters) theta.push_back(p.theta);
  out.theta_norm = norm_of(theta);
  out.update_norm = norm_of(out.update);
  out.gradient_norm = norm_of(native.gradient);
  out.floors = binary64_floors(native.theta, out.update_norm);
  out.gradient = std::move(native.gradient);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace

StepEnvelope calibrate_step(const CalibrateStepOptions& o) {
  const int64_t steps = o.steps > 0 ? o.steps : o.warmup_steps + 1;
  check_options(o, steps);
  const std::vector<train::ParameterState> layout = train::parameter_layout(o.program);
  const train::GradientProgram recompute = train::make_gradient_program(o.program, o.entry, layout, false);
  if (o.yardstick == Yardstick::exact) check_exact_memory(o, recompute);
  StepEnvelope e;
  e.state = warm_up(o, steps);
  internal_assert(e.state.step == o.warmup_steps);
  const train::TokenWindows data(o.data, window_width(o.program, o.entry), "--data");
  e.program = o.program_path;
  e.program_hash = ir::program_hash(o.program);
  e.entry = o.entry;
  e.bindings = o.bindings;
  e.bits = o.yardstick == Yardstick::exact ? o.bits : 53;
  e.yardstick = o.yardstick;
  e.weights = o.weights;
  e.weights_sha256 = sha256_file(o.weights);
  e.data = o.data;
  e.data_sha256 = sha256_file(o.data);
  e.warmup_steps = o.warmup_steps;
  e.batch = o.batch;
  e.steps = steps;
  e.seed = o.seed;
  e.schedule = o.schedule;
  e.schedule.steps = steps;
  e.adamw = o.adamw;
  e.dropout = o.dropout;
  e.remat = o.remat == ad::Remat::Store ? "store" : "recompute";
  e.step = o.warmup_steps + 1;
  e.learning_rate = train::learning_rate(e.schedule, o.warmup_steps);
  e.rows = train::batch_rows(o.seed, o.warmup_steps, o.batch, data.count());
  e.next_rows = train::batch_rows(o.seed, o.warmup_steps + 1, o.batch, data.count());
  e.windows = rows_of(data, e.rows);
  // The exact step.
  const StepInput input{e.windows, o.seed, o.warmup_steps, e.learning_rate, o.adamw};
  ExactStep exact = o.yardstick == Yardstick::exact ? exact_step(recompute, e.state, input, o.bits, o.threads, o.on_window)
                                                    : f64_step(o.program, o.entry, e.state, input, o.threads);
  e.update = std::move(exact.update);
  e.gradient = std::move(exact.gradient);
  e.theta_norm = exact.theta_norm;
  e.update_norm = exact.update_norm;
  e.gradient_norm = exact.gradient_norm;
  e.floors = exact.floors;
  e.exact_seconds = exact.seconds;
  // The sampling noise: native f64 gradients of this batch and the next step's, from the state.
  const exec::native::Realization f64 = exec::native::uniform_realization(RealType::f64);
  const exec::native::PreparedParameters prepared = train::prepare(recompute.program, f64, e.state);
  auto gradient_of = [&](const std::vector<int64_t>& rows, int64_t step) {
    train::BatchGradient g = train::batch_gradient(recompute, f64, prepared, rows_of(data, rows), o.seed, step,
                                                   RealType::f64, o.threads);
    for (size_t k = 0; k < g.gradients.size(); ++k) {
      if (g.gradients[k].empty()) g.gradients[k].assign(e.state.parameters[k].theta.size(), 0.0);
    }
    return g.gradients;
  };
  e.sampling_noise = relative_distance(gradient_of(e.next_rows, o.warmup_steps + 1), gradient_of(e.rows, o.warmup_steps));
  return e;
}

std::optional<StepEnvelope> held_out_envelope(const StepEnvelope& envelope, const ir::Program& program, int threads,
                                              std::string& why, const WindowProgress& on_window) {
  if (envelope.next_rows.empty()) {
    why = "the envelope records no next rows";
    return std::nullopt;
  }
  if (!std::ifstream(envelope.data).good()) {
    why = "its data file " + envelope.data + " is not there";
    return std::nullopt;
  }
  if (sha256_file(envelope.data) != envelope.data_sha256) {
    why = "its data file " + envelope.data + " is not the one it was calibrated on (SHA-256)";
    return std::nullopt;
  }
  const train::TokenWindows data(envelope.data, window_width(program, envelope.entry), "the step envelope's data");
  StepEnvelope held = envelope;
  held.rows = envelope.next_rows;
  held.windows = rows_of(data, held.rows);
  const train::GradientProgram recompute =
      train::make_gradient_program(program, envelope.entry, train::parameter_layout(program), false);
  const StepInput input{held.windows, envelope.seed, envelope.step - 1, envelope.learning_rate, envelope.adamw};
  ExactStep exact = exact_step(recompute, envelope.state, input, envelope.bits, threads, on_window);
  held.update = std::move(exact.update);
  held.gradient = std::move(exact.gradient);
  held.theta_norm = exact.theta_norm;
  held.update_norm = exact.update_norm;
  held.gradient_norm = exact.gradient_norm;
  held.floors = exact.floors;
  held.exact_seconds = exact.seconds;
  return held;
}

}  // namespace presk::step
