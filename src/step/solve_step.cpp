// The step solved by function (solve_step.h).
#include "step/solve_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "ir/sites.h"
#include "solve/explain.h"
#include "solve/greedy.h"
#include "solve/record.h"
#include "solve/verify.h"
#include "step/step_price.h"
#include "support/diagnostics.h"
#include "support/json_fields.h"

namespace presk::step {
namespace {

using solve::Assignment;  // by unit (the offer's values, `functions`' order): 0 f64, 1 f32, 2 bf16

// The menu's rungs, widest first (solve::default_menu).
constexpr RealType kRungs[] = {RealType::f64, RealType::f32, RealType::bf16};
int rung_of(RealType type) { return type == RealType::f64 ? 0 : type == RealType::f32 ? 1 : 2; }

struct Unit {
  std::vector<std::string> sites;
  double elements = 0;  // the sites' elements per window
};

// The typable sites of the training program with its vjps, by function, or one by one (those
// of more than one element) at the value grain.
std::map<std::string, Unit> units_of(const ir::Program& program, Grain grain) {
  std::map<std::string, Unit> out;
  for (const ir::Site& site : ir::site_table(program)) {
    const ir::Function* function = program.find_function(site.function);
    if (!function || !exec::native::is_typable(function->lets[site.let_index])) continue;
    if (grain == Grain::value && site.element_count <= 1) continue;
    Unit& unit = out[grain == Grain::function ? site.function : site.name];
    unit.sites.push_back(site.name);
    unit.elements += static_cast<double>(site.element_count);
  }
  return out;
}

double isolated(const FunctionGaps& f, int rung) { return rung == 2 ? f.bf16 : rung == 1 ? f.f32 : 0; }
double saved(const FunctionGaps& f, int rung) { return rung == 2 ? f.saved_bf16 : rung == 1 ? f.saved_f32 : 0; }

// The units as src/solve's offer: one value per entry of `functions`, its rungs' bytes its
// sites' elements (the optimizer: the parameters') at each type.
solve::Offer offer_of(const std::vector<FunctionGaps>& functions, const std::map<std::string, Unit>& units,
                      double parameter_elements) {
  solve::Offer offer;
  offer.menu = solve::default_menu();
  for (const FunctionGaps& f : functions) {
    solve::Value value;
    const auto unit = units.find(f.function);
    value.kind = unit == units.end() ? solve::ValueKind::parameter : solve::ValueKind::site;
    value.key = f.function;
    value.op = unit == units.end() ? "adamw" : "function";
    value.elements = static_cast<int64_t>(unit == units.end() ? parameter_elements : unit->second.elements);
    value.exclusion = f.offered ? solve::Exclusion::offered : solve::Exclusion::no_effect;
    for (int r = 0; r < 3; ++r) {
      value.ladder.push_back({r, static_cast<double>(value.elements) * (8 >> r), 0});
    }
    offer.all_f64_bytes += value.ladder[0].bytes;
    offer.values.push_back(std::move(value));
  }
  return offer;
}

// √Σ of the chosen isolated gaps², summed in the units' order.
class IsolatedTally : public solve::Tally {
 public:
  IsolatedTally(const std::vector<FunctionGaps>& functions, const Assignment& assignment)
      : functions_(functions), squares_(squares(assignment)) {}
  double total() const override { return std::sqrt(squares_); }
  double with(Assignment& assignment, int value, int to) const override {
    const int old = assignment[value];
    assignment[value] = to;
    const double out = std::sqrt(squares(assignment));
    assignment[value] = old;
    return out;
  }
  void apply(const Assignment& assignment, int) override { squares_ = squares(assignment); }

