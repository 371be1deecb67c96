// The chip's solve (chip_solve.h).
#include "solve/chip_solve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "numerics/attention_forms.h"
#include "numerics/contract_json.h"
#include "numerics/quantize.h"
#include "solve/greedy.h"
#include "support/json_reader.h"

namespace presk::solve {
namespace {

// The estimate Σ terms of the chip's values.
class ChipTally : public Tally {
 public:
  ChipTally(const ChipTerms& terms, const Assignment& assignment) : terms_(terms), now_(terms.size(), 0) {
    for (size_t v = 0; v < now_.size(); ++v) now_[v] = terms_[v][static_cast<size_t>(assignment[v])];
  }
  double total() const override {
    double sum = 0;
    for (double t : now_) sum += t;
    return sum;
  }
  double with(Assignment&, int value, int to) const override {
    return total() - now_[value] + terms_[value][static_cast<size_t>(to)];
  }
  void apply(const Assignment& assignment, int value) override {
    now_[value] = terms_[value][static_cast<size_t>(assignment[value])];
  }

 private:
  const ChipTerms& terms_;
  std::vector<double> now_;
};

// Predicted seconds: a step saves what its value costs less at its rung; hoped for, what it would
// at the cheapest rung beyond (a chain narrowed through a first step that alone is a loss).
class SecondsObjective : public Objective {
 public:
  SecondsObjective(const Offer& offer, const ChipPricer& pricer) : offer_(offer), pricer_(pricer) {}
  Gain gain(const Assignment& assignment, int value, int to) const override {
    const double now = pricer_.seconds(value, assignment[value]);
    double least = pricer_.seconds(value, to);
    for (int s = to; s >= 0; s = offer_.narrower(value, s)) least = std::min(least, pricer_.seconds(value, s));
    return {now - pricer_.seconds(value, to), now - least};
  }

