// The training loop (trainer.h): setup, the steps, validation and checkpoints.
#include "train/trainer.h"

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "exec/native/realization.h"
#include "exec/reference/parameters.h"
#include "ir/footprint.h"
#include "ir/program_hash.h"
#include "support/diagnostics.h"
#include "support/memory.h"
#include "train/batch_gradient.h"
#include "train/checkpoint.h"
#include "train/token_windows.h"
#include "train/vocabulary_check.h"

namespace presk::train {
namespace {

using Clock = std::chrono::steady_clock;

void check_options(const TrainOptions& o, const exec::native::Realization& realization) {
  if (!realization.params.empty() || !realization.quant.empty()) {
    const std::string path = !realization.params.empty() ? realization.params.begin()->first
                                                         : realization.quant.begin()->first;
    user_error("E1001").hint(
        "drop `params` and `quant` from the realization; type the sites (activations) only")
        << "the realization " << (realization.params.empty() ? "quantizes" : "types")
        << " parameter `" << path << "`: training keeps master weights in the default type ("
        << exec::native::real_type_name(realization.default_type) << ")";
  }
  if (o.remat == ad::Remat::Store && !realization.sites.empty()) {
    user_error("E1002").hint(
        "use --remat recompute (or auto, the default), or a realization without `sites`")
        << "--remat store hands the stored values from `" << o.entry << ".fwd` to `" << o.entry
        << ".bwd` as arguments, which take the default type: a realization that types sites (`"
        << realization.sites.begin()->first << "`) would round them";
  }
  auto refuse = [](const std::string& what, const std::string& hint) {
    user_error("E1008").hint(hint) << what;
  };
  if (!o.init.empty() && !o.resume.empty())
    refuse("--init and --resume both given",
           "a resumed run takes its parameters from the checkpoint; drop --init");
  if (o.out.empty() && !o.keep_state) refuse("no --out checkpoint", "pass --out FILE.safetensors");
  if (o.schedule.warmup > o.steps)
    refuse("--warmup " + std::to_string(o.schedule.warmup) + " exceeds --steps " +
               std::to_string(o.steps),
           "use a warm-up of at most the run's steps");
  if (!(o.adamw.beta1 >= 0 && o.adamw.beta1 < 1 && o.adamw.beta2 >= 0 && o.adamw.beta2 < 1)) {
    refuse("AdamW's β₁ and β₂ lie in [0, 1)", "e.g. --beta1 0.9 --beta2 0.99");
  }
  if (o.until && *o.until > o.steps)
    refuse("--until " + std::to_string(*o.until) + " is beyond --steps " + std::to_string(o.steps),
           "stop at a step within the run");
}

// The entry's one argument: windows of W + 1 tokens (E1003 otherwise).
int64_t window_width(const ir::Program& program, const std::string& entry) {
  const ir::Function* function = program.find_function(entry);
  if (!function) user_error("E1003") << "the program has no entry `" << entry << "`";
  if (function->argument_types.size() != 1 ||
      function->argument_types[0].kind != ir::ElemKind::Int ||
      function->argument_types[0].rank() != 1) {
    user_error("E1003").hint(
        "train an entry such as examples/gpt.psk's `loss(p : GPT, tokens : Z[T + 1]) -> R`")
        << "`" << entry
        << "` cannot be trained on token windows: it must take one argument Z[W + 1]";
  }
  return function->argument_types[0].shape[0];
}

RunIdentity identity_of(const TrainOptions& o, const std::string& hash,
                        const exec::native::Realization& realization, const TokenWindows& data) {
  nlohmann::json hyper = {{"steps", o.steps},
                          {"batch", o.batch},
                          {"schedule", schedule_name(o.schedule.kind)},
                          {"lr", o.schedule.peak},
                          {"min_lr", o.schedule.floor},
                          {"warmup", o.schedule.warmup},
                          {"beta1", o.adamw.beta1},
                          {"beta2", o.adamw.beta2},
                          {"epsilon", o.adamw.epsilon},
                          {"weight_decay", o.adamw.weight_decay},
                          {"dropout", o.dropout}};
  nlohmann::json data_json = {
      {"source_sha256", data.source_sha256()}, {"windows", data.count()}, {"width", data.width()}};
  return {{"program_hash", hash},
          {"entry", o.entry},
          {"seed", std::to_string(o.seed)},
          {"master_type", exec::native::real_type_name(realization.default_type)},
          {"realization", exec::native::realization_to_json(realization).dump()},
          {"hyperparameters", hyper.dump()},
          {"data", data_json.dump()}};
}

// The program's initializers under the seed, rounded once into the master type.
TrainState initial_state(const TrainOptions& o, const std::vector<ParameterState>& layout,
                         RealType master) {
  TrainState state;
  reference::ParameterStore store = reference::synthesize_parameters(o.program, o.seed, o.threads);
  const ElementType type = exec::native::element_type_of(master);
  for (const ParameterState& p : layout) {
    ParameterState fresh = p;
    fresh.theta = *store.find(p.path);
    for (double& x : fresh.theta) x = round_to(x, type);
    fresh.m.assign(fresh.theta.size(), 0.0);
    fresh.v.assign(fresh.theta.size(), 0.0);
    state.parameters.push_back(std::move(fresh));
  }
  return state;
}

// E0017 before step 0 when a step cannot fit in memory: each window run at once holds every
// let of the gradient program (8 bytes an element), and the parameters are held as θ, m, v, the
// realized copy and one gradient per window at once.
void check_training_memory(const TrainOptions& o, const ir::Program& gradient) {
  const ir::Footprint size = ir::footprint(gradient, nullptr);
  const auto at_once = static_cast<uint64_t>(std::max<int64_t>(1, std::min<int64_t>(o.threads, o.batch)));
  const uint64_t needed = saturating_sum(saturating_product(size.let_elements, 8 * at_once),
                                         saturating_product(size.param_elements, 8 * (4 + at_once)));
  check_memory(needed,
               "a training step of `" + o.entry + "` (" + std::to_string(at_once) + " window" +
                   (at_once == 1 ? "" : "s") + " at once; the gradient's " + std::to_string(size.let_elements) +
                   " stored elements per window)",
               "use smaller --dim or --const values, or fewer --threads");
}

std::vector<Tensor> rows_of(const TokenWindows& windows, const std::vector<int64_t>& indices) {
  std::vector<Tensor> rows;
  for (int64_t index : indices) rows.push_back(windows.row(index));
  return rows;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Everything a run holds between steps.
class Run {
 public:
  Run(const TrainOptions& options, const TrainCallbacks& callbacks)
      : o_(options),
        callbacks_(callbacks),
        layout_(parameter_layout(options.program)),
        gradient_(make_gradient_program(options.program, options.entry, layout_,
                                        options.remat == ad::Remat::Store)),
        realization_(
            exec::native::load_realization(options.realization_argument, gradient_.program)),
        master_(realization_.default_type),
        data_(options.data, window_width(options.program, options.entry), "--data") {
    check_options(o_, realization_);
    check_training_memory(o_, gradient_.program);
    result_.program_hash = ir::program_hash(o_.program);
    identity_ = identity_of(o_, result_.program_hash, realization_, data_);
    for (const char* key : {"vocabulary", "vocabulary_size"}) {
      if (!data_.metadata(key).empty()) notes_[key] = data_.metadata(key);
    }
    if (!o_.validation.empty()) {
      validation_.emplace(o_.validation, data_.width(), "--val");
      validation_rows_ =
          rows_of(*validation_, validation_rows(validation_->count(), o_.validation_windows));
    }
    check_vocabulary();
    if (!o_.resume.empty()) {
      state_ = read_checkpoint(o_.resume, layout_, master_, identity_, &o_.program);
    } else if (!o_.init.empty()) {
      state_ = read_initial_parameters(o_.init, layout_, master_, &o_.program);
    } else {
      state_ = initial_state(o_, layout_, master_);
    }
    const int64_t last = o_.until.value_or(o_.steps);
    if (state_.step > last) {
      user_error("E1008").hint("pass a later --until or --steps")
          << "the checkpoint is at step " << state_.step << ", the run would stop at step " << last;
    }
  }

  TrainResult run();

 private:
  void check_vocabulary() const;
  void step(int64_t s, Clock::time_point start, int64_t first, int64_t last);
  void validate();
  void checkpoint();

  const TrainOptions& o_;
  const TrainCallbacks& callbacks_;
  std::vector<ParameterState> layout_;
  GradientProgram gradient_;
  exec::native::Realization realization_;
  RealType master_;
  TokenWindows data_;
  std::optional<TokenWindows> validation_;
  std::vector<Tensor> validation_rows_;
  RunIdentity identity_;
  RunNotes notes_;
  TrainState state_;
  TrainResult result_;
};

// Before step 0: every token of --data and --val within the tables and classes the entry
// indexes, and the data's vocabulary the one the starting weights record (E1032, E1033).
void Run::check_vocabulary() const {
  if (auto bound = token_bound(o_.program, o_.entry)) {
    check_tokens_fit(data_, "--data", *bound);
    if (validation_) check_tokens_fit(*validation_, "--val", *bound);
  }
  if (!o_.resume.empty()) check_same_vocabulary(o_.resume, "--resume", data_);
  if (!o_.init.empty()) check_same_vocabulary(o_.init, "--init", data_);
}

TrainResult Run::run() {
  const Clock::time_point start = Clock::now();
  const int64_t first = state_.step;
  const int64_t last = o_.until.value_or(o_.steps);
  result_.first_step = first;
  if (first == 0) validate();
  for (int64_t s = first; s < last; ++s) {
    step(s, start, first, last);
    const bool periodic = o_.every > 0 && state_.step % o_.every == 0;
    if (periodic || state_.step == last) {
      validate();
      checkpoint();
    }
  }
  if (first == last) {  // no step (--until 0, or a checkpoint at its last step): evaluated, written
    if (first != 0) validate();  // step 0 was validated above
    checkpoint();
  }
  result_.last_step = state_.step;
  result_.seconds = seconds_since(start);
  if (o_.keep_state) result_.state = std::move(state_);
  return std::move(result_);
}

void Run::step(int64_t s, Clock::time_point start, int64_t first, int64_t last) {
  const std::vector<Tensor> rows = rows_of(data_, batch_rows(o_.seed, s, o_.batch, data_.count()));
  const exec::native::PreparedParameters prepared =
      prepare(gradient_.program, realization_, state_);
  BatchGradient batch =
      batch_gradient(gradient_, realization_, prepared, rows, o_.seed, s, master_, o_.threads,
                     o_.profile ? &result_.profile : nullptr);
  if (!std::isfinite(batch.loss)) {
    user_error("E1009").hint("lower --lr, lengthen --warmup, or train under a wider --realize")
        << "the training loss is " << batch.loss << " at step " << s + 1 << "; training stopped";
  }
  const double rate = learning_rate(o_.schedule, s);
  const AdamWScalars scalars = adamw_scalars(o_.adamw, rate, s + 1, master_);
  for (size_t k = 0; k < state_.parameters.size(); ++k) {
    ParameterState& p = state_.parameters[k];
    std::vector<double>& g = batch.gradients[k];
    if (g.empty()) g.assign(p.theta.size(), 0.0);
    adamw_update(scalars, master_, decays(static_cast<int64_t>(p.shape.size()), p.stack_depth),
                 p.theta, p.m, p.v, g);
  }
  state_.step = s + 1;
  StepReport report;
  report.step = state_.step;
  report.steps = o_.steps;
  report.loss = batch.loss;
  report.learning_rate = rate;
  report.seconds = seconds_since(start);
  const double per_step = report.seconds / static_cast<double>(state_.step - first);
  report.tokens_per_second = static_cast<double>(o_.batch * (data_.width() - 1)) / per_step;
  report.eta_seconds = per_step * static_cast<double>(last - state_.step);
  result_.steps.push_back(report);
  if (callbacks_.on_step) callbacks_.on_step(report);
}

void Run::validate() {
  if (!validation_) return;
  const exec::native::Realization f64 = exec::native::uniform_realization(RealType::f64);
  const exec::native::PreparedParameters prepared = prepare(o_.evaluation, f64, state_);
  ValidationReport report;
  report.step = state_.step;
  report.windows = static_cast<int64_t>(validation_rows_.size());
  report.loss = mean_loss(o_.evaluation, o_.entry, f64, prepared, validation_rows_, o_.threads);
  result_.validations.push_back(report);
  if (callbacks_.on_validation) callbacks_.on_validation(report);
}

void Run::checkpoint() {
  if (o_.out.empty()) return;  // keep_state without a file
  write_checkpoint(o_.out, state_, master_, identity_, notes_);
  if (callbacks_.on_checkpoint) callbacks_.on_checkpoint(o_.out);
  if (!o_.weights_out.empty()) {
    write_weights(o_.weights_out, state_, master_, identity_, notes_);
    if (callbacks_.on_checkpoint) callbacks_.on_checkpoint(o_.weights_out);
  }
}

}  // namespace

TrainResult run_training(const TrainOptions& options, const TrainCallbacks& callbacks) {
  Run run(options, callbacks);
  return run.run();
}

void set_dropout_rates(ir::Program& program, double rate) {
  if (!(std::isfinite(rate) && rate >= 0 && rate < 1)) {  // NaN fails every comparison
    user_error("E1050").hint("pass a rate r with 0 ≤ r < 1, e.g. --dropout 0.1")
        << "--dropout " << ir::real_to_string(rate) << " is not a dropout rate: a rate is a finite number in [0, 1)";
  }
  for (ir::Function& function : program.functions) {
    for (ir::Let& let : function.lets) {
      if (let.op == ir::Op::dropout) let.attrs.rate = rate;
    }
  }
}

}  // namespace presk::train