 private:
  double squares(const Assignment& assignment) const {
    double sum = 0;
    for (size_t i = 0; i < functions_.size(); ++i) sum += std::pow(isolated(functions_[i], assignment[i]), 2);
    return sum;
  }
  const std::vector<FunctionGaps>& functions_;
  double squares_ = 0;
};

// Without a profile: by the gap alone, every narrowing counting one.
class GapObjective : public solve::Objective {
 public:
  solve::Gain gain(const Assignment&, int, int) const override { return {1, 1}; }
};

// With a profile: the predicted seconds per step each narrowing alone saves against all-f64
// (FunctionGaps::saved_*); hoped for, the most any narrower rung would save from here.
class SecondsObjective : public solve::Objective {
 public:
  explicit SecondsObjective(const std::vector<FunctionGaps>& functions) : functions_(functions) {}
  solve::Gain gain(const Assignment& assignment, int value, int to) const override {
    const FunctionGaps& f = functions_[value];
    const double now = saved(f, assignment[value]);
    double hoped = saved(f, to) - now;
    for (int r = to + 1; r < 3; ++r) hoped = std::max(hoped, saved(f, r) - now);
    return {saved(f, to) - now, hoped};
  }

 private:
  const std::vector<FunctionGaps>& functions_;
};

class Solver {
 public:
  Solver(const StepEnvelope& envelope, const ir::Program& program, int threads,
         const std::function<void(const std::string&)>& progress, Grain grain, const profile::Profile* profile)
      : envelope_(envelope), program_(program), threads_(threads), progress_(progress),
        recompute_(train::make_gradient_program(program, envelope.entry, train::parameter_layout(program), false)) {
    units_ = units_of(recompute_.program, grain);
    for (const auto& [name, unit] : units_) names_.push_back(name);
    names_.push_back(kOptimizerFunction);
    for (const ir::Param& param : recompute_.program.params) {
      if (param.type.kind == ir::ElemKind::Real) parameter_elements_ += static_cast<double>(param.type.element_count());
    }
    if (profile) {
      const double windows = static_cast<double>(envelope.windows.size());
      pricer_.emplace(recompute_.program, std::vector<std::string>{recompute_.vjp}, *profile, windows);
      store_ = train::make_gradient_program(program, envelope.entry, train::parameter_layout(program), true);
      store_pricer_.emplace(store_.program, std::vector<std::string>{store_.fwd, store_.bwd}, *profile, windows);
    }
  }

  // The predicted seconds of a step under `assignment` on the recomputing program (the greedy's
  // comparisons); needs a profile.
  double seconds(const Assignment& assignment) const { return pricer_->price(realization(assignment)).seconds; }
  // The same as measure_step runs it: storing under a uniform realization (step_price.h).
  double seconds_as_run(const Assignment& assignment) const {
    const exec::native::Realization r = realization(assignment);
    return (r.sites.empty() ? *store_pricer_ : *pricer_).price(r).seconds;
  }
  // All-f64 but unit `name` at `type`.
  Assignment alone(const std::string& name, RealType type) const {
    Assignment a(names_.size(), 0);
    a[std::find(names_.begin(), names_.end(), name) - names_.begin()] = rung_of(type);
    return a;
  }

  exec::native::Realization realization(const Assignment& assignment) const {
    const RealType master = kRungs[assignment.back()];
    exec::native::Realization r = exec::native::uniform_realization(master);
    r.origin = "solve --step";
    size_t i = 0;
    for (const auto& [name, unit] : units_) {
      const RealType type = kRungs[assignment[i++]];
      if (type == master) continue;
      for (const std::string& site : unit.sites) r.sites[site] = type;
    }
    return r;
  }

  StepMeasures measure(const Assignment& assignment, const std::string& what) {
    StepMeasures m = measure_step(envelope_, program_, realization(assignment), what, threads_);
    ++measurements_;
    note(fmt::format("measure {}: update gap {:.3e}", what, m.update_gap));
    return m;
  }

  void note(const std::string& line) {
    log_.push_back(line);
    if (progress_) progress_(line);
  }

  const std::map<std::string, Unit>& units() const { return units_; }
  const std::vector<std::string>& names() const { return names_; }
  double parameter_elements() const { return parameter_elements_; }
  int measurements() const { return measurements_; }
  std::vector<std::string> take_log() { return std::move(log_); }

