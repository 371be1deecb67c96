// `presk solve PROGRAM --precision ENV --contract C --budget ε --out SOLVED.json` (solve_setup.h,
// run_chip_solve; solve/chip_solve.h): which products read their activation quantized.
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "cli/solve_setup.h"
#include "exec/native/realization.h"
#include "generate/generate.h"
#include "generate/twins.h"
#include "ir/program_hash.h"
#include "numerics/bind.h"
#include "numerics/contract_json.h"
#include "numerics/quantize.h"
#include "solve/chip_decode.h"
#include "solve/chip_solve.h"
#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "support/sha256.h"

namespace presk::cli {
namespace {

void print_chip_report(const solve::Offer& offer, const solve::ChipTerms& terms, const solve::Solution& s,
                       const solve::Budget& budget, const numerics::Contract& contract, const std::string& out) {
  std::cout << fmt::format("presk solve: contract `{}`, budget {:g} {} ({:.3e} on max |native − exact|)\n", contract.chip,
                           budget.epsilon, budget.relative ? "relative" : "absolute", budget.absolute);
  std::cout << fmt::format("{:<26} {:<14} {:>17} {:>17} {:>10}  {}\n", "product, cache, attention", "type", "proposed", "final", "term",
                           "bytes/sample");
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const solve::Value& v = offer.values[i];
    const int index = static_cast<int>(i);
    const char* why = v.elements == 0 ? " (not offered: the entry does not reach it)"
                                      : " (not offered: the envelope's sweep has no sensitivity)";
    std::cout << fmt::format("{:<26} {:<14} {:>17} {:>17} {:>10.3e}  {:.3g} of {:.3g}{}\n", v.key, v.type,
                             offer.rung(index, s.proposed[i]).name, offer.rung(index, s.assignment[i]).name,
                             terms[i][static_cast<size_t>(s.assignment[i])], offer.bytes(index, s.assignment[i]),
                             offer.bytes(index, 0), v.offered() ? "" : why);
  }
  std::cout << fmt::format("measured    {:.3e} in sample (relative {:.3e}): {}\n", s.gap.absolute, s.gap.relative(),
                           s.inside ? "inside the budget" : "OUTSIDE the budget");
  if (s.held_out) {
    std::cout << fmt::format("            {:.3e} held out (relative {:.3e}){}\n", s.held_out->absolute,
                             s.held_out->relative(), s.held_out->absolute > budget.absolute ? ": ABOVE the budget" : "");
  } else {
    std::cout << "            nothing was held out (no data file, or --heldout 0)\n";
  }
  std::cout << fmt::format("rounds      {} widening round{}, {} measurements in sample\n", s.rounds,
                           s.rounds == 1 ? "" : "s", s.measurements);
  std::cout << "written     " << out << " (presk explain " << out << " gives each decision its reason)\n";
}


// The start tokens of decode runs k = first … first + count − 1: each sample's `token` input.
std::vector<int64_t> start_tokens(const PreparedRun& prepared, int64_t first, int64_t count, uint64_t seed) {
  std::vector<int64_t> tokens;
  for (int64_t k = first; k < first + count; ++k) tokens.push_back(prepared.inputs(k, seed).back().integers.at(0));
  return tokens;
}

struct ChipSolved {
  solve::ChipTerms terms;
  solve::Solution solution;
};

// The decode entry: decode runs over the whole context, the terms measured value by value, and a
// relative budget relative to the largest |exact logit| of the in-sample runs.
ChipSolved solve_on_decode(const SolveCommandOptions& options, const PreparedRun& prepared, const solve::Offer& offer,
                           const numerics::Contract& contract, const exec::native::Realization& realization,
                           solve::Budget budget, long bits, const solve::Progress& progress, GlobalOptions& global,
                           const solve::ChipPricer* pricer) {
  const generate::DecodeEntry entry = generate::find_decode_entry(prepared.program);
  const int64_t held_out = options.heldout >= 0 ? options.heldout : prepared.count;
  solve::DecodeRuns runs(prepared.program, prepared.parameters, realization,
                         start_tokens(prepared, 0, prepared.count, global.seed),
                         start_tokens(prepared, prepared.count, held_out, global.seed), entry.context, bits, global.threads,
                         progress);
  if (budget.relative) budget.absolute = budget.epsilon * runs.magnitude();
  solve::ChipMeasurer measurer(prepared.program, contract, realization, runs);
  ChipSolved solved{solve::measured_terms(offer, measurer, progress), {}};
  solved.solution = solve::solve_chip(offer, solved.terms, budget, measurer, progress, pricer);
  return solved;
}

}  // namespace

