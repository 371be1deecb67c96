// The chip's solve (chip_solve.h).
#include "solve/chip_solve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "numerics/contract_json.h"
#include "numerics/quantize.h"
#include "solve/greedy.h"
#include "support/json_reader.h"

namespace presk::solve {
namespace {

using numerics::Words;

// The menu's rungs: an activation read as its values, then in each scheme's words, widest first.
const std::vector<Words> kWords = {Words::three, Words::two_rest, Words::two_code16, Words::one};

Menu chip_menu() {
  Menu menu;
  menu.rungs.push_back({"values", RealType::f32, 4});
  for (Words w : kWords) menu.rungs.push_back({numerics::words_name(w), RealType::f32, 1.0 * numerics::word_count(w)});
  return menu;
}

int rung_of(Words words) { return 1 + static_cast<int>(std::find(kWords.begin(), kWords.end(), words) - kWords.begin()); }

// The words of a ladder from the widest to the contract's own: three ⊃ two_rest ⊃ one; two_code16 alone.
std::vector<Words> words_ladder(Words own) {
  switch (own) {
    case Words::one: return {Words::three, Words::two_rest, Words::one};
    case Words::two_rest: return {Words::three, Words::two_rest};
    case Words::two_code16: return {Words::two_code16};
    case Words::three: return {Words::three};
  }
  return {own};
}

// The largest relative move of a scheme's value (half its last word's step over the largest code).
double relative_move(Words words) {
  switch (words) {
    case Words::one: return 1.0 / 254;
    case Words::two_rest: return 1.0 / (254.0 * 128);
    case Words::two_code16: return 1.0 / (254.0 * 256);
    case Words::three: return 1.0 / (254.0 * 16384);
  }
  return 1;
}

const Words& words_at(const Offer& offer, int value, int step) {
  static const Words none = Words::one;
  const int rung = offer.values[value].ladder[step].rung;
  return rung == 0 ? none : kWords[static_cast<size_t>(rung - 1)];
}

double chip_term(const Offer& offer, int value, int step) {
  const Value& v = offer.values[value];
  if (step == 0 || !v.sensitivity) return 0;
  return *v.sensitivity * v.max_abs * relative_move(words_at(offer, value, step));
}

// The first-order estimate Σ s·max|y|·r of the chip's values.
class ChipTally : public Tally {
 public:
  ChipTally(const Offer& offer, const Assignment& assignment) : offer_(offer), terms_(offer.values.size(), 0) {
    for (size_t v = 0; v < terms_.size(); ++v) terms_[v] = chip_term(offer, static_cast<int>(v), assignment[v]);
  }
  double total() const override {
    double sum = 0;
    for (double t : terms_) sum += t;
    return sum;
  }
  double with(Assignment&, int value, int to) const override { return total() - terms_[value] + chip_term(offer_, value, to); }
  void apply(const Assignment& assignment, int value) override { terms_[value] = chip_term(offer_, value, assignment[value]); }

 private:
  const Offer& offer_;
  std::vector<double> terms_;
};

}  // namespace

Offer chip_offer(const ir::Program& program, const ir::Function& entry,
                 const std::vector<numerics::QuantizedProduct>& products, const precision::Envelope& envelope) {
  Offer offer;
  offer.menu = chip_menu();
  offer.min_gain = 0;
  offer.output_elements = 0;
  for (const ir::ValueRef& result : entry.results) offer.output_elements += entry.type_of(result).element_count();
  offer.output_elements = std::max<int64_t>(offer.output_elements, 1);
  for (const numerics::QuantizedProduct& q : products) {
    const ir::Function& f = program.functions[q.product.function];
    const ir::Let& let = f.lets[q.product.let];
    Value v;
    v.key = q.product.site;
    v.op = ir::op_name(let.op);
    const ir::Type& activation = f.type_of(let.operands[static_cast<size_t>(q.product.activation)]);
    v.type = ir::type_to_string(activation);
    const precision::SiteEnvelope* site = envelope.find_site(q.product.site);
    const int64_t evaluations = site && site->elements_per_sample > 0 ? site->elements_per_sample / let.type.element_count() : 0;
    v.elements = evaluations * activation.element_count();
    if (site) {
      v.max_abs = site->max_abs;
      if (site->sensitivity) v.sensitivity = *site->sensitivity / static_cast<double>(offer.output_elements);
    }
    v.exclusion = !site || v.elements == 0 ? Exclusion::unknown_sensitivity
                  : !v.sensitivity         ? Exclusion::unknown_sensitivity
                                           : Exclusion::offered;
    const double per_block = 4.0 / static_cast<double>(q.block);  // one f32 scale per block
    v.ladder.push_back({0, 4.0 * static_cast<double>(v.elements), 0});
    for (Words w : words_ladder(q.scheme.words)) {
      v.ladder.push_back({rung_of(w), (numerics::word_count(w) + per_block) * static_cast<double>(v.elements), 0});
    }
    v.first_saving = v.ladder[0].bytes - v.ladder[1].bytes;
    offer.all_f64_bytes += 2 * v.ladder[0].bytes;
    offer.values.push_back(std::move(v));
  }
  return offer;
}

numerics::Contract contract_of(const Offer& offer, const Assignment& assignment, const numerics::Contract& contract) {
  numerics::Contract out = contract;
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const int v = static_cast<int>(i);
    std::optional<numerics::Scheme> scheme = contract.scheme_of(offer.values[i].key);
    if (assignment[i] == 0) {
      scheme.reset();
    } else if (scheme) {
      scheme->words = words_at(offer, v, assignment[i]);
    }
    out.products[offer.values[i].key] = scheme;
  }
  return out;
}

