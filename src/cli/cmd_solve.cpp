// `presk solve PROGRAM --precision ENVELOPE (--budget ε | --budget-abs ε) --out R.json`: a budget in,
// a realization out (src/solve, docs/precision.md "solve"). Writes the realization (with its
// record, the `solve` field) atomically and prints the report; progress on stderr.
#include <fmt/format.h>

#include <iostream>
#include <map>

#include "cli/calibrate_step.h"
#include "cli/command.h"
#include "cli/solve_setup.h"
#include "report/report.h"
#include "support/atomic_file.h"

namespace presk::cli {
namespace {

using solve::Offer;
using solve::Solution;

std::string bytes_text(double bytes) { return fmt::format("{:.3e}", bytes); }

// "23 f32, 4 bf16, 18 f64" for the values of `kind`, narrowest rung first.
std::string types_text(const Offer& offer, const Solution& solution, solve::ValueKind kind, double* at_rest) {
  std::map<int, int> count;  // by menu rung
  double bytes = 0;
  for (size_t v = 0; v < offer.values.size(); ++v) {
    if (offer.values[v].kind != kind) continue;
    ++count[offer.values[v].ladder[solution.assignment[v]].rung];
    bytes += offer.bytes(static_cast<int>(v), solution.assignment[v]);
  }
  if (at_rest) *at_rest = bytes;
  std::string text;
  for (auto it = count.rbegin(); it != count.rend(); ++it) {
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", it->second, offer.menu.rungs[it->first].name);
  }
  return text.empty() ? "none" : text;
}

// The step of v's ladder at the menu's narrowest float rung (integer rungs follow the floats).
int narrowest_float(const Offer& offer, int v) {
  int step = 0;
  for (size_t s = 0; s < offer.values[v].ladder.size(); ++s) {
    if (!offer.rung(v, static_cast<int>(s)).integer()) step = static_cast<int>(s);
  }
  return step;
}

std::string narrowest_float_name(const Offer& offer) {
  std::string name = "f64";
  for (const solve::Rung& rung : offer.menu.rungs) {
    if (!rung.integer()) name = rung.name;
  }
  return name;
}

// The rules' line: what each left out, and at most what they forgo (their saving at the menu's
// narrowest float rung: an integer rung's saving is --quant's or the one menu's, priced apart).
void print_rules(const Offer& offer, double realization_bytes) {
  std::map<solve::Exclusion, std::vector<std::string>> left;
  double forgone = 0;
  for (size_t v = 0; v < offer.values.size(); ++v) {
    const solve::Value& value = offer.values[v];
    if (value.offered()) continue;
    std::string name = value.key;
    if (value.exclusion == solve::Exclusion::min_gain) name += fmt::format(" ({:.3g} B)", value.first_saving);
    left[value.exclusion].push_back(name);
    if (value.exclusion != solve::Exclusion::unknown_sensitivity) {
      forgone += offer.bytes(static_cast<int>(v), 0) - value.ladder[narrowest_float(offer, static_cast<int>(v))].bytes;
    }
  }
  auto list = [](const std::vector<std::string>& names) {
    std::string text;
    for (size_t i = 0; i < names.size() && i < 6; ++i) text += (i ? ", " : "") + names[i];
    if (names.size() > 6) text += fmt::format(", … ({} more)", names.size() - 6);
    return text.empty() ? std::string("none") : text;
  };
  std::cout << fmt::format("rules       rule 1 (one element): {}\n", list(left[solve::Exclusion::one_element]));
  std::cout << fmt::format("            rule 2 (first step saves < θ·B = {:.3g} B): {}\n",
                           offer.min_gain * offer.all_f64_bytes, list(left[solve::Exclusion::min_gain]));
  std::cout << fmt::format("            unknown sensitivity (never taken as 0): {}\n",
                           list(left[solve::Exclusion::unknown_sensitivity]));
  std::cout << fmt::format("            rules 1 and 2 forgo at most {:.3g} B, their {} saving ({:.2f} % of the "
                           "realization's traffic)\n",
                           forgone, narrowest_float_name(offer), realization_bytes > 0 ? 100 * forgone / realization_bytes : 0.0);
}

void print_gaps(const SolveRun& run) {
  const Solution& s = run.solution;
  std::cout << fmt::format("measured    {:.3e} in sample ({} samples, relative {:.3e}): {}\n", s.gap.absolute,
                           run.prepared.count, s.gap.relative(), s.inside ? "inside the budget" : "OUTSIDE the budget");
  if (s.held_out) {
    std::cout << fmt::format("            {:.3e} held out ({} samples after the envelope's, relative {:.3e}){}\n",
                             s.held_out->absolute, s.held_out_samples, s.held_out->relative(),
                             s.held_out->absolute > run.budget.absolute ? ": ABOVE the budget" : "");
    if (s.held_out_samples < run.held_out_wanted) {
      std::cout << fmt::format("            (the data file holds {} of the {} held-out samples asked for)\n",
                               s.held_out_samples, run.held_out_wanted);
    }
  } else {
    std::cout << "            nothing was held out"
              << (run.envelope.data.empty() ? " (the envelope's samples were synthesized: no data file)\n"
                                            : " (the data file has no samples after the envelope's, or --heldout 0)\n");
  }
}

// --certify's line: the reference's own gap (δ_p), proven, beside the measured gap.
void print_reference(const SolveRun& run) {
  if (!run.reference) {
    std::cout << "reference   its own distance to the denotation was not certified (--certify 0)\n";
    return;
  }
  const proof::CertifiedReference& r = *run.reference;
  std::cout << fmt::format("reference   within {:.3e} of the denotation, proven (Arb balls at {} bits on {} of the {} "
                           "samples, {:.1f} s)\n",
                           r.radius, r.bits, r.samples, run.prepared.count, r.seconds);
  if (!proof::certifies(r, run.solution.gap.absolute)) {
    std::cout << fmt::format("flagged     the measured gap is not {:g}× the reference's proven distance to the denotation: "
                             "it is not read as a value (calibrate at more --bits)\n",
                             proof::kCertifiedFactor);
  }
}

void print_report(const SolveRun& run, const std::string& out) {
  const Offer& offer = run.offer;
  const Solution& s = run.solution;
  const double bytes = solve::traffic(offer, s.assignment);
  int stored = 0, offered_sites = 0, offered_params = 0, params = 0;
  for (const solve::Value& v : offer.values) {
    (v.kind == solve::ValueKind::site ? stored : params) += 1;
    (v.kind == solve::ValueKind::site ? offered_sites : offered_params) += v.offered();
  }
  std::cout << fmt::format("presk solve: `{}` of {}, budget {:g} {} ({:.3e} on max |native − exact|, from {})\n",
                           run.envelope.entry, run.file["solve"]["program"].get<std::string>(),
                           run.budget.epsilon, run.budget.relative ? "relative" : "absolute", run.budget.absolute, run.budget.source);
  std::cout << fmt::format("sites       {} of {} stored values and {} of {} parameters offered (menu {})\n", offered_sites,
                           stored, offered_params, params, offer.menu.text());
  print_rules(offer, bytes);
  double at_rest = 0;
  std::cout << fmt::format("values      {}\n", types_text(offer, s, solve::ValueKind::site, nullptr));
  const std::string parameter_types = types_text(offer, s, solve::ValueKind::parameter, &at_rest);
  double f64_at_rest = 0;
  for (size_t v = 0; v < offer.values.size(); ++v) {
    if (offer.values[v].kind == solve::ValueKind::parameter) f64_at_rest += offer.bytes(static_cast<int>(v), 0);
  }
  std::cout << fmt::format("parameters  {}: {} bytes at rest against {} in f64\n", parameter_types, bytes_text(at_rest),
                           bytes_text(f64_at_rest));
  std::cout << fmt::format("traffic     {} bytes all-f64, {} this realization: {:.3f}× less ({})\n",
                           bytes_text(offer.all_f64_bytes), bytes_text(bytes), bytes > 0 ? offer.all_f64_bytes / bytes : 0,
                           offer.per_sample_counts ? "one sample's stored values and the parameters once"
                                                   : "the envelope's samples, it has no per-sample counts");
  print_predicted(run);
  std::cout << fmt::format("estimate    {:.3e} against a target of {:.3e} ({}, {} rounding; first order, not a bound)\n",
                           s.estimate, s.target, run.options.estimate.form == solve::EstimateForm::sum ? "sum" : "root-sum-square",
                           run.options.estimate.unit_rounding ? "unit" : "measured");
  if (s.quant_estimate) {
    std::cout << fmt::format("            --quant: √Σ(g·δ)² {:.3e} for the matrices in integers (first order, not a bound)\n",
                             *s.quant_estimate);
  }
  print_gaps(run);
  print_reference(run);
  for (const std::string& warning : run.warnings) std::cout << "warning     " << warning << "\n";
  std::cout << fmt::format("rounds      {} widening round{}, {} measurements in sample\n", s.rounds, s.rounds == 1 ? "" : "s",
                           s.measurements);
  std::cout << fmt::format("time        {:.1f} s: exact reference {:.1f} s{}, native measurements {:.2f} s ({} runs), proposal {:.3f} s\n",
                           run.wall_seconds, run.exact_seconds, run.exact_from_cache ? " (its outputs read from the envelope's cache)" : "",
                           run.native_seconds, run.native_runs, run.times.proposal);
  std::cout << "written     " << out << " (presk explain " << out << " gives each decision its reason)\n";
}

int run_solve_command(const SolveCommandOptions& options, const std::string& step, const std::string& grain,
                      GlobalOptions& global) {
  if (!step.empty()) return run_solve_step(options, step, grain, global);
  if (options.run.envelope.empty()) {
    usage_error("E1258").hint("presk solve PROGRAM --precision ENVELOPE.json --budget ε --out R.json, or --step STEP.json")
        << "presk solve needs --precision (an entry's envelope) or --step (a training step's envelope)";
  }
  check_solve_outputs(options);
  if (!options.contract.empty()) return run_chip_solve(options, global);
  if (!options.report.empty()) {
    check_output_files({{"--out", options.out}, {"--report", options.report}},
                       {{"the program", options.run.program}, {"--precision", options.run.envelope}});
  }
  SolveRun run = run_solve(options, global);
  write_file_atomically(options.out, run.file.dump(1) + "\n");
  if (!options.report.empty()) report::write_report(nlohmann::json::parse(run.file.dump()), options.out, "", options.report);
  if (global.json) {
    nlohmann::ordered_json out = run.file["solve"];
    out["out"] = options.out;
    out["seconds"] = {{"wall", run.wall_seconds}, {"exact", run.exact_seconds}, {"native", run.native_seconds},
                      {"native_runs", run.native_runs}, {"proposal", run.times.proposal},
                      {"exact_from_cache", run.exact_from_cache}};
    if (run.reference) out["seconds"]["certify"] = run.reference->seconds;
    std::cout << out.dump(2) << '\n';
  } else {
    print_report(run, options.out);
  }
  return run.solution.inside ? 0 : 4;
}

Registration registration("solve", 36, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<SolveCommandOptions>();
  auto step = std::make_shared<std::string>();
  auto grain = std::make_shared<std::string>("function");
  CLI::App* command = app.add_subcommand("solve", "A budget in, a realization out: the cheapest types the measurement accepts");
  add_solve_options(*command, *options, global);
  command->get_option("--precision")->required(false);
  command->add_option("--step", *step,
                      "Solve a training step instead: its step envelope (presk calibrate --step --out), one type per "
                      "function and adamw.step, the budget on the update gap (docs/step.md)");
  command->add_option("--grain", *grain, "--step: one type per function (and adamw.step), or per stored value of more than one element")
      ->check(CLI::IsMember({"function", "value"}))
      ->capture_default_str();
  command->add_option("--out", options->out, "The realization file to write (JSON, format 1, with its record)")->required();
  command->add_option("--report", options->report, "Also write the solve's HTML report here (as presk report R.json --out F.html)");
  command->add_option("--contract", options->contract,
                      "A chip contract (docs/chip.md): solve which of its products read their activation quantized, "
                      "and in how many words; --out gets the solved contract");
  command->add_option("--realize", options->realize, "With --contract: the realization the chip runs (its integer weights)")
      ->capture_default_str();
  command->footer(
      "Offers every stored value and parameter (rules 1 and 2 aside), proposes greedily by bytes saved per unit of "
      "first-order term, measures the proposal natively against the exact reference on the envelope's samples, and "
      "widens the largest contributor while the gap exceeds the budget; then measures on held-out samples. Exit 4 "
      "when even the widest assignment stays outside the budget. docs/precision.md, \"solve\".");
  return [options, step, grain, &global] {
    return run_solve_command(*options, *step, *grain, global);
  };
});

}  // namespace
}  // namespace presk::cli
