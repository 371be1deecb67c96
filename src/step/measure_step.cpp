// The native step and its measures (measure_step.h).
#include "step/measure_step.h"

#include <mpfr.h>

#include <chrono>

#include "ir/program_hash.h"
#include "ir/sites.h"
#include "support/alternating.h"
#include "support/diagnostics.h"
#include "support/number_format.h"

namespace presk::step {
namespace {

// Squares summed in MPFR at 256 bits: every difference of two binary64 numbers is exact there
// (a step is far from spanning 200 binades), every sum rounded once.
class SquareSum {
 public:
  SquareSum() {
    mpfr_inits2(256, sum_, term_, (mpfr_ptr) nullptr);
    mpfr_set_zero(sum_, 1);
  }
  ~SquareSum() { mpfr_clears(sum_, term_, (mpfr_ptr) nullptr); }
  SquareSum(const SquareSum&) = delete;
  SquareSum& operator=(const SquareSum&) = delete;
  // Adds (a − b − c)².
  void add(double a, double b = 0, double c = 0) {
    mpfr_set_d(term_, a, MPFR_RNDN);
    mpfr_sub_d(term_, term_, b, MPFR_RNDN);
    mpfr_sub_d(term_, term_, c, MPFR_RNDN);
    mpfr_sqr(term_, term_, MPFR_RNDN);
    mpfr_add(sum_, sum_, term_, MPFR_RNDN);
  }
  // √this, rounded once to binary64.
  double root() {
    mpfr_sqrt(term_, sum_, MPFR_RNDN);
    return mpfr_get_d(term_, MPFR_RNDN);
  }
  // √(this / other), rounded once to binary64; 0 when both are 0.
  double ratio_root(const SquareSum& other) {
    if (mpfr_zero_p(sum_)) return 0;
    mpfr_div(term_, sum_, other.sum_, MPFR_RNDN);
    mpfr_sqrt(term_, term_, MPFR_RNDN);
    return mpfr_get_d(term_, MPFR_RNDN);
  }