int run_chip_solve(const SolveCommandOptions& options, GlobalOptions& global) {
  if (options.quant || options.exhaustive || options.narrow != "none") {
    usage_error("E1724").hint("presk solve PROGRAM --precision ENV --contract C --budget ε [--profile CHIP.json] --out SOLVED.json")
        << "--contract decides the chip's products, caches and attentions greedily: --quant, --exhaustive and --narrow "
           "do not apply";
  }
  const numerics::Contract contract = numerics::read_contract_file(options.contract);
  const precision::Envelope envelope = precision::read_envelope(options.run.envelope);
  const PreparedRun prepared = prepare_envelope_run(options.run, envelope, global);
  // Every native run is of a chip's program: its products of codes by integer weights summed as the chip does.
  const exec::native::Realization realization =
      numerics::chip_realization(exec::native::load_realization(options.realize, prepared.program), contract);
  const std::vector<numerics::QuantizedProduct> products = numerics::bind_contract(contract, prepared.program, &realization);
  const bool decode = prepared.entry->name == generate::kDecodeEntry;
  const solve::ChipOffer chip_offer = solve::chip_offer(prepared.program, contract, products, envelope, realization, decode);
  const solve::Offer& offer = chip_offer.offer;
  // --profile: a chip's time profile (numerics/chip_profile.h) prices the decisions instead of bytes.
  std::optional<solve::ChipPricer> pricer;
  if (!options.profile.empty()) pricer.emplace(chip_offer, numerics::read_chip_profile(options.profile), options.profile);
  const solve::ChipPricer* priced = pricer ? &*pricer : nullptr;
  solve::Budget budget = budget_of(options, *prepared.entry, envelope);
  const solve::Progress progress = options.quiet ? solve::Progress{}
                                                 : solve::Progress([](const std::string& line) { std::cerr << "solve: " << line << std::endl; });
  ChipSolved solved;
  if (decode) {
    solved = solve_on_decode(options, prepared, offer, contract, realization, budget, envelope.bits, progress, global, priced);
  } else {
    const uint64_t seed = global.seed;
    const solve::SampleSet in_sample{prepared.count, [&prepared, seed](int64_t k) { return prepared.inputs(k, seed); }};
    const solve::SampleSet held_out = held_out_set(prepared, options.heldout >= 0 ? options.heldout : prepared.count);
    solve::Measurer exact(prepared.program, *prepared.entry, prepared.parameters, in_sample, held_out, envelope.bits,
                          global.threads, progress);
    solve::EntryRuns runs(*prepared.entry, realization, prepared.parameters, exact, in_sample, held_out, global.threads);
    solve::ChipMeasurer measurer(prepared.program, contract, realization, runs);
    solved.terms = solve::first_order_terms(offer);
    solved.solution = solve::solve_chip(offer, solved.terms, budget, measurer, progress, priced);
  }
  const solve::Solution& solution = solved.solution;
  budget.absolute = solution.target;
  const solve::RecordContext context{options.run.program, ir::program_hash(prepared.program), prepared.entry->name,
                                     options.run.envelope, sha256_file(options.run.envelope)};
  nlohmann::ordered_json file = solve::chip_contract_file(offer, solved.terms, solution, budget, contract, context, priced);
  file["solve"]["realize"] = options.realize;
  file["solve"]["terms"] = decode ? "measured: each value alone at each rung, on the decode runs" : "first order: s·max|y|·r";
  write_file_atomically(options.out, file.dump(1) + "\n");
  if (global.json) {
    nlohmann::ordered_json out = file["solve"];
    out["out"] = options.out;
    std::cout << out.dump(2) << '\n';
  } else {
    print_chip_report(offer, solved.terms, solution, budget, contract, options.out);
    if (pricer) {
      std::cout << fmt::format("predicted   {:.4e} s per sample ({:.4e} at the widest rungs) by {} (`{}`, {})\n",
                               pricer->seconds(solution.assignment), pricer->seconds(solve::Assignment(offer.values.size(), 0)),
                               options.profile, pricer->profile().chip,
                               pricer->profile().source == "example" ? "an example's numbers, not a measurement" : "measured");
    }
  }
  return solution.inside ? 0 : 4;
}

}  // namespace presk::cli