 private:
  const StepEnvelope& envelope_;
  const ir::Program& program_;
  int threads_;
  std::function<void(const std::string&)> progress_;
  train::GradientProgram recompute_;
  std::optional<StepPricer> pricer_;
  train::GradientProgram store_;
  std::optional<StepPricer> store_pricer_;
  std::map<std::string, Unit> units_;
  std::vector<std::string> names_;  // the units' names, then kOptimizerFunction
  double parameter_elements_ = 0;
  int measurements_ = 0;
  std::vector<std::string> log_;
};

// The native step's update gap as the widening loop's measurement (solve/verify.h); the last
// step measured kept whole.
class StepMeasurements : public solve::Measurements {
 public:
  explicit StepMeasurements(Solver& solver) : solver_(solver) {}
  precision::MeasuredGap in_sample(const solve::Offer&, const Assignment& assignment) override {
    last = solver_.measure(assignment, "proposal");
    return {last.update_gap, 0};
  }
  std::optional<precision::MeasuredGap> held_out(const solve::Offer&, const Assignment&) override { return std::nullopt; }
  StepMeasures last;

 private:
  Solver& solver_;
};

// The greedy's proposal against the uniform realizations inside the estimate (all-f64, all-f32,
// all-bf16: the optimizer's master type too), as measure_step runs each: a uniform one stores, a
// mixed one recomputes the forward pass in the reverse one; keeps the one predicted fastest.
// Returns the uniform type kept, or "".
std::string keep_fastest(const std::vector<FunctionGaps>& functions, double budget, Solver& solver, Assignment& assignment) {
  const Assignment proposal = assignment;
  const double proposed = solver.seconds_as_run(proposal);
  double fastest = proposed;
  std::string kept;
  for (RealType type : {RealType::f64, RealType::f32, RealType::bf16}) {
    const Assignment uniform(functions.size(), rung_of(type));  // every unit, those that move no bit too
    const double seconds = solver.seconds_as_run(uniform);
    if (IsolatedTally(functions, uniform).total() <= budget && seconds < fastest) {
      assignment = uniform;
      fastest = seconds;
      kept = exec::native::real_type_name(type);
      solver.note(fmt::format("all-{} predicted faster than the greedy's proposal as run ({:.4g} s < {:.4g} s)", kept, seconds,
                              proposed));
    }
  }
  return kept;
}

// The isolated gaps (and with a profile the predicted savings) of every unit.
std::vector<FunctionGaps> measure_alone(Solver& solver, double baseline, bool priced) {
  std::vector<FunctionGaps> functions;
  const double all_f64 = priced ? solver.seconds(Assignment(solver.names().size(), 0)) : 0;
  for (const std::string& name : solver.names()) {
    FunctionGaps f;
    f.function = name;
    auto found = solver.units().find(name);
    f.sites = found == solver.units().end() ? 0 : static_cast<int>(found->second.sites.size());
    f.f32 = solver.measure(solver.alone(name, RealType::f32), name + " f32").update_gap;
    f.bf16 = solver.measure(solver.alone(name, RealType::bf16), name + " bf16").update_gap;
    f.offered = !(f.f32 == baseline && f.bf16 == baseline);
    if (priced) {
      f.saved_f32 = all_f64 - solver.seconds(solver.alone(name, RealType::f32));
      f.saved_bf16 = all_f64 - solver.seconds(solver.alone(name, RealType::bf16));
    }
    functions.push_back(f);
  }
  return functions;
}

// src/solve's proposal loop on the units; with a profile, the prefix of least predicted time,
// no narrowing predicted slower, and the uniform realizations compared as they run.
void propose_step(StepSolution& solution, double budget, Solver& solver, bool priced) {
  const solve::Offer& offer = solution.offer;
  solve::Solution& decisions = solution.decisions;
  decisions.assignment.assign(offer.values.size(), 0);
  decisions.target = budget;
  IsolatedTally tally(solution.functions, decisions.assignment);
  if (!priced) {
    solve::propose_steps(offer, tally, GapObjective(), budget, solve::offered_steps(offer), decisions);
  } else {
    const solve::Trajectory trajectory = solve::propose_steps(offer, tally, SecondsObjective(solution.functions), budget,
                                                              solve::offered_steps(offer), decisions);
    solve::keep_least(trajectory, [&](const Assignment& a) { return solver.seconds(a); }, decisions);
    solve::undo_slower([&](const Assignment& a, int) { return solver.seconds(a); }, decisions.assignment, decisions.moves);
    solve::refuse_unfit(offer, IsolatedTally(solution.functions, decisions.assignment), solve::offered_steps(offer), budget,
                        decisions);
    solution.uniform = keep_fastest(solution.functions, budget, solver, decisions.assignment);
  }
  decisions.proposed = decisions.assignment;
}

}  // namespace

StepSolution solve_step(const StepEnvelope& envelope, const ir::Program& program, double budget, int threads,
                        const std::function<void(const std::string&)>& progress, Grain grain,
                        const profile::Profile* profile, const StepEnvelope* held_out) {
  if (!(budget > 0) || !std::isfinite(budget)) {
    usage_error("E1258").hint("a number above 0, e.g. --budget 1e-3") << "the step's budget is " << budget << ", not above 0";
  }
  Solver solver(envelope, program, threads, progress, grain, profile);
  StepSolution solution;
  solution.grain = grain;
  solution.baseline = solver.measure(Assignment(solver.names().size(), 0), "all-f64").update_gap;
  solution.functions = measure_alone(solver, solution.baseline, profile != nullptr);
  solution.offer = offer_of(solution.functions, solver.units(), solver.parameter_elements());
  propose_step(solution, budget, solver, profile != nullptr);
  solve::Solution& decisions = solution.decisions;
  solution.estimate = IsolatedTally(solution.functions, decisions.assignment).total();
  solver.note(fmt::format("proposal: estimate {:.3e}", solution.estimate));
  // Measure; while outside, widen the narrowed unit of the largest isolated gap one type.
  StepMeasurements measurements(solver);
  const auto term = [&](const Assignment& a, int v) { return isolated(solution.functions[v], a[v]); };
  const solve::Widening by_isolated_gap{[&](const Assignment& a) {
                                          int widest = -1;
                                          for (size_t v = 0; v < a.size(); ++v) {
                                            const int i = static_cast<int>(v);
                                            if (a[v] != 0 && (widest < 0 || term(a, i) > term(a, widest))) widest = i;
                                          }
                                          return widest;
                                        },
                                        [](int, int from) { return from - 1; }, term, ""};
  const solve::Budget on_update{false, budget, budget, "--budget"};
  solve::measure_and_widen(solution.offer, by_isolated_gap, on_update, measurements, decisions,
                           [&solver](const std::string& line) { solver.note(line); });
  solution.measured = measurements.last;
  for (size_t v = 0; v < solution.functions.size(); ++v) solution.functions[v].chosen = kRungs[decisions.assignment[v]];
  solution.realization = solver.realization(decisions.assignment);
  solution.inside = solution.measured.update_gap <= budget;
  if (held_out) {  // reported beside the batch's gap, never solved on
    solution.held_out = measure_step(*held_out, program, solution.realization, "held out", threads);
    solution.held_out_baseline =
        measure_step(*held_out, program, exec::native::uniform_realization(RealType::f64), "held out all-f64", threads).update_gap;
    solver.note(fmt::format("measure held out: update gap {:.3e} (all-f64 {:.3e})", solution.held_out->update_gap,
                            solution.held_out_baseline));
  }
  solution.measurements = solver.measurements();
  solution.log = solver.take_log();
  if (profile) {
    solution.priced = true;
    const double windows = static_cast<double>(envelope.windows.size());
    solution.times.all_f64 = predict_step(program, envelope.entry, exec::native::uniform_realization(RealType::f64), *profile, windows).seconds;
    solution.times.all_f32 = predict_step(program, envelope.entry, exec::native::uniform_realization(RealType::f32), *profile, windows).seconds;
    solution.times.realization = predict_step(program, envelope.entry, solution.realization, *profile, windows).seconds;
  }
  return solution;
}

nlohmann::json step_solution_json(const StepSolution& s, const StepEnvelope& envelope, double budget,
                                  const std::string& envelope_path) {
  nlohmann::json out = exec::native::realization_to_json(s.realization);
  nlohmann::json functions = nlohmann::json::array();
  for (const FunctionGaps& f : s.functions) {
    functions.push_back({{"function", f.function}, {"sites", f.sites}, {"f32", f.f32}, {"bf16", f.bf16},
                         {"offered", f.offered}, {"type", exec::native::real_type_name(f.chosen)}});
    if (s.priced) {
      functions.back()["saved_f32"] = f.saved_f32;
      functions.back()["saved_bf16"] = f.saved_bf16;
    }
  }
  out["solve"] = {{"mode", "step"}, {"grain", s.grain == Grain::function ? "function" : "value"}, {"budget", budget}, {"envelope", envelope_path},
                  {"program_hash", envelope.program_hash}, {"step", envelope.step}, {"baseline", s.baseline},
                  {"estimate", s.estimate}, {"update_gap", s.measured.update_gap},
                  {"gradient_gap", s.measured.gradient_gap}, {"storage_floor", s.measured.storage_floor},
                  {"inside", s.inside}, {"measurements", s.measurements}, {"functions", functions},
                  // src/solve's moves, one value per entry of `functions` (explain reads them); the ordered
                  // JSON the entry solve's record writes, re-read as this file's JSON
                  {"moves", nlohmann::json::parse(solve::moves_json(s.offer, s.decisions).dump())}, {"log", s.log}};
  if (!s.uniform.empty()) out["solve"]["uniform"] = s.uniform;
  if (s.held_out) {
    out["solve"]["held_out"] = {{"update_gap", s.held_out->update_gap}, {"gradient_gap", s.held_out->gradient_gap},
                                {"baseline", s.held_out_baseline}, {"inside", s.held_out->update_gap <= budget}};
  } else if (!s.held_out_note.empty()) {
    out["solve"]["held_out"] = nullptr;
    out["solve"]["held_out_note"] = s.held_out_note;
  }
  if (s.priced) {
    out["solve"]["predicted_seconds"] = {{"all_f64", s.times.all_f64}, {"all_f32", s.times.all_f32},
                                         {"realization", s.times.realization}};
  }
  return out;
}

namespace {

const JsonFileKind kStepRecord{"the step solve record in", "E1259",
                               "solve the step again: presk solve PROGRAM --step STEP.json --budget ε --out R.json", 1, nullptr};

// With a profile (the record's saved_f32 and saved_bf16): the reasons time gives, or "".
std::string time_reason(const nlohmann::json& f, double budget, const std::string& uniform) {
  if (!f.contains("saved_f32") || !f["saved_f32"].is_number() || !f.contains("saved_bf16") || !f["saved_bf16"].is_number()) return "";
  const std::string type = f["type"].get<std::string>();
  const double f32 = f["f32"].get<double>(), bf16 = f["bf16"].get<double>();
  const double saved_f32 = f["saved_f32"].get<double>(), saved_bf16 = f["saved_bf16"].get<double>();
  if (!uniform.empty() && uniform == type) {
    return fmt::format("{}: all-{} is predicted faster, as it runs, than the greedy's proposal", type, type);
  }
  if (type == "f64" && f32 <= budget && saved_f32 <= 0) {
    return fmt::format("f64: f32 fits ({:.3e} alone) but is predicted slower ({:+.3g} s per step saved)", f32, saved_f32);
  }
  if (type != "bf16" && bf16 <= budget && saved_bf16 <= std::max(saved_f32, 0.0)) {
    return fmt::format("{}: bf16 fits ({:.3e} alone) but is predicted slower than {} ({:+.3g} s against {:+.3g} s saved)", type, bf16,
                       saved_f32 > 0 ? "f32" : "f64", saved_bf16, std::max(saved_f32, 0.0));
  }
  return "";
}

// The type and why, from the unit's isolated gaps and whether a measurement widened it.
std::string reason(const nlohmann::json& f, double budget, bool widened, const std::string& uniform) {
  const std::string type = f["type"].get<std::string>();
  const double f32 = f["f32"].get<double>(), bf16 = f["bf16"].get<double>();
  if (!f["offered"].get<bool>()) return "f64 (not offered: narrowing it alone moves no bit of the update)";
  if (!widened) {
    const std::string by_time = time_reason(f, budget, uniform);
    if (!by_time.empty()) return by_time;
  }
  if (type == "bf16") return fmt::format("bf16: alone in bf16 the update gap is {:.3e} ≤ {:.3g}", bf16, budget);
  if (type == "f32") {
    if (widened) return fmt::format("f32: widened from bf16, the measured step exceeding {:.3g}", budget);
    if (bf16 > budget) return fmt::format("f32: alone in bf16 {:.3e} > {:.3g}; alone in f32 {:.3e}", bf16, budget, f32);
    return fmt::format("f32: bf16 ({:.3e} alone) would take the root-sum-square estimate past {:.3g}", bf16, budget);
  }
  if (widened) return fmt::format("f64: widened, the measured step exceeding {:.3g}", budget);
  if (f32 > budget) return fmt::format("f64: alone in f32 {:.3e} > {:.3g}", f32, budget);
  return fmt::format("f64: f32 ({:.3e} alone) would take the root-sum-square estimate past {:.3g}", f32, budget);
}

// One unit of the record's `functions`, its fields checked.
void check_unit(const JsonFields& r, const nlohmann::json& f, const std::string& where) {
  r.text(f, "function", where);
  const std::string type = r.text(f, "type", where);
  if (type != "f64" && type != "f32" && type != "bf16") r.fail(where + ".type", "is neither f64, f32 nor bf16");
  r.number(f, "f32", where);
  r.number(f, "bf16", where);
  r.boolean(f, "offered", where);
}

}  // namespace

std::vector<std::string> explain_step_solution(const nlohmann::json& file, const std::string& origin) {
  const JsonFields r(origin, kStepRecord);
  const nlohmann::json& solve = r.object(file, "solve", "");
  const double budget = r.number(solve, "budget", "solve");
  const double estimate = r.number(solve, "estimate", "solve"), update_gap = r.number(solve, "update_gap", "solve");
  const nlohmann::json& functions = r.array(solve, "functions", "solve");
  for (size_t i = 0; i < functions.size(); ++i) check_unit(r, functions[i], "solve.functions[" + std::to_string(i) + "]");
  // A record written before the step solve recorded src/solve's moves has none: explained from its gaps alone.
  const std::vector<solve::RecordMove> moves =
      solve.contains("moves") ? solve::read_moves(r, solve, "solve", functions.size()) : std::vector<solve::RecordMove>{};
  const std::string grain = solve.contains("grain") && solve["grain"] == "value" ? "stored value" : "function";
  std::vector<std::string> lines = {fmt::format("{}: a training step solved by {} at {:.3g} on the update gap; "
                                                "estimate {:.3e}, measured {:.3e}",
                                                origin, grain, budget, estimate, update_gap)};
  if (solve.contains("held_out") && solve["held_out"].is_object()) {
    lines.push_back(fmt::format("  held out (the next step's batch, never solved on): update gap {:.3e}",
                                r.number(solve["held_out"], "update_gap", "solve.held_out")));
  }
  const std::string uniform = solve.contains("uniform") ? r.text(solve, "uniform", "solve") : "";
  for (size_t i = 0; i < functions.size(); ++i) {
    const nlohmann::json& f = functions[i];
    std::vector<std::string> because;  // the moves that concern it
    bool widened = false;
    for (size_t n = 0; n < moves.size(); ++n) {
      if (moves[n].value != static_cast<int>(i)) continue;
      widened |= moves[n].kind == "widen";
      because.push_back(solve::move_reason(moves[n], static_cast<int>(n + 1), budget, budget));
    }
    std::string line = fmt::format("  {}: {}", f["function"].get<std::string>(), reason(f, budget, widened, uniform));
    for (const std::string& b : because) line += "; " + b;
    lines.push_back(line);
  }
  return lines;
}

}  // namespace presk::step
