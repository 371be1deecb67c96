// `presk bench --calibrate` and `presk bench --vs` (bench_compare.h).
#include "cli/bench_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include <nlohmann/json.hpp>

#include "exec/native/executor.h"
#include "generate/twins.h"
#include "ir/program_hash.h"
#include "precision/envelope.h"
#include "profile/calibrate.h"
#include "solve/offer.h"
#include "solve/price.h"
#include "support/alternating.h"
#include "support/atomic_file.h"
#include "support/diagnostics.h"

namespace presk::cli {
namespace {

void print_fits(const profile::Profile& p) {
  std::cout << fmt::format("presk bench --calibrate: {} ({} cores), {} thread{}, {}\n", p.cpu, p.cores, p.threads,
                           p.threads == 1 ? "" : "s", p.date);
  std::cout << "T̂ = λ + max(W/π, Q/β); residual: the largest |T̂ − T| / T on the shapes fitted and on those held out\n";
  std::cout << fmt::format("confidence: good up to {:.0f}% held out, fair up to {:.0f}% (a fit past it was measured again), "
                           "LOW beyond\n",
                           100 * profile::kGoodResidual, 100 * profile::kResidualLimit);
  std::cout << fmt::format("{:<15} {:<5} {:>10} {:>12} {:>12} {:>9} {:>9}  {}\n", "class", "type", "λ µs", "π Gop/s",
                           "β GB/s", "fit", "held out", "confidence");
  for (const auto& [name, types] : p.rooflines) {
    for (const auto& [type, fit] : types) {
      const profile::Roofline& r = fit.roofline;
      std::cout << fmt::format("{:<15} {:<5} {:>10.3f} {:>12.3f} {:>12.3f} {:>8.0f}% {:>8.0f}%  {}\n", name, type,
                               1e6 * r.latency, r.rate / 1e9, r.bandwidth / 1e9, 100 * fit.fit_residual, 100 * fit.residual,
                               profile::fit_confidence(fit));
    }
  }
  for (const auto* table : {&p.edge, &p.load}) {
    std::string line = table == &p.edge ? "edge (ns/element):" : "load (ns/element):";
    for (const auto& [key, cost] : *table) line += fmt::format("  {} {:.3f}", key, 1e9 * cost);
    std::cout << line << "\n";
  }
}

// The machine type of each value of `offer` under `realization`.
solve::Types types_under(const solve::Offer& offer, const exec::native::Realization& realization) {
  solve::Types types(offer.values.size());
  for (size_t v = 0; v < types.size(); ++v) {
    const solve::Value& value = offer.values[v];
    if (value.kind == solve::ValueKind::site) {
      types[v] = {realization.site_type(value.key), 0};
    } else if (const exec::native::QuantSpec* quant = realization.param_quant(value.key)) {
      types[v] = {exec::native::RealType::f32, quant->bits};
    } else {
      types[v] = {realization.param_type(value.key), 0};
    }
  }
  return types;
}

struct Timed {
  exec::native::Realization realization;
  exec::native::PreparedParameters parameters;
  std::vector<double> rounds;  // each round's median, ms
  double predicted = 0;        // seconds, when predicted
};

}  // namespace

int run_calibrate(const std::string& out, int runs, const GlobalOptions& global) {
  profile::CalibrateOptions options;
  options.threads = global.threads;
  options.runs = std::max(1, runs);
  options.progress = [](const std::string& line) { std::cerr << "calibrate: " << line << std::endl; };
  const profile::Profile measured = profile::calibrate_machine(options);
  const std::string text = profile_to_json(measured).dump(1) + "\n";
  if (!out.empty()) write_file_atomically(out, text);
  if (global.json) {
    std::cout << text;
  } else {
    print_fits(measured);
    if (!out.empty()) std::cout << "written " << out << "\n";
  }
  return 0;
}

int run_compare(const CompareOptions& options, const GlobalOptions& global) {
  if (!options.machine.empty() && options.precision.empty()) {
    user_error("E1207").hint("add --precision ENVELOPE (presk calibrate --precision) of this program and entry")
        << "--machine predicts from the envelope's sites, and no --precision was given";
  }
  RunInputOptions input = options.input;
  input.memory = {0, kNativeBytesPerElement, 1, false, {}, false};
  const PreparedRun prepared = prepare_run(input, global);
  std::vector<Tensor> inputs = to_tensors(prepared.inputs(0, global.seed));
  const std::string& entry_name = prepared.entry->name;
  std::vector<Timed> timed;
  for (const std::string& argument : options.realizations) {
    exec::native::Realization realization = generate::realization_for_entry(
        exec::native::load_realization(argument, prepared.program), prepared.program, entry_name);
    exec::native::PreparedParameters parameters = exec::native::prepare_parameters(
        prepared.program, realization, [&](const std::string& path) { return prepared.parameters.view(path); });
    timed.push_back({std::move(realization), std::move(parameters), {}, 0});
  }
  if (!options.machine.empty()) {
    const profile::Profile machine = profile::read_profile(options.machine);
    const precision::Envelope envelope = precision::read_envelope(options.precision);
    if (envelope.program_hash != ir::program_hash(prepared.program) || envelope.entry != entry_name) {
      user_error("E1209").hint("pass the envelope of this program, entry and --const/--dim (presk calibrate --precision)")
          << "--precision " << options.precision << " was measured on entry `" << envelope.entry
          << "` of another program or bindings; the prediction prices that program's sites, not these";
    }
    const solve::Offer offer = solve::make_offer(prepared.program, *prepared.entry, envelope, solve::default_menu(), 0);
    const solve::Pricer pricer(offer, machine);
    for (Timed& t : timed) t.predicted = pricer.seconds(types_under(offer, t.realization));
  }
  const exec::native::ExecuteOptions run_options{global.threads, options.scalar};
  const std::string& entry = prepared.entry->name;
  for (Timed& t : timed) exec::native::execute(prepared.program, entry, t.realization, inputs, t.parameters, run_options);
  const std::vector<RoundTimes> times = time_in_alternation(
      timed.size(), options.rounds, options.runs,
      [&](size_t k) {
        exec::native::execute(prepared.program, entry, timed[k].realization, inputs, timed[k].parameters, run_options);
      },
      [&](int round) { std::cerr << fmt::format("bench: round {} of {}\n", round + 1, options.rounds); });
  for (size_t k = 0; k < timed.size(); ++k) {
    for (double seconds : times[k].rounds) timed[k].rounds.push_back(1e3 * seconds);
  }
  const double first = median_of(timed[0].rounds), first_predicted = timed[0].predicted;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  if (!global.json) {
    std::cout << fmt::format("{} --entry {} ({} threads; {} rounds in alternation of {} runs each, the round's median kept)\n",
                             options.input.program_path, entry, global.threads, options.rounds, options.runs);
    std::cout << fmt::format("{:<28} {:>10} {:>21} {:>10} {:>10}\n", "realization", "median ms", "range ms",
                             "× first", "predicted");
  }
  for (size_t i = 0; i < timed.size(); ++i) {
    const Timed& t = timed[i];
    const double m = median_of(t.rounds);
    const auto [low, high] = std::minmax_element(t.rounds.begin(), t.rounds.end());
    const double predicted_ratio = first_predicted > 0 ? t.predicted / first_predicted : 0;
    rows.push_back({{"realize", options.realizations[i]}, {"median_ms", m}, {"min_ms", *low}, {"max_ms", *high},
                    {"rounds_ms", t.rounds}, {"ratio", m / first}, {"predicted_ms", 1e3 * t.predicted},
                    {"predicted_ratio", predicted_ratio}});
    if (!global.json) {
      std::cout << fmt::format("{:<28} {:>10.3f} {:>10.3f} – {:<8.3f} {:>9.3f}× {:>10}\n", options.realizations[i].substr(0, 28),
                               m, *low, *high, m / first,
                               t.predicted > 0 ? fmt::format("{:.3f}×", predicted_ratio) : std::string("—"));
    }
  }
  if (global.json) {
    std::cout << nlohmann::ordered_json{{"program", options.input.program_path}, {"entry", entry},
                                        {"threads", global.threads}, {"rounds", options.rounds},
                                        {"runs", options.runs}, {"realizations", rows}}
                     .dump()
              << "\n";
  } else if (!options.machine.empty()) {
    std::cout << "(× first: the time over the first realization's; predicted: the profile's ratio, a prediction for "
                 "the machine it measured)\n";
  }
  return 0;
}

}  // namespace presk::cli
