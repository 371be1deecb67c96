// The solve's command-line options and its run (solve_setup.h).
#include "cli/solve_setup.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <iostream>

#include "cli/phase_memory.h"
#include "ir/program_hash.h"
#include "precision/first_order.h"
#include "solve/quant_pass.h"
#include "profile/profile.h"
#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "support/json_reader.h"
#include "support/sha256.h"

namespace presk::cli {
namespace {

// A budget as typed: a finite number > 0 (E1108).
double parse_epsilon(const std::string& text, const char* option) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value <= 0) {
    user_error("E1108").hint("a budget is a number above 0, e.g. --budget 1e-3")
        << option << " `" << text.substr(0, 40) << "` is not a number above 0";
  }
  return value;
}

}  // namespace

// --budget, --budget-abs, or the entry's own clause; the absolute threshold from the envelope.
solve::Budget budget_of(const SolveCommandOptions& options, const ir::Function& entry,
                        const precision::Envelope& envelope) {
  if (!options.budget.empty() && !options.budget_abs.empty()) {
    user_error("E1107").hint("give one: --budget ε (relative to the output's largest magnitude) or --budget-abs ε")
        << "--budget and --budget-abs were both given";
  }
  solve::Budget budget;
  if (!options.budget_abs.empty()) {
    budget = {false, parse_epsilon(options.budget_abs, "--budget-abs"), 0, "--budget-abs"};
  } else if (!options.budget.empty()) {
    budget = {true, parse_epsilon(options.budget, "--budget"), 0, "--budget"};
  } else {
    for (const auto& [key, value] : entry.budget) {
      if (key == "rel_error") budget = {true, parse_epsilon(value, "rel_error"), 0, "the entry's precision clause"};
      if (key == "abs_error" && budget.epsilon == 0) {
        budget = {false, parse_epsilon(value, "abs_error"), 0, "the entry's precision clause"};
      }
    }
    if (budget.epsilon == 0) {
      user_error("E1100").hint("pass --budget ε or --budget-abs ε, or give the entry `precision = budget(rel_error = ε)`")
          << "no budget: entry `" << entry.name << "` has no precision clause and none was given";
    }
  }
  if (budget.relative && !(envelope.output_max_abs > 0)) {
    user_error("E1109").hint("use --budget-abs ε: a relative budget needs an output that is not all zero")
        << "the outputs of `" << entry.name << "` in the envelope have largest magnitude "
        << envelope.output_max_abs << ", so a relative budget is zero";
  }
  budget.absolute = budget.relative ? budget.epsilon * envelope.output_max_abs : budget.epsilon;
  return budget;
}

namespace {

solve::SolveOptions solve_options(const SolveCommandOptions& options) {
  if (!(options.margin > 0) || !std::isfinite(options.margin)) {
    user_error("E1113").hint("--margin k is a number above 0 (2.5 by default)") << "--margin " << options.margin;
  }
  if (!(options.min_gain >= 0) || !std::isfinite(options.min_gain)) {
    user_error("E1113").hint("--min-gain θ is a number ≥ 0 (0 turns rule 2 off)") << "--min-gain " << options.min_gain;
  }
  solve::SolveOptions out;
  out.menu = solve::parse_menu(options.menu);
  if (options.quant && out.menu.has_integers()) {
    user_error("E1121").hint("--quant is the two-pass solver over a float menu; the one menu is --menu f64,f32,bf16,int8,int4")
        << "--quant with integer rungs in --menu " << options.menu;
  }
  out.min_gain = options.min_gain;
  out.estimate.unit_rounding = options.rounding == "unit";
  out.estimate.form = options.estimate == "rss" ? solve::EstimateForm::rss : solve::EstimateForm::sum;
  out.margin = options.margin;
  out.narrow = options.narrow == "measured" ? solve::NarrowMode::measured
               : options.narrow == "heldout" ? solve::NarrowMode::heldout
                                             : solve::NarrowMode::none;
  out.exhaustive = options.exhaustive;
  out.quant = options.quant;
  out.scheme = options.scheme == "pow2" ? exec::native::QuantScheme::pow2 : exec::native::QuantScheme::absmax;
  if (!options.profile.empty()) {
    if (options.exhaustive) {
      user_error("E1205").hint("leave out --exhaustive: with --profile the greedy minimises predicted time")
          << "--exhaustive and --profile were both given";
    }
    out.profile = std::make_shared<const profile::Profile>(profile::read_profile(options.profile));
  }
  return out;
}

}  // namespace

