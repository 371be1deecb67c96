// The two-pass solver's integer pass (quant_pass.h).
#include "solve/quant_pass.h"

#include <fmt/format.h>

#include <cmath>

#include "precision/quant_axis.h"
#include "solve/greedy.h"

namespace presk::solve {
namespace {

bool integer_step(const Offer& offer, int v, int step) { return offer.rung(v, step).integer(); }

// The term of value v at `step`: 0 at a float step.
double term_at(const QuantTerms& terms, int v, int step) {
  const auto it = terms.find({v, step});
  return it == terms.end() ? 0.0 : it->second;
}

// The next integer step of v below `step` (-1: none).
int next_integer_step(const Offer& offer, int v, int step) {
  for (int s = step + 1; s < static_cast<int>(offer.values[v].ladder.size()); ++s) {
    if (integer_step(offer, v, s)) return s;
  }
  return -1;
}

// √Σ(g·δ)² of the integer steps taken, each value's current term kept.
class QuantTally : public Tally {
 public:
  QuantTally(const Offer& offer, const QuantTerms& terms, const Assignment& assignment)
      : terms_(terms), current_(offer.values.size()), squares_(std::pow(quant_estimate(offer, terms, assignment), 2)) {
    for (size_t v = 0; v < current_.size(); ++v) current_[v] = term_at(terms, static_cast<int>(v), assignment[v]);
  }
  double total() const override { return std::sqrt(squares_); }
  double with(Assignment&, int value, int to) const override { return std::sqrt(std::max(after(value, to), 0.0)); }
  // The added square term, as the set's √Σ(g·δ)² is spent.
  double increase(const Assignment&, int value, int to, double, double) const override {
    return std::pow(term_at(terms_, value, to), 2) - std::pow(current_[value], 2);
  }
  void apply(const Assignment& assignment, int value) override {
    squares_ = after(value, assignment[value]);
    current_[value] = term_at(terms_, value, assignment[value]);
  }

 private:
  double after(int value, int to) const {
    return squares_ + std::pow(term_at(terms_, value, to), 2) - std::pow(current_[value], 2);
  }
  const QuantTerms& terms_;
  std::vector<double> current_;
  double squares_ = 0;
};

// One rung at a time (float → int8 → int4), every matrix, of the most bytes saved per unit of
// added √Σ(g·δ)², inside what the float assignment left.
void propose(const Offer& offer, const QuantTerms& terms, double target, Solution& solution) {
  QuantTally tally(offer, terms, solution.assignment);
  propose_steps(offer, tally, BytesObjective(offer), target,
                [&offer](const Assignment& a, int v) { return next_integer_step(offer, v, a[v]); }, solution);
}

// The quantized value of the largest term (-1: none).
int largest_integer(const Offer& offer, const QuantTerms& terms, const Assignment& assignment) {
  int best = -1;
  double best_term = -1;
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const int v = static_cast<int>(i);
    if (!integer_step(offer, v, assignment[v])) continue;
    if (term_at(terms, v, assignment[v]) > best_term) best = v, best_term = term_at(terms, v, assignment[v]);
  }
  return best;
}

}  // namespace

Offer with_quant_rungs(const Offer& floats, const ir::Program& program,
                       const reference::ParameterStore& parameters, exec::native::QuantScheme scheme) {
  Offer offer = floats;
  const bool pow2 = scheme == exec::native::QuantScheme::pow2;
  for (int bits : {8, 4}) {
    offer.menu.rungs.push_back({fmt::format("int{}{}", bits, pow2 ? "/pow2" : ""), RealType::f32, bits / 8.0, bits, scheme, 0});
  }
  for (Value& value : offer.values) {
    const ir::Param* param = value.kind == ValueKind::parameter ? program.find_param(value.key) : nullptr;
    const std::vector<double>* weights = param ? parameters.find(param->path) : nullptr;
    if (param == nullptr || weights == nullptr || param->type.rank() - param->stack_depth != 2 ||
        value.exclusion == Exclusion::one_element) {
      continue;  // --quant is outside rule 2 and the unknown sensitivity: every matrix
    }
    value.over = -2;
    for (size_t r = floats.menu.rungs.size(); r < offer.menu.rungs.size(); ++r) {
      const Rung& rung = offer.menu.rungs[r];
      const double bytes = precision::bytes_at_rest(*param, rung.bits, -2);
      if (bytes >= value.ladder.back().bytes) continue;
      value.ladder.push_back({static_cast<int>(r), bytes, integer_move(*weights, *param, param->type.rank() - 2, rung)});
    }
  }
  return offer;
}