ChipMeasurer::ChipMeasurer(const ir::Program& program, const ir::Function& entry, const numerics::Contract& contract,
                           const exec::native::Realization& realization, const reference::ParameterStore& parameters,
                           Measurer& exact, SampleSet in_sample, SampleSet held_out, int threads)
    : program_(program), entry_(entry), contract_(contract), realization_(realization), parameters_(parameters),
      exact_(exact), in_sample_(std::move(in_sample)), held_out_(std::move(held_out)), threads_(threads) {}

precision::MeasuredGap ChipMeasurer::measure(const Offer& offer, const Assignment& assignment, bool held_out) {
  const auto key = std::make_pair(held_out, assignment);
  if (const auto found = cache_.find(key); found != cache_.end()) return found->second;
  const numerics::Contract contract = contract_of(offer, assignment, contract_);
  const std::vector<numerics::QuantizedProduct> products = numerics::bind_contract(contract, program_, &realization_);
  const ir::Program chip = numerics::chip_program(program_, numerics::quantize(program_, contract, products), products);
  const SampleSet& set = held_out ? held_out_ : in_sample_;
  const precision::MeasuredGap gap =
      precision::measure_gap(chip, *chip.find_function(entry_.name), realization_, parameters_, set.count, set.inputs,
                             held_out ? exact_.exact_held_out() : exact_.exact_in_sample(), threads_);
  cache_.emplace(key, gap);
  return gap;
}

precision::MeasuredGap ChipMeasurer::in_sample(const Offer& offer, const Assignment& assignment) {
  return measure(offer, assignment, false);
}

std::optional<precision::MeasuredGap> ChipMeasurer::held_out(const Offer& offer, const Assignment& assignment) {
  if (held_out_.count == 0) return std::nullopt;
  return measure(offer, assignment, true);
}

Solution solve_chip(const Offer& offer, const Budget& budget, ChipMeasurer& measurer, const Progress& progress) {
  Solution solution;
  solution.target = budget.absolute;
  solution.assignment.assign(offer.values.size(), 0);
  ChipTally tally(offer, solution.assignment);
  propose_steps(offer, tally, BytesObjective(offer), solution.target, offered_steps(offer), solution);
  solution.proposed = solution.assignment;
  if (progress) {
    progress(fmt::format("proposal: estimate {:.3e} against {:.3e}", tally.total(), solution.target));
  }
  const Widening by_terms{[&](const Assignment& a) {  // the offered product of the largest term not at its values
                            int best = -1;
                            double best_term = -1;
                            for (size_t v = 0; v < a.size(); ++v) {
                              const double t = chip_term(offer, static_cast<int>(v), a[v]);
                              if (a[v] > 0 && t > best_term) best = static_cast<int>(v), best_term = t;
                            }
                            return best;
                          },
                          [](int, int from) { return from - 1; },
                          [&](const Assignment& a, int v) { return chip_term(offer, v, a[v]); }, ""};
  measure_and_widen(offer, by_terms, budget, measurer, solution, progress);
  if (const std::optional<precision::MeasuredGap> out = measurer.held_out(offer, solution.assignment)) {
    solution.held_out = measure_recorded(offer, solution.assignment, measurer, true, budget.absolute, solution);
    if (progress) progress(fmt::format("held out: gap {:.3e}", solution.held_out->absolute));
  }
  ChipTally final_tally(offer, solution.assignment);
  solution.estimate = final_tally.total();
  return solution;
}

nlohmann::ordered_json chip_contract_file(const Offer& offer, const Solution& solution, const Budget& budget,
                                          const numerics::Contract& contract, const RecordContext& context) {
  using Json = nlohmann::ordered_json;
  auto number = [](double x) { return json_number<Json>(x); };
  Json file = numerics::contract_to_json(contract_of(offer, solution.assignment, contract));
  Json values = Json::array();
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const Value& v = offer.values[i];
    const int index = static_cast<int>(i);
    values.push_back({{"kind", "site"}, {"key", v.key}, {"op", v.op}, {"type", v.type}, {"elements", v.elements},
                      {"sensitivity", v.sensitivity ? number(*v.sensitivity) : Json(nullptr)},
                      {"offered", exclusion_name(v.exclusion)}, {"first_saving", number(v.first_saving)},
                      {"proposed", offer.rung(index, solution.proposed[i]).name},
                      {"final", offer.rung(index, solution.assignment[i]).name},
                      {"bytes", number(offer.bytes(index, solution.assignment[i]))},
                      {"term", number(chip_term(offer, index, solution.assignment[i]))}});
  }
  auto gap = [&](const precision::MeasuredGap& g) {
    return Json{{"absolute", number(g.absolute)}, {"relative", number(g.relative())}, {"magnitude", number(g.magnitude)},
                {"inside", g.absolute <= budget.absolute}};
  };
  file["solve"] = {{"format", 1},
                   {"program", context.program},
                   {"program_hash", context.program_hash},
                   {"entry", context.entry},
                   {"envelope", {{"path", context.envelope}, {"sha256", context.envelope_sha256}}},
                   {"budget", {{"kind", budget.relative ? "relative" : "absolute"}, {"epsilon", number(budget.epsilon)},
                               {"absolute", number(budget.absolute)}, {"source", budget.source}}},
                   {"priced_by", "bytes"},
                   {"min_gain_bytes", 0},
                   {"target", number(solution.target)},
                   {"estimate", number(solution.estimate)},
                   {"inside", solution.inside},
                   {"rounds", solution.rounds},
                   {"measurements", solution.measurements},
                   {"gap", {{"in_sample", gap(solution.gap)},
                            {"held_out", solution.held_out ? gap(*solution.held_out) : Json(nullptr)}}},
                   {"values", values},
                   {"moves", moves_json(offer, solution)}};
  return file;
}

}  // namespace presk::solve