// The held-out samples: those after the envelope's in its data file, as many as asked (or as
// the envelope's) and as the file holds.
solve::SampleSet held_out_set(const PreparedRun& prepared, int64_t wanted) {
  solve::SampleSet set;
  if (!prepared.data || wanted <= 0) return set;
  const int64_t first = prepared.first + prepared.count;
  set.count = std::max<int64_t>(0, std::min(wanted, prepared.data->samples() - first));
  const PreparedRun* run = &prepared;
  set.inputs = [run, first](int64_t k) { return run->data->sample(first + k); };
  return set;
}

namespace {

// --quant: the integer pass on the float solve's solution (solve/quant_pass.h), then the held-out
// measurement of what it leaves.
void quantize_pass(const GlobalOptions& global, const solve::SampleSet& in_sample, precision::Sweep sweep,
                   solve::Measurer& measurer, const solve::Progress& progress, SolveRun& run) {
  const PreparedRun& prepared = run.prepared;
  const bool binary64 = sweep == precision::Sweep::f64;
  if (progress) {
    progress(fmt::format("--quant: the {} cotangents on {} sample(s)", binary64 ? "native f64" : "exact", in_sample.count));
  }
  run.offer = solve::with_quant_rungs(run.offer, prepared.program, prepared.parameters,
                                      run.options.scheme);
  // Each sample's terms as its cotangents arrive, the largest over the samples kept (what
  // quant_terms takes over them all): one sample's cotangents are held at a time.
  solve::QuantTerms terms;
  bool any = false;
  const precision::GradientSink each = [&](std::map<std::string, std::vector<double>>&& sample) {
    precision::ParameterGradients one;
    one.samples.push_back(std::move(sample));
    for (const auto& [key, term] : solve::quant_terms(run.offer, prepared.program, prepared.parameters, one)) {
      terms[key] = any ? std::max(terms[key], term) : term;
    }
    any = true;
  };
  if (binary64) {
    precision::binary64_parameter_gradients(prepared.program, *prepared.entry, prepared.parameters, in_sample.count,
                                            in_sample.inputs, global.threads, each);
  } else {
    precision::exact_parameter_gradients(prepared.program, *prepared.entry, prepared.parameters, in_sample.count,
                                         in_sample.inputs, run.envelope.bits, global.threads, each);
  }
  if (!any) terms = solve::quant_terms(run.offer, prepared.program, prepared.parameters, {});
  solve::Solution& solution = run.solution;
  const solve::Assignment floats = solution.assignment;
  solve::quant_pass(run.offer, terms, run.budget, measurer, solution, progress);
  if (solution.assignment != floats && measurer.held_out_count() > 0) {
    solution.held_out = solve::measure_recorded(run.offer, solution.assignment, measurer, true, run.budget.absolute, solution);
    if (progress) progress(fmt::format("--quant held out: gap {:.3e}", solution.held_out->absolute));
  }
  // The floats' estimate in their units; the integers' √Σ(g·δ)² is solution.quant_estimate.
  solution.estimate = solve::float_estimate(run.offer, solution.assignment, run.options.estimate);
}

// --certify N (issue #36, item 3): the reference's own distance to the denotation, proven by Arb
// balls at the envelope's bits (or more, up to --certify-bits, where that does not certify the
// gap: proof::certify_gap) on the first N of the in-sample exact outputs the solution was
// measured against (a sample of them: a ball run costs about 1.2–1.6× an MPFR run), in the record.
void certify_solve(const SolveCommandOptions& options, const GlobalOptions& global, const solve::SampleSet& in_sample,
                   const solve::Measurer& measurer, const solve::Progress& progress, SolveRun& run) {
  const int64_t count = std::min(options.certify, in_sample.count);
  if (count == 0) return;
  const PreparedRun& prepared = run.prepared;
  run.reference = proof::certify_gap(prepared.program, *prepared.entry, prepared.parameters, count, in_sample.inputs,
                                     measurer.exact_in_sample(), global.threads, run.solution.gap.absolute,
                                     std::max<long>(options.certify_bits, run.envelope.bits), progress);
  // No seconds here: the realization file is the same bytes on every run.
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const proof::BallRun& r : run.reference->runs) {
    runs.push_back({{"bits", r.bits}, {"radius", json_number<nlohmann::ordered_json>(r.radius)}});
    if (!r.wrapped_at.empty()) runs.back()["wrapped_at"] = r.wrapped_at;
  }
  run.file["solve"]["reference"] = {{"radius", json_number<nlohmann::ordered_json>(run.reference->radius)},
                                    {"samples_certified", count},
                                    {"samples", in_sample.count},
                                    {"bits", run.reference->bits},
                                    {"reference_bits", run.envelope.bits},
                                    {"runs", runs},
                                    {"factor", proof::kCertifiedFactor},
                                    {"certified", proof::certifies(*run.reference, run.solution.gap.absolute)}};
}

