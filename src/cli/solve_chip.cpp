// `presk solve PROGRAM --precision ENV --contract C --budget ε --out SOLVED.json` (solve_setup.h,
// run_chip_solve; solve/chip_solve.h): which products read their activation quantized.
#include <fmt/format.h>

#include <iostream>

#include "cli/solve_setup.h"
#include "exec/native/realization.h"
#include "ir/program_hash.h"
#include "numerics/bind.h"
#include "numerics/contract_json.h"
#include "solve/chip_solve.h"
#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "support/sha256.h"

namespace presk::cli {
namespace {

void print_chip_report(const solve::Offer& offer, const solve::Solution& s, const solve::Budget& budget,
                       const numerics::Contract& contract, const std::string& out) {
  std::cout << fmt::format("presk solve: contract `{}`, budget {:g} {} ({:.3e} on max |native − exact|)\n", contract.chip,
                           budget.epsilon, budget.relative ? "relative" : "absolute", budget.absolute);
  std::cout << fmt::format("{:<26} {:<14} {:>12} {:>10} {:>10}  {}\n", "product", "activation", "s", "proposed", "final",
                           "bytes/sample");
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const solve::Value& v = offer.values[i];
    const int index = static_cast<int>(i);
    std::cout << fmt::format("{:<26} {:<14} {:>12} {:>10} {:>10}  {:.3g} of {:.3g}{}\n", v.key, v.type,
                             v.sensitivity ? fmt::format("{:.3e}", *v.sensitivity) : "unknown",
                             offer.rung(index, s.proposed[i]).name, offer.rung(index, s.assignment[i]).name,
                             offer.bytes(index, s.assignment[i]), offer.bytes(index, 0),
                             v.offered() ? "" : " (not offered: the envelope's sweep has no sensitivity)");
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

}  // namespace

int run_chip_solve(const SolveCommandOptions& options, GlobalOptions& global) {
  if (!options.profile.empty() || options.quant || options.exhaustive || options.narrow != "none") {
    usage_error("E1724").hint("presk solve PROGRAM --precision ENV --contract C --budget ε --out SOLVED.json")
        << "--contract prices by bytes and proposes greedily: --profile, --quant, --exhaustive and --narrow do not apply";
  }
  const numerics::Contract contract = numerics::read_contract_file(options.contract);
  const precision::Envelope envelope = precision::read_envelope(options.run.envelope);
  const PreparedRun prepared = prepare_envelope_run(options.run, envelope, global);
  const exec::native::Realization realization = exec::native::load_realization(options.realize, prepared.program);
  const std::vector<numerics::QuantizedProduct> products = numerics::bind_contract(contract, prepared.program, &realization);
  const solve::Budget budget = budget_of(options, *prepared.entry, envelope);
  const solve::Offer offer = solve::chip_offer(prepared.program, *prepared.entry, products, envelope);
  const solve::Progress progress = options.quiet ? solve::Progress{}
                                                 : solve::Progress([](const std::string& line) { std::cerr << "solve: " << line << std::endl; });
  const uint64_t seed = global.seed;
  const solve::SampleSet in_sample{prepared.count, [&prepared, seed](int64_t k) { return prepared.inputs(k, seed); }};
  const solve::SampleSet held_out = held_out_set(prepared, options.heldout >= 0 ? options.heldout : prepared.count);
  solve::Measurer exact(prepared.program, *prepared.entry, prepared.parameters, in_sample, held_out, envelope.bits,
                        global.threads, progress);
  solve::ChipMeasurer measurer(prepared.program, *prepared.entry, contract, realization, prepared.parameters, exact,
                               in_sample, held_out, global.threads);
  const solve::Solution solution = solve::solve_chip(offer, budget, measurer, progress);
  const solve::RecordContext context{options.run.program, ir::program_hash(prepared.program), prepared.entry->name,
                                     options.run.envelope, sha256_file(options.run.envelope)};
  nlohmann::ordered_json file = solve::chip_contract_file(offer, solution, budget, contract, context);
  file["solve"]["realize"] = options.realize;
  write_file_atomically(options.out, file.dump(1) + "\n");
  if (global.json) {
    nlohmann::ordered_json out = file["solve"];
    out["out"] = options.out;
    std::cout << out.dump(2) << '\n';
  } else {
    print_chip_report(offer, solution, budget, contract, options.out);
  }
  return solution.inside ? 0 : 4;
}

}  // namespace presk::cli