 private:
  mpfr_t sum_, term_;
};

train::TrainState rounded_state(const train::TrainState& state, RealType master) {
  train::TrainState rounded = state;
  const ElementType type = exec::native::element_type_of(master);
  for (train::ParameterState& p : rounded.parameters) {
    for (std::vector<double>* values : {&p.theta, &p.m, &p.v}) {
      for (double& x : *values) x = round_to(x, type);
    }
  }
  return rounded;
}

void check_realization(const exec::native::Realization& realization) {
  if (realization.params.empty() && realization.quant.empty()) return;
  const std::string path =
      !realization.params.empty() ? realization.params.begin()->first : realization.quant.begin()->first;
  user_error("E1252").hint("drop `params` and `quant`: the optimizer keeps θ, m and v in the default type; "
                           "type the sites only")
      << "the realization " << realization.origin << (realization.params.empty() ? " quantizes" : " types")
      << " parameter `" << path << "`, which is the optimizer's state (master weights in "
      << exec::native::real_type_name(realization.default_type) << ")";
}

// The layout of `program` must be the envelope's (the same hash gives the same layout).
void check_layout(const StepEnvelope& envelope, const std::vector<train::ParameterState>& layout) {
  bool same = layout.size() == envelope.state.parameters.size();
  for (size_t k = 0; same && k < layout.size(); ++k) {
    same = layout[k].path == envelope.state.parameters[k].path && layout[k].shape == envelope.state.parameters[k].shape;
  }
  if (!same) {
    user_error("E1253").hint("calibrate the step again") << "the step envelope's state does not hold the program's parameters";
  }
}

}  // namespace

NativeStep native_step(const train::GradientProgram& gradient, const exec::native::Realization& realization,
                       const train::TrainState& state, const StepInput& input, int threads) {
  const RealType master = realization.default_type;
  train::TrainState rounded = rounded_state(state, master);
  const exec::native::PreparedParameters prepared = train::prepare(gradient.program, realization, rounded);
  train::BatchGradient batch =
      train::batch_gradient(gradient, realization, prepared, input.rows, input.seed, input.step, master, threads);
  const train::AdamWScalars scalars = train::adamw_scalars(input.adamw, input.learning_rate, state.step + 1, master);
  NativeStep out;
  out.loss = batch.loss;
  for (size_t k = 0; k < rounded.parameters.size(); ++k) {
    train::ParameterState& p = rounded.parameters[k];
    std::vector<double>& g = batch.gradients[k];
    if (g.empty()) g.assign(p.theta.size(), 0.0);
    train::adamw_update(scalars, master, train::decays(static_cast<int64_t>(p.shape.size()), p.stack_depth), p.theta,
                        p.m, p.v, g);
    out.theta.push_back(std::move(p.theta));
    out.gradient.push_back(std::move(g));
  }
  return out;
}

double relative_distance(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  internal_assert(a.size() == b.size());
  SquareSum distance, norm;
  for (size_t k = 0; k < a.size(); ++k) {
    internal_assert(a[k].size() == b[k].size());
    for (size_t i = 0; i < a[k].size(); ++i) {
      distance.add(a[k][i], b[k][i]);
      norm.add(b[k][i]);
    }
  }
  return distance.ratio_root(norm);
}

double norm_of(const std::vector<std::vector<double>>& a) {
  SquareSum sum;
  for (const std::vector<double>& values : a) {
    for (double x : values) sum.add(x);
  }
  return sum.root();
}

StorageFloors binary64_floors(const std::vector<std::vector<double>>& theta_next, double update_norm) {
  SquareSum f32, bf16;
  for (const std::vector<double>& values : theta_next) {
    for (double x : values) {
      f32.add(round_to(x, ElementType::f32), x);
      bf16.add(round_to(x, ElementType::bf16), x);
    }
  }
  if (update_norm == 0) return {};
  return {0.0, f32.root() / update_norm, bf16.root() / update_norm};
}

double update_gap(const std::vector<std::vector<double>>& theta_next, const train::TrainState& state,
                  const std::vector<std::vector<double>>& update) {
  internal_assert(theta_next.size() == state.parameters.size() && update.size() == theta_next.size());
  SquareSum distance, norm;
  for (size_t k = 0; k < update.size(); ++k) {
    const std::vector<double>& theta = state.parameters[k].theta;
    internal_assert(theta_next[k].size() == theta.size() && update[k].size() == theta.size());
    for (size_t i = 0; i < theta.size(); ++i) {
      distance.add(theta_next[k][i], theta[i], update[k][i]);
      norm.add(update[k][i]);
    }
  }
  return distance.ratio_root(norm);
}

void check_envelope_program(const StepEnvelope& envelope, const ir::Program& program) {
  const std::string hash = ir::program_hash(program);
  if (hash != envelope.program_hash) {
    user_error("E1251").hint("pass the program and --const/--dim the step was calibrated with, or calibrate again")
        << "the step envelope was measured on another program: its program hash is " << envelope.program_hash
        << ", the program's " << hash;
  }
}

void time_steps(const StepEnvelope& envelope, const ir::Program& program, std::vector<StepMeasures>& measures,
                int rounds, int threads, const std::function<void(int)>& progress) {
  const std::vector<train::ParameterState> layout = train::parameter_layout(program);
  std::vector<exec::native::Realization> realizations;
  std::vector<train::GradientProgram> gradients;
  for (const StepMeasures& m : measures) {
    realizations.push_back(load_step_realization(program, envelope.entry, m.realization));
    gradients.push_back(train::make_gradient_program(program, envelope.entry, layout, realizations.back().sites.empty()));
  }
  const StepInput input{envelope.windows, envelope.seed, envelope.step - 1, envelope.learning_rate, envelope.adamw};
  const std::vector<RoundTimes> times = time_in_alternation(
      measures.size(), rounds, 1,
      [&](size_t k) { native_step(gradients[k], realizations[k], envelope.state, input, threads); }, progress);
  for (size_t k = 0; k < measures.size(); ++k) {
    measures[k].seconds = times[k].median;
    measures[k].least = times[k].least;
    measures[k].greatest = times[k].greatest;
    measures[k].rounds = static_cast<int>(times[k].rounds.size());
  }
}

StepMeasures measure_step(const StepEnvelope& envelope, const ir::Program& program,
                          const std::string& realization_argument, int threads) {
  check_envelope_program(envelope, program);
  const exec::native::Realization realization = load_step_realization(program, envelope.entry, realization_argument);
  return measure_step(envelope, program, realization, realization_argument, threads);
}

exec::native::Realization recipe_realization(const ir::Program& program, const std::string& entry) {
  const train::GradientProgram recompute =
      train::make_gradient_program(program, entry, train::parameter_layout(program), false);
  exec::native::Realization recipe = exec::native::uniform_realization(RealType::f32);
  recipe.origin = "recipe";
  for (const ir::Site& site : ir::site_table(recompute.program)) {
    const ir::Function* function = recompute.program.find_function(site.function);
    if (function && exec::native::is_typable(function->lets[site.let_index])) recipe.sites[site.name] = RealType::bf16;
  }
  return recipe;
}

exec::native::Realization load_step_realization(const ir::Program& program, const std::string& entry,
                                                const std::string& argument) {
  if (argument == "recipe") return recipe_realization(program, entry);
  const train::GradientProgram recompute =
      train::make_gradient_program(program, entry, train::parameter_layout(program), false);
  exec::native::Realization realization = exec::native::load_realization(argument, recompute.program);
  check_realization(realization);
  return realization;
}

StepMeasures measure_step(const StepEnvelope& envelope, const ir::Program& program,
                          const exec::native::Realization& realization, const std::string& name, int threads) {
  check_envelope_program(envelope, program);
  const std::vector<train::ParameterState> layout = train::parameter_layout(program);
  check_layout(envelope, layout);
  check_realization(realization);
  // As presk train's --remat auto: store under a uniform realization, else recompute (same bits).
  const bool store = realization.sites.empty();
  const train::GradientProgram gradient = train::make_gradient_program(program, envelope.entry, layout, store);
  StepInput input{envelope.windows, envelope.seed, envelope.step - 1, envelope.learning_rate, envelope.adamw};
  const auto start = std::chrono::steady_clock::now();
  const NativeStep native = native_step(gradient, realization, envelope.state, input, threads);
  StepMeasures measures;
  measures.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  measures.realization = name;
  measures.master = realization.default_type;
  measures.update_gap = update_gap(native.theta, envelope.state, envelope.update);
  measures.gradient_gap = relative_distance(native.gradient, envelope.gradient);
  measures.storage_floor = envelope.floors.of(measures.master);
  return measures;
}

}  // namespace presk::step
