// `presk check --contract C --measure` (check_contract.h).
#include "cli/check_contract.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/envelope_run.h"
#include "exec/native/realization.h"
#include "numerics/attention_forms.h"
#include "numerics/bind.h"
#include "numerics/contract_json.h"
#include "numerics/measure.h"
#include "numerics/quantize.h"
#include "precision/quantize_split.h"

namespace presk::cli {
namespace {

double relative(double gap, double magnitude) { return magnitude > 0 ? gap / magnitude : gap; }

nlohmann::ordered_json gaps_json(const numerics::Contract& contract, const std::vector<numerics::ProductGap>& gaps) {
  nlohmann::ordered_json products = nlohmann::ordered_json::array();
  for (const numerics::ProductGap& g : gaps) {
    nlohmann::ordered_json p = {{"site", g.site}, {"scheme", g.scheme}, {"block", g.block}, {"evaluations", g.evaluations},
                                {"magnitude", g.magnitude},
                                {"representation", {{"absolute", g.representation}, {"relative", relative(g.representation, g.magnitude)}}}};
    if (g.integer) {
      p["arithmetic"] = {{"absolute", g.arithmetic}, {"relative", relative(g.arithmetic, g.magnitude)}};
      p["arithmetic"]["evaluations"] = g.integer_evaluations;
      p["accumulator"] = {{"bits", contract.accumulator_bits}, {"bits_needed", g.bits_needed},
                          {"outputs", g.outputs}, {"overflowed", g.overflowed}};
    }
    if (g.integer_evaluations < g.evaluations) {
      if (!g.integer) p["arithmetic"] = nullptr;
      p["why_not"] = g.why_not;
    }
    products.push_back(p);
  }
  return products;
}

nlohmann::ordered_json caches_json(const std::vector<numerics::CacheGap>& caches) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const numerics::CacheGap& c : caches) {
    list.push_back({{"site", c.site}, {"keep", c.keep}, {"rows", c.rows}, {"magnitude", c.magnitude},
                    {"representation", {{"absolute", c.representation}, {"relative", relative(c.representation, c.magnitude)}}}});
  }
  return list;
}

// Each attention the contract gives forms: its forms and, where both operands of its scores or its
// weighted sum are codes (the native run's integer sums), whether the accumulator holds them
// (numerics::attention_accumulators, from the forms' code ranges).
nlohmann::ordered_json attentions_json(const ir::Program& program, const numerics::Contract& contract) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const numerics::AttentionSite& site : numerics::attention_sites(program)) {
    const std::optional<numerics::AttentionNumerics> forms = contract.attention_of(site.name);
    if (!forms) continue;
    nlohmann::ordered_json a = {{"site", site.name}, {"forms", numerics::forms_text(*forms)}};
    const numerics::AttentionAccumulators sums = numerics::attention_accumulators(program, site, *forms, contract);
    for (const auto& [what, sum] : {std::pair{"scores", &sums.scores}, {"weighted", &sums.weighted}}) {
      a[what] = *sum ? nlohmann::ordered_json{{"bits", contract.accumulator_bits},
                                              {"bits_needed", (*sum)->bits_needed},
                                              {"holds", (*sum)->holds},
                                              {"reason", (*sum)->reason}}
                     : nlohmann::ordered_json(nullptr);  // on the forms' values: no integer sums
    }
    list.push_back(a);
  }
  return list;
}

void print_caches(const std::vector<numerics::CacheGap>& caches) {
  if (caches.empty()) return;
  std::cout << "each row a cache_write writes, kept as the contract says, against the row\n";
  std::cout << fmt::format("{:<26} {:<20} {:>6} {:>11} {:>11}\n", "cache", "keep", "rows", "|exact|", "repr. rel");
  for (const numerics::CacheGap& c : caches) {
    std::cout << fmt::format("{:<26} {:<20} {:>6} {:>11.3e} {:>11.3e}\n", c.site, c.keep, c.rows, c.magnitude,
                             relative(c.representation, c.magnitude));
  }
}

void print_gaps(const ContractCheckOptions& options, const numerics::Contract& contract, int64_t samples, long bits,
                const std::vector<numerics::ProductGap>& gaps) {
  std::cout << fmt::format("presk check: contract `{}` ({}) on {} under {}, {} sample(s), exact at {} bits\n",
                           contract.chip, options.contract, options.program, options.realize, samples, bits);
  std::cout << "each product's own output, its operands exact: representation = exact on the quantized operands "
               "against exact; arithmetic = the chip's integer sums against the former\n";
  std::cout << fmt::format("{:<26} {:<20} {:>6} {:>6} {:>11} {:>11} {:>11}  {}\n", "product", "scheme", "block", "runs",
                           "|exact|", "repr. rel", "arith. rel", "accumulator");
  for (const numerics::ProductGap& g : gaps) {
    const std::string arithmetic = g.integer ? fmt::format("{:.3e}", relative(g.arithmetic, g.magnitude)) : "-";
    std::string accumulator;
    if (g.integer) {
      accumulator = fmt::format("needs {} of {} bits{}", g.bits_needed, contract.accumulator_bits,
                                g.overflowed ? fmt::format(", {} of {} outputs overflowed", g.overflowed, g.outputs) : "");
    }
    if (g.integer_evaluations < g.evaluations) {
      accumulator += fmt::format("{}arithmetic on {} of {} runs: {}", g.integer ? "; " : "", g.integer_evaluations,
                                 g.evaluations, g.why_not);
    }
    if (g.evaluations == 0) accumulator = "not run by the entry";
    std::cout << fmt::format("{:<26} {:<20} {:>6} {:>6} {:>11.3e} {:>11.3e} {:>11}  {}\n", g.site, g.scheme, g.block,
                             g.evaluations, g.magnitude, relative(g.representation, g.magnitude), arithmetic, accumulator);
  }
}