// The refusals that need the offer or the samples, checked before the exact reference runs:
// --exhaustive too large (E1106), --quant on an entry that is not a loss (E1120), --narrow
// heldout with no held-out sample to undo on (E1122).
void check_before_work(const SolveRun& run, const solve::SampleSet& held_out) {
  if (run.options.exhaustive) solve::check_exhaustive(run.offer);
  if (run.options.quant) precision::require_scalar_entry(*run.prepared.entry);
  if (run.options.narrow == solve::NarrowMode::heldout && held_out.count == 0) {
    user_error("E1122").hint("calibrate on a data file (--data) that holds samples after the envelope's, keep --heldout "
                             "above 0, or use --narrow measured")
        << "--narrow heldout needs held-out samples, and there are none: "
        << (!run.prepared.data ? "the envelope's samples were synthesized (no data file)"
            : run.held_out_wanted == 0 ? "--heldout 0"
                                       : "the data file holds no sample after the envelope's");
  }
}

// Why nothing could be ranked: no value has a known sensitivity (the entry's result is a tuple or
// not real, so it has no vjp), or most offered values have sensitivity 0 (a zero-initialised
// head: every value before it is 0), which the estimate charges nothing.
std::vector<std::string> nothing_ranked(const solve::Offer& offer, const ir::Function& entry) {
  int known = 0, offered = 0, zero = 0;
  for (const solve::Value& value : offer.values) {
    known += value.sensitivity.has_value();
    offered += value.offered();
    zero += value.offered() && *value.sensitivity == 0;
  }
  std::string result;
  for (const ir::ValueRef& r : entry.results) result += (result.empty() ? "" : ", ") + ir::type_to_string(entry.type_of(r));
  if (!offer.values.empty() && known == 0) {
    return {fmt::format("nothing was ranked: the reverse sweep reached no value of `{}` (it returns {}; a tuple or an "
                        "integer result has no vjp), so every sensitivity is unknown and every value stays f64. Solve an "
                        "entry with one real result (a loss, or the logits)", entry.name, result.empty() ? "nothing" : result)};
  }
  if (offered > 0 && 2 * zero > offered) {
    return {fmt::format("{} of the {} offered values of `{}` have sensitivity 0 (the result does not move with them, as "
                        "behind a zero-initialised head): the estimate charges them nothing, so the proposal narrows them "
                        "for free and the measurement alone decides. Calibrate on trained weights", zero, offered, entry.name)};
  }
  return {};
}

}  // namespace