 private:
  const Offer& offer_;
  const ChipPricer& pricer_;
};

// The proposal by predicted seconds: the trajectory's assignment of the least, then no narrowing
// the profile predicts slower, then the steps left that cannot fit recorded as refused.
void propose_by_seconds(const Offer& offer, const ChipTerms& terms, const ChipPricer& pricer, Solution& solution) {
  ChipTally tally(terms, solution.assignment);
  const Trajectory trajectory =
      propose_steps(offer, tally, SecondsObjective(offer, pricer), solution.target, offered_steps(offer), solution);
  keep_least(trajectory, [&](const Assignment& a) { return pricer.seconds(a); }, solution);
  undo_slower([&](const Assignment& a, int v) { return pricer.seconds(v, a[v]); }, solution.assignment, solution.moves);
  refuse_unfit(offer, ChipTally(terms, solution.assignment), offered_steps(offer), solution.target, solution);
}

}  // namespace

double ChipPricer::seconds(int value, int step) const {
  const StepWork& w = offer_.work[static_cast<size_t>(value)][static_cast<size_t>(step)];
  return profile_.int8_mac * w.int8_macs + profile_.float_mac * w.float_macs + profile_.quantize * w.quantized +
         offer_.offer.bytes(value, step) / profile_.bytes_per_second;
}

double ChipPricer::seconds(const Assignment& assignment) const {
  double total = 0;
  for (size_t v = 0; v < assignment.size(); ++v) total += seconds(static_cast<int>(v), assignment[v]);
  return total;
}

EntryRuns::EntryRuns(const ir::Function& entry, const exec::native::Realization& realization,
                     const reference::ParameterStore& parameters, Measurer& exact, SampleSet in_sample, SampleSet held_out,
                     int threads)
    : entry_(entry), realization_(realization), parameters_(parameters), exact_(exact), in_sample_(std::move(in_sample)),
      held_out_(std::move(held_out)), threads_(threads) {}

precision::MeasuredGap EntryRuns::measure(const ir::Program& chip, bool held_out) {
  const SampleSet& set = held_out ? held_out_ : in_sample_;
  return precision::measure_gap(chip, *chip.find_function(entry_.name), realization_, parameters_, set.count, set.inputs,
                                held_out ? exact_.exact_held_out() : exact_.exact_in_sample(), threads_);
}

ChipMeasurer::ChipMeasurer(const ir::Program& program, const numerics::Contract& contract,
                           const exec::native::Realization& realization, ChipRuns& runs)
    : program_(program), contract_(contract), realization_(realization), runs_(runs) {}

precision::MeasuredGap ChipMeasurer::measure(const Offer& offer, const Assignment& assignment, bool held_out) {
  const auto key = std::make_pair(held_out, assignment);
  if (const auto found = cache_.find(key); found != cache_.end()) return found->second;
  const numerics::Contract contract = contract_of(offer, assignment, contract_);
  const std::vector<numerics::QuantizedProduct> products = numerics::bind_contract(contract, program_, &realization_);
  const ir::Program chip =
      numerics::chip_program(program_, contract, numerics::quantize(program_, contract, products), products);
  const precision::MeasuredGap gap = runs_.measure(chip, held_out);
  cache_.emplace(key, gap);
  return gap;
}

precision::MeasuredGap ChipMeasurer::in_sample(const Offer& offer, const Assignment& assignment) {
  return measure(offer, assignment, false);
}

std::optional<precision::MeasuredGap> ChipMeasurer::held_out(const Offer& offer, const Assignment& assignment) {
  if (!runs_.has_held_out()) return std::nullopt;
  return measure(offer, assignment, true);
}

ChipTerms measured_terms(const Offer& offer, Measurements& measurer, const Progress& progress) {
  ChipTerms terms(offer.values.size());
  const Assignment widest(offer.values.size(), 0);
  for (size_t v = 0; v < terms.size(); ++v) {
    terms[v].assign(offer.values[v].ladder.size(), 0);
    if (!offer.values[v].offered()) continue;
    for (size_t s = 1; s < terms[v].size(); ++s) {
      Assignment alone = widest;
      alone[v] = static_cast<int>(s);
      terms[v][s] = measurer.in_sample(offer, alone).absolute;
      if (progress) {
        progress(fmt::format("term: {} at {} alone: gap {:.3e}", offer.values[v].key, offer.rung(static_cast<int>(v), static_cast<int>(s)).name, terms[v][s]));
      }
    }
  }
  return terms;
}

Solution solve_chip(const Offer& offer, const ChipTerms& terms, const Budget& budget, ChipMeasurer& measurer,
                    const Progress& progress, const ChipPricer* pricer) {
  Solution solution;
  solution.target = budget.absolute;
  solution.assignment.assign(offer.values.size(), 0);
  if (pricer) {
    propose_by_seconds(offer, terms, *pricer, solution);
  } else {
    ChipTally tally(terms, solution.assignment);
    propose_steps(offer, tally, BytesObjective(offer), solution.target, offered_steps(offer), solution);
  }
  solution.proposed = solution.assignment;
  if (progress) {
    progress(fmt::format("proposal: estimate {:.3e} against {:.3e}{}", ChipTally(terms, solution.assignment).total(),
                         solution.target,
                         pricer ? fmt::format(", predicted {:.4e} s per sample", pricer->seconds(solution.assignment)) : ""));
  }
  const Widening by_terms{[&](const Assignment& a) {  // the offered product of the largest term not at its values
                            int best = -1;
                            double best_term = -1;
                            for (size_t v = 0; v < a.size(); ++v) {
                              const double t = terms[v][static_cast<size_t>(a[v])];
                              if (a[v] > 0 && t > best_term) best = static_cast<int>(v), best_term = t;
                            }
                            return best;
                          },
                          [](int, int from) { return from - 1; },
                          [&](const Assignment& a, int v) { return terms[static_cast<size_t>(v)][static_cast<size_t>(a[v])]; },
                          ""};
  measure_and_widen(offer, by_terms, budget, measurer, solution, progress);
  if (const std::optional<precision::MeasuredGap> out = measurer.held_out(offer, solution.assignment)) {
    solution.held_out = measure_recorded(offer, solution.assignment, measurer, true, budget.absolute, solution);
    if (progress) progress(fmt::format("held out: gap {:.3e}", solution.held_out->absolute));
  }
  ChipTally final_tally(terms, solution.assignment);
  solution.estimate = final_tally.total();
  return solution;
}

namespace {

// Each value's record (explain reads it): its decision and term, an attention's forms, and with a
// profile its predicted seconds at its final rung.
nlohmann::ordered_json values_json(const Offer& offer, const ChipTerms& terms, const Solution& solution,
                                   const numerics::Contract& contract, const ChipPricer* pricer) {
  using Json = nlohmann::ordered_json;
  auto number = [](double x) { return json_number<Json>(x); };
  Json values = Json::array();
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const Value& v = offer.values[i];
    const int index = static_cast<int>(i), final_step = solution.assignment[i];
    values.push_back({{"kind", "site"}, {"key", v.key}, {"op", v.op}, {"type", v.type}, {"elements", v.elements},
                      {"sensitivity", v.sensitivity ? number(*v.sensitivity) : Json(nullptr)},
                      {"offered", exclusion_name(v.exclusion)}, {"first_saving", number(v.first_saving)},
                      {"proposed", offer.rung(index, solution.proposed[i]).name},
                      {"final", offer.rung(index, final_step).name},
                      {"bytes", number(offer.bytes(index, final_step))},
                      {"term", number(terms[i][static_cast<size_t>(final_step)])}});
    if (const auto forms = attention_forms_text(offer, index, final_step, contract)) values.back()["forms"] = *forms;
    if (pricer) {
      values.back()["seconds"] = number(pricer->seconds(index, final_step));
      values.back()["seconds_widest"] = number(pricer->seconds(index, 0));
    }
  }
  return values;
}

}  // namespace

nlohmann::ordered_json chip_contract_file(const Offer& offer, const ChipTerms& terms, const Solution& solution,
                                          const Budget& budget, const numerics::Contract& contract,
                                          const RecordContext& context, const ChipPricer* pricer) {
  using Json = nlohmann::ordered_json;
  auto number = [](double x) { return json_number<Json>(x); };
  Json file = numerics::contract_to_json(contract_of(offer, solution.assignment, contract));
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
                   {"priced_by", pricer ? "time" : "bytes"},
                   {"min_gain_bytes", 0},
                   {"target", number(solution.target)},
                   {"estimate", number(solution.estimate)},
                   {"inside", solution.inside},
                   {"rounds", solution.rounds},
                   {"measurements", solution.measurements},
                   {"gap", {{"in_sample", gap(solution.gap)},
                            {"held_out", solution.held_out ? gap(*solution.held_out) : Json(nullptr)}}},
                   {"values", values_json(offer, terms, solution, contract, pricer)},
                   {"moves", moves_json(offer, solution)}};
  if (pricer) {  // seconds per sample the profile predicts (explain reads `predicted`)
    const numerics::ChipProfile& p = pricer->profile();
    file["solve"]["profile"] = {{"path", pricer->path()}, {"chip", p.chip}, {"source", p.source}};
    file["solve"]["predicted"] = {{"seconds", number(pricer->seconds(solution.assignment))},
                                  {"widest", number(pricer->seconds(Assignment(offer.values.size(), 0)))}};
  }
  return file;
}

}  // namespace presk::solve