nlohmann::ordered_json entry_json(const precision::QuantizeSplit& split) {
  const double m = split.representation.magnitude;
  auto gap = [&](const precision::MeasuredGap& g) {
    return nlohmann::ordered_json{{"absolute", g.absolute}, {"relative", relative(g.absolute, m)}};
  };
  return {{"magnitude", m}, {"representation", gap(split.representation)}, {"arithmetic", gap(split.arithmetic)},
          {"total", gap(split.total)}};
}

void print_entry(const precision::QuantizeSplit& split) {
  const double m = split.representation.magnitude;
  std::cout << "the entry's output, every value as the chip computes it (its quantize ops; relative to the largest "
               "|exact output|, "
            << fmt::format("{:.4e}", m) << ")\n";
  auto line = [&](const char* name, const precision::MeasuredGap& g, const char* what) {
    std::cout << fmt::format("{:<15} {:.3e} absolute, {:.3e} relative   ({})\n", name, g.absolute, relative(g.absolute, m),
                             what);
  };
  line("representation", split.representation, "exact on the quantized activations and stored weights against exact");
  line("arithmetic", split.arithmetic, "the native run of the chip's program against the former");
  line("total", split.total, "the native run of the chip's program against exact");
}

}  // namespace

int run_contract_check(const ContractCheckOptions& options, GlobalOptions& global) {
  const numerics::Contract contract = numerics::read_contract_file(options.contract);
  const precision::Envelope envelope = precision::read_envelope(options.envelope);
  // Observed: each quantized product's gap is measured on the reference (numerics/measure.cpp).
  EnvelopeRunOptions run{options.envelope, options.program, "", options.bindings, options.weights, "", {}, true};
  const PreparedRun prepared = prepare_envelope_run(run, envelope, global);
  const exec::native::Realization realization = exec::native::load_realization(options.realize, prepared.program);
  const std::vector<numerics::QuantizedProduct> products = numerics::bind_contract(contract, prepared.program, &realization);
  std::cerr << "presk check: the exact reference on " << prepared.count << " sample(s), " << products.size()
            << " quantized product(s)\n";
  const std::vector<numerics::QuantizeSite> sites = numerics::quantize(prepared.program, contract, products);
  const ir::Program chip = numerics::chip_program(prepared.program, contract, sites, products);
  const ir::Function& chip_entry = *chip.find_function(prepared.entry->name);
  std::cerr << "presk check: the entry's output, the exact meaning against the chip's (" << sites.size()
            << " quantize site(s))\n";
  const precision::QuantizeSplit entry = precision::quantize_split(
      prepared.program, *prepared.entry, chip, chip_entry, numerics::chip_realization(realization, contract), prepared.parameters, prepared.count,
      [&](int64_t k) { return prepared.inputs(k, global.seed); }, envelope.bits, global.threads);
  const numerics::ContractGaps gaps = numerics::measure_contract(
      prepared.program, *prepared.entry, contract, products, realization, prepared.parameters, prepared.count,
      [&](int64_t k) { return prepared.inputs(k, global.seed); }, envelope.bits);
  if (global.json) {
    nlohmann::ordered_json out = {{"contract", options.contract}, {"chip", contract.chip}, {"realize", options.realize},
                                  {"entry", prepared.entry->name}, {"samples", prepared.count}, {"bits", envelope.bits},
                                  {"entry_gap", entry_json(entry)},
                                  {"products", gaps_json(contract, gaps.products)}, {"caches", caches_json(gaps.caches)},
                                  {"attentions", attentions_json(prepared.program, contract)}};
    std::cout << out.dump(2) << '\n';
  } else {
    print_gaps(options, contract, prepared.count, envelope.bits, gaps.products);
    print_entry(entry);
    print_caches(gaps.caches);
    if (!numerics::attention_sites(prepared.program).empty()) {
      std::cout << "each attention's forms, and the accumulator its integer sums need\n"
                << numerics::attention_text(prepared.program, contract);
    }
  }
  return 0;
}

}  // namespace presk::cli
