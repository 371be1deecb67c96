// The step solved by function (solve_step.h).
#include "step/solve_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "ir/sites.h"
#include "step/step_price.h"
#include "support/diagnostics.h"

namespace presk::step {
namespace {

using Assignment = std::map<std::string, RealType>;  // function → type; absent: f64

// The typable sites of the training program with its vjps, by function, or one by one (those
// of more than one element) at the value grain.
std::map<std::string, std::vector<std::string>> units_of(const ir::Program& program, Grain grain) {
  std::map<std::string, std::vector<std::string>> out;
  for (const ir::Site& site : ir::site_table(program)) {
    const ir::Function* function = program.find_function(site.function);
    if (!function || !exec::native::is_typable(function->lets[site.let_index])) continue;
    if (grain == Grain::function) out[site.function].push_back(site.name);
    else if (site.element_count > 1) out[site.name].push_back(site.name);
  }
  return out;
}

RealType wider(RealType type) { return type == RealType::bf16 ? RealType::f32 : RealType::f64; }

class Solver {
 public:
  Solver(const StepEnvelope& envelope, const ir::Program& program, int threads,
         const std::function<void(const std::string&)>& progress, Grain grain, const profile::Profile* profile)
      : envelope_(envelope), program_(program), threads_(threads), progress_(progress),
        recompute_(train::make_gradient_program(program, envelope.entry, train::parameter_layout(program), false)) {
    sites_ = units_of(recompute_.program, grain);
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

  exec::native::Realization realization(const Assignment& assignment) const {
    auto optimizer = assignment.find(kOptimizerFunction);
    const RealType master = optimizer == assignment.end() ? RealType::f64 : optimizer->second;
    exec::native::Realization r = exec::native::uniform_realization(master);
    r.origin = "solve --step";
    for (const auto& [function, sites] : sites_) {
      auto found = assignment.find(function);
      const RealType type = found == assignment.end() ? RealType::f64 : found->second;
      if (type == master) continue;
      for (const std::string& site : sites) r.sites[site] = type;
    }
    return r;
  }

  double measure(const Assignment& assignment, const std::string& what, StepMeasures* out = nullptr) {
    StepMeasures m = measure_step(envelope_, program_, realization(assignment), what, threads_);
    ++measurements_;
    note(fmt::format("measure {}: update gap {:.3e}", what, m.update_gap));
    if (out) *out = m;
    return m.update_gap;
  }

  void note(const std::string& line) {
    log_.push_back(line);
    if (progress_) progress_(line);
  }

  const std::map<std::string, std::vector<std::string>>& sites() const { return sites_; }
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
  std::map<std::string, std::vector<std::string>> sites_;
  int measurements_ = 0;
  std::vector<std::string> log_;
};

double root_sum_square(const std::vector<FunctionGaps>& functions) {
  double sum = 0;
  for (const FunctionGaps& f : functions) {
    if (f.chosen == RealType::f32) sum += f.f32 * f.f32;
    if (f.chosen == RealType::bf16) sum += f.bf16 * f.bf16;
  }
  return std::sqrt(sum);
}

double isolated(const FunctionGaps& f, RealType type) { return type == RealType::bf16 ? f.bf16 : type == RealType::f32 ? f.f32 : 0; }

// From all-f64: each function's narrowest type whose isolated gap fits, smallest gaps first,
// while the root-sum-square stays inside the budget.
void propose(std::vector<FunctionGaps>& functions, double budget) {
  std::vector<FunctionGaps*> order;
  for (FunctionGaps& f : functions) {
    if (f.offered) order.push_back(&f);
  }
  auto best = [budget](const FunctionGaps& f) { return f.bf16 <= budget ? RealType::bf16 : f.f32 <= budget ? RealType::f32 : RealType::f64; };
  std::stable_sort(order.begin(), order.end(), [&](const FunctionGaps* a, const FunctionGaps* b) {
    return isolated(*a, best(*a)) < isolated(*b, best(*b));
  });
  for (FunctionGaps* f : order) {
    for (RealType type = best(*f); type != RealType::f64; type = wider(type)) {
      f->chosen = type;
      if (root_sum_square(functions) <= budget) break;
      f->chosen = RealType::f64;
    }
  }
}

Assignment assignment_of(const std::vector<FunctionGaps>& functions) {
  Assignment out;
  for (const FunctionGaps& f : functions) {
    if (f.chosen != RealType::f64) out[f.function] = f.chosen;
  }
  return out;
}

double saved(const FunctionGaps& f, RealType type) { return type == RealType::bf16 ? f.saved_bf16 : type == RealType::f32 ? f.saved_f32 : 0; }

// With a profile: each function's type of the larger predicted saving among those whose isolated
// gap fits (bf16 only where it is predicted faster than f32; none predicted slower than f64).
RealType fastest(const FunctionGaps& f, double budget) {
  const bool f32 = f.f32 <= budget && f.saved_f32 > 0;
  const bool bf16 = f.bf16 <= budget && f.saved_bf16 > 0 && f.saved_bf16 > f.saved_f32;
  return bf16 ? RealType::bf16 : f32 ? RealType::f32 : RealType::f64;
}

// From all-f64, by predicted seconds saved per unit of isolated gap (a gap of 0 first), each
// function at its fastest fitting type, else f32 where that is predicted faster than f64, while
// the root-sum-square stays inside the budget; then, until nothing changes, widens one type any
// narrowing the profile predicts slower where it now stands (its neighbours' types changed).
void propose_by_time(std::vector<FunctionGaps>& functions, double budget,
                     const std::function<double(const Assignment&)>& seconds) {
  std::vector<FunctionGaps*> order;
  for (FunctionGaps& f : functions) {
    if (f.offered && fastest(f, budget) != RealType::f64) order.push_back(&f);
  }
  auto rate = [budget](const FunctionGaps* f) {
    const RealType type = fastest(*f, budget);
    const double gap = isolated(*f, type);
    return gap > 0 ? saved(*f, type) / gap : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(order.begin(), order.end(), [&](const FunctionGaps* a, const FunctionGaps* b) { return rate(a) > rate(b); });
  for (FunctionGaps* f : order) {
    for (RealType type = fastest(*f, budget); type != RealType::f64; type = wider(type)) {
      if (saved(*f, type) <= 0) continue;
      f->chosen = type;
      if (root_sum_square(functions) <= budget) break;
      f->chosen = RealType::f64;
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (FunctionGaps& f : functions) {
      if (f.chosen == RealType::f64) continue;
      const double now = seconds(assignment_of(functions));
      const RealType narrow = f.chosen;
      f.chosen = wider(narrow);
      if (seconds(assignment_of(functions)) < now) {
        changed = true;
      } else {
        f.chosen = narrow;
      }
    }
  }
}

// The greedy's proposal against the uniform realizations inside the estimate (all-f64, all-f32,
// all-bf16: the optimizer's master type too), as measure_step runs each: a uniform one stores, a mixed one
// recomputes the forward pass in the reverse one; keeps the one predicted fastest.
void keep_fastest(std::vector<FunctionGaps>& functions, double budget, Solver& solver) {
  const std::vector<FunctionGaps> proposal = functions;
  std::vector<FunctionGaps> best = proposal;
  double fastest_seconds = solver.seconds_as_run(assignment_of(proposal));
  for (RealType type : {RealType::f64, RealType::f32, RealType::bf16}) {
    std::vector<FunctionGaps> uniform = proposal;
    for (FunctionGaps& f : uniform) f.chosen = type;  // every function, those that move no bit too: uniform
    const double seconds = solver.seconds_as_run(assignment_of(uniform));
    if (root_sum_square(uniform) <= budget && seconds < fastest_seconds) {
      best = uniform;
      fastest_seconds = seconds;
      solver.note(fmt::format("all-{} predicted faster than the greedy's proposal as run ({:.4g} s < {:.4g} s)",
                              exec::native::real_type_name(type), seconds, solver.seconds_as_run(assignment_of(proposal))));
    }
  }
  functions = best;
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
  solution.baseline = solver.measure({}, "all-f64");
  std::vector<std::string> names;
  for (const auto& [function, sites] : solver.sites()) names.push_back(function);
  names.push_back(kOptimizerFunction);
  for (const std::string& name : names) {
    FunctionGaps f;
    f.function = name;
    auto found = solver.sites().find(name);
    f.sites = found == solver.sites().end() ? 0 : static_cast<int>(found->second.size());
    f.f32 = solver.measure({{name, RealType::f32}}, name + " f32");
    f.bf16 = solver.measure({{name, RealType::bf16}}, name + " bf16");
    f.offered = !(f.f32 == solution.baseline && f.bf16 == solution.baseline);
    if (profile) {
      const double all_f64 = solver.seconds({});
      f.saved_f32 = all_f64 - solver.seconds({{name, RealType::f32}});
      f.saved_bf16 = all_f64 - solver.seconds({{name, RealType::bf16}});
    }
    solution.functions.push_back(f);
  }
  if (profile) {
    propose_by_time(solution.functions, budget, [&solver](const Assignment& a) { return solver.seconds(a); });
    keep_fastest(solution.functions, budget, solver);
  } else {
    propose(solution.functions, budget);
  }
  solution.estimate = root_sum_square(solution.functions);
  solver.note(fmt::format("proposal: estimate {:.3e}", solution.estimate));
  // Measure; while outside, widen the narrowed function of the largest isolated gap one type.
  for (;;) {
    const double gap = solver.measure(assignment_of(solution.functions), "proposal", &solution.measured);
    if (gap <= budget) break;
    FunctionGaps* widest = nullptr;
    for (FunctionGaps& f : solution.functions) {
      if (f.chosen != RealType::f64 && (!widest || isolated(f, f.chosen) > isolated(*widest, widest->chosen))) widest = &f;
    }
    if (!widest) break;  // all-f64 and still outside
    widest->chosen = wider(widest->chosen);
    solver.note(fmt::format("widen {} to {}", widest->function, exec::native::real_type_name(widest->chosen)));
  }
  solution.realization = solver.realization(assignment_of(solution.functions));
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
                  {"inside", s.inside}, {"measurements", s.measurements}, {"functions", functions}, {"log", s.log}};
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

[[noreturn]] void malformed(const std::string& origin, const std::string& field) {
  user_error("E1259").hint("solve the step again: presk solve PROGRAM --step STEP.json --budget ε --out R.json")
      << origin << ": the step solve record's field `" << field << "` is missing or of the wrong kind";
}

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

}  // namespace

std::vector<std::string> explain_step_solution(const nlohmann::json& file, const std::string& origin) {
  const nlohmann::json& solve = file["solve"];
  for (const char* field : {"budget", "update_gap", "estimate"}) {
    if (!solve.contains(field) || !solve[field].is_number()) malformed(origin, std::string("solve.") + field);
  }
  if (!solve.contains("functions") || !solve["functions"].is_array()) malformed(origin, "solve.functions");
  if (!solve.contains("log") || !solve["log"].is_array()) malformed(origin, "solve.log");
  const double budget = solve["budget"].get<double>();
  const std::string grain = solve.contains("grain") && solve["grain"] == "value" ? "stored value" : "function";
  std::vector<std::string> lines = {fmt::format("{}: a training step solved by {} at {:.3g} on the update gap; "
                                                "estimate {:.3e}, measured {:.3e}",
                                                origin, grain, budget, solve["estimate"].get<double>(),
                                                solve["update_gap"].get<double>())};
  if (solve.contains("held_out") && solve["held_out"].is_object() && solve["held_out"].contains("update_gap") &&
      solve["held_out"]["update_gap"].is_number()) {
    lines.push_back(fmt::format("  held out (the next step's batch, never solved on): update gap {:.3e}",
                                solve["held_out"]["update_gap"].get<double>()));
  }
  std::string uniform;  // with a profile: the uniform type kept over the greedy's proposal, if one was
  for (const nlohmann::json& line : solve["log"]) {
    const std::string text = line.is_string() ? line.get<std::string>() : "";
    if (text.rfind("all-", 0) == 0 && text.find(" predicted faster than the greedy's proposal") != std::string::npos) {
      uniform = text.substr(4, text.find(' ') - 4);
    }
  }
  for (const nlohmann::json& f : solve["functions"]) {
    const bool fields = f.is_object() && f.contains("function") && f["function"].is_string() && f.contains("type") &&
                        f["type"].is_string() && f.contains("f32") && f["f32"].is_number() && f.contains("bf16") &&
                        f["bf16"].is_number() && f.contains("offered") && f["offered"].is_boolean();
    if (!fields) malformed(origin, "solve.functions[]");
    const std::string name = f["function"].get<std::string>();
    bool widened = false;
    for (const nlohmann::json& line : solve["log"]) widened |= line.is_string() && line.get<std::string>().rfind("widen " + name + " to ", 0) == 0;
    lines.push_back(fmt::format("  {}: {}", name, reason(f, budget, widened, uniform)));
  }
  return lines;
}

}  // namespace presk::step