QuantTerms quant_terms(const Offer& offer, const ir::Program& program, const reference::ParameterStore& parameters,
                       const precision::ParameterGradients& gradients) {
  QuantTerms terms;
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const int v = static_cast<int>(i);
    const Value& value = offer.values[v];
    for (int step = 1; step < static_cast<int>(value.ladder.size()); ++step) {
      const Rung& rung = offer.rung(v, step);
      if (!rung.integer()) continue;
      const ir::Param& param = *program.find_param(value.key);
      const std::vector<double>& w = *parameters.find(value.key);
      std::vector<double> moved = quantized_values(w, param, value.over + param.type.rank(), rung);
      reference::ParameterStore store;
      store.set(value.key, std::move(moved));
      double largest = 0;
      for (const precision::FirstOrderSums& s : precision::first_order_sums(gradients, parameters, store, {value.key})[value.key]) {
        largest = std::max(largest, std::sqrt(s.squares));
      }
      terms[{v, step}] = largest;
    }
  }
  return terms;
}

double float_estimate(const Offer& offer, const Assignment& assignment, const EstimateOptions& options) {
  double total = 0;
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const int v = static_cast<int>(i);
    if (integer_step(offer, v, assignment[v])) continue;
    const double t = term(offer, assignment, v, options);
    total += options.form == EstimateForm::sum ? t : t * t;
  }
  return options.form == EstimateForm::sum ? total : std::sqrt(total);
}

double quant_estimate(const Offer& offer, const QuantTerms& terms, const Assignment& assignment) {
  double squares = 0;
  for (size_t v = 0; v < offer.values.size(); ++v) squares += std::pow(term_at(terms, static_cast<int>(v), assignment[v]), 2);
  return std::sqrt(squares);
}

void quant_pass(const Offer& offer, const QuantTerms& terms, const Budget& budget, Measurer& measurer,
                Solution& solution, const Progress& progress) {
  if (!solution.inside) return;
  const double target = budget.absolute - solution.gap.absolute;  // what the float assignment left
  const Assignment floats = solution.assignment;
  propose(offer, terms, target, solution);
  if (progress) {
    int quantized = 0;
    for (size_t v = 0; v < offer.values.size(); ++v) quantized += integer_step(offer, static_cast<int>(v), solution.assignment[v]);
    progress(fmt::format("--quant: {} matrices proposed in integers, √Σ(g·δ)² {:.3e} against the {:.3e} the floats left",
                         quantized, quant_estimate(offer, terms, solution.assignment), target));
  }
  solution.quant_estimate = quant_estimate(offer, terms, solution.assignment);
  if (solution.assignment == floats) return;
  const Widening integers{[&](const Assignment& a) { return largest_integer(offer, terms, a); },
                          [&](int v, int from) {  // int4 → int8 → its float type
                            int to = from - 1;
                            while (to > floats[v] && !integer_step(offer, v, to)) --to;
                            return to;
                          },
                          [&](const Assignment& a, int v) { return term_at(terms, v, a[v]); },
                          "--quant "};
  measure_and_widen(offer, integers, budget, measurer, solution, progress,
                    [&] { solution.quant_estimate = quant_estimate(offer, terms, solution.assignment); });
}

}  // namespace presk::solve