void add_solve_options(CLI::App& command, SolveCommandOptions& options, GlobalOptions& global) {
  command.add_option("program", options.run.program, "The .psk program the envelope was measured on")->required();
  command.add_option("--precision", options.run.envelope, "The envelope (presk calibrate --precision)")->required();
  command.add_option("--entry", options.run.entry, "The entry (default: the envelope's; must be it)");
  add_binding_options(command, options.run.bindings);
  command.add_option("--weights", options.run.weights, "Parameters (default: the envelope's; must be its bytes)");
  command.add_option("--data", options.run.data, "The data file (default: the envelope's); held-out samples follow the envelope's");
  command.add_option("--budget", options.budget, "Budget on max |native − exact|, relative to the output's largest magnitude");
  command.add_option("--budget-abs", options.budget_abs, "Budget on max |native − exact|, absolute");
  command.add_option("--menu", options.menu, "The rungs offered, widest first: f64,f32,bf16 and, for matrices, int8,int4")->capture_default_str();
  command.add_option("--rounding", options.rounding, "A value's rounding term: the envelope's measured max|fl(x) − x|, or u·max|x|")
      ->check(CLI::IsMember({"measured", "unit"}))->capture_default_str();
  command.add_option("--estimate", options.estimate, "Sum of the terms, or their root-sum-square aimed at budget/margin")
      ->check(CLI::IsMember({"sum", "rss"}))->capture_default_str();
  command.add_option("--narrow", options.narrow, "After the measurement passes: narrow by measurement (measured), then undo on held-out samples (heldout)")
      ->check(CLI::IsMember({"none", "measured", "heldout"}))->capture_default_str();
  command.add_option("--margin", options.margin, "k: --estimate rss aims at budget/k, --narrow keeps steps inside budget/k")->capture_default_str();
  command.add_option("--heldout", options.heldout, "Held-out samples after the envelope's (default: as many as the envelope's; 0: none)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  command.add_option("--min-gain", options.min_gain, "θ of rule 2: offer a value only if its first narrowing saves θ·B bytes (0: off)")
      ->capture_default_str();
  command.add_flag("--exhaustive", options.exhaustive, "Search every assignment for the estimate's optimum (small programs)");
  command.add_flag("--quant", options.quant, "After the float solve, store matrices as int8/int4 (priced by √Σ(g·δ)², accepted by measurement)");
  command.add_option("--scheme", options.scheme, "--quant's scales: absmax, or pow2 (powers of two)")
      ->check(CLI::IsMember({"absmax", "pow2"}))->capture_default_str();
  command.add_option("--profile", options.profile,
                     "Price by predicted time on this machine (a profile from presk bench --calibrate), not by bytes; "
                     "--step: rank the narrowings by predicted seconds saved per unit of isolated gap, none predicted slower");
  command.add_option("--sweep", options.sweep,
                     "What computes --quant's cotangents: exact (the reference at the envelope's bits) or f64 (the "
                     "native executor in binary64). The sweep ranks, the measurement decides; the sites' ranking "
                     "comes from the envelope (calibrate --sweep)")
      ->check(CLI::IsMember({"exact", "f64"}))->capture_default_str();
  command.add_flag("--no-exact-cache", options.no_exact_cache,
                   "Run the exact reference even when ENVELOPE.exact.safetensors holds its outputs, and write none");
  command.add_option("--certify", options.certify,
                     "Prove the exact reference's own distance to the denotation (δ_p) with Arb balls at the "
                     "envelope's bits on the first N samples, and print it beside the gap (0: off)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))->capture_default_str();
  add_certify_bits_option(command, options.certify_bits);
  command.add_flag("--quiet", options.quiet, "No progress on stderr");
  add_threads_option(command, global);
  add_json_option(command, global);
}

void print_predicted(const SolveRun& run) {
  if (!run.predicted) return;
  const solve::TimePrediction& p = *run.predicted;
  auto ms = [](double s) { return fmt::format("{:.3f} ms", 1e3 * s); };
  auto ratio = [&](double s) { return s > 0 ? fmt::format("{:.2f}×", p.all_f64 / s) : std::string("—"); };
  std::cout << fmt::format("predicted   all-f64 {}, this realization {} ({} faster), all-f32 {} ({}), floor {} ({}) "
                           "(profile of {}, {} thread{}; a prediction, not a measurement)\n",
                           ms(p.all_f64), ms(p.realization), ratio(p.realization), ms(p.all_f32), ratio(p.all_f32),
                           ms(p.floor), ratio(p.floor), run.options.profile->cpu, run.options.profile->threads,
                           run.options.profile->threads == 1 ? "" : "s");
  if (p.floor > p.realization) {
    std::cout << fmt::format("            the floor (every offered value narrowed) is predicted {:.1f} % slower than this "
                             "realization: narrowing everything would cost time, not save it\n",
                             100 * (p.floor / p.realization - 1));
  }
}

void check_solve_outputs(const SolveCommandOptions& options) {
  if (options.out.empty()) return;
  check_output_files({{"--out", options.out}}, {{"the program", options.run.program},
                                                {"--precision", options.run.envelope},
                                                {"--weights", options.run.weights},
                                                {"--data", options.run.data}});
}

SolveRun run_solve(const SolveCommandOptions& options, GlobalOptions& global) {
  const auto start = std::chrono::steady_clock::now();
  SolveRun run;
  run.envelope = precision::read_envelope(options.run.envelope);
  run.options = solve_options(options);
  EnvelopeRunOptions envelope_run = options.run;
  const precision::Sweep sweep = precision::parse_sweep(options.sweep);
  envelope_run.phases = [&options, &global, sweep, bits = run.envelope.bits](const PreparedRun& prepared) {
    return solve_phases(prepared, options.heldout >= 0 ? options.heldout : prepared.count, options.quant, sweep, bits,
                        global.threads);
  };
  run.prepared = prepare_envelope_run(envelope_run, run.envelope, global);
  run.budget = budget_of(options, *run.prepared.entry, run.envelope);
  run.offer = solve::make_offer(run.prepared.program, *run.prepared.entry, run.envelope, run.options.menu,
                                run.options.min_gain, &run.prepared.parameters);
  const solve::Progress progress = options.quiet ? solve::Progress{}
                                                 : solve::Progress([](const std::string& line) { std::cerr << "solve: " << line << std::endl; });
  const PreparedRun& prepared = run.prepared;
  const uint64_t seed = global.seed;
  solve::SampleSet in_sample{prepared.count, [&prepared, seed](int64_t k) { return prepared.inputs(k, seed); }};
  run.held_out_wanted = options.heldout >= 0 ? options.heldout : prepared.count;
  solve::SampleSet held_out = held_out_set(prepared, run.held_out_wanted);
  check_before_work(run, held_out);
  run.warnings = nothing_ranked(run.offer, *prepared.entry);
  for (const std::string& warning : run.warnings) std::cerr << "presk solve: warning: " << warning << std::endl;
  std::optional<precision::ExactCache> cache;
  if (!options.no_exact_cache) {
    cache = precision::ExactCache{precision::exact_cache_path(options.run.envelope),
                                  exact_cache_key(options.run, run.envelope, prepared, held_out.count),
                                  [](const std::string& line) { std::cerr << "solve: " << line << std::endl; }};
  }
  solve::Measurer measurer(prepared.program, *prepared.entry, prepared.parameters, in_sample, std::move(held_out),
                           run.envelope.bits, global.threads, progress, cache ? &*cache : nullptr);
  run.exact_from_cache = measurer.exact_from_cache();
  run.solution = solve::solve(run.offer, run.budget, run.options, measurer, progress, &run.times);
  if (options.quant) quantize_pass(global, in_sample, sweep, measurer, progress, run);
  run.exact_seconds = measurer.exact_seconds();
  run.native_seconds = measurer.native_seconds();
  run.native_runs = measurer.native_runs();
  const solve::RecordContext context{options.run.program, ir::program_hash(prepared.program), prepared.entry->name,
                                     options.run.envelope, sha256_file(options.run.envelope)};
  run.file = solve::realization_file(run.offer, run.solution, run.budget, run.options, context);
  if (!run.warnings.empty()) run.file["solve"]["warnings"] = run.warnings;
  certify_solve(options, global, in_sample, measurer, progress, run);
  run.file["solve"]["program_sha256"] = sha256_file(options.run.program);  // presk report shows the text it solved
  if (options.sweep != "exact") run.file["solve"]["sweep"] = options.sweep;
  if (run.options.profile) {
    const solve::Pricer pricer(run.offer, *run.options.profile);
    run.predicted = solve::predict_times(run.offer, pricer, run.solution.assignment);
    run.file["solve"]["predicted"] = {{"profile", options.profile}, {"cpu", run.options.profile->cpu},
                                      {"threads", run.options.profile->threads},
                                      {"all_f64_seconds", run.predicted->all_f64}, {"all_f32_seconds", run.predicted->all_f32},
                                      {"realization_seconds", run.predicted->realization},
                                      {"floor_seconds", run.predicted->floor}};
  }
  run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

}  // namespace presk::cli
