// Pricing by predicted time, and the greedy that minimises it (price.h).
#include "solve/price.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "profile/op_cost.h"
#include "solve/greedy.h"
#include "solve/propose.h"

namespace presk::solve {
namespace {

std::string type_key(const ValueType& t) {
  if (t.bits > 0) return t.bits == 8 ? "int8" : "int4";
  return exec::native::real_type_name(t.type);
}

// The elements of an IR type as the envelope prints it ("R[256, 64]" → 16384, "R" → 1).
double type_elements(const std::string& text) {
  double product = 1;
  size_t i = text.find('[');
  while (i != std::string::npos && i < text.size()) {
    const size_t digit = text.find_first_of("0123456789", i);
    if (digit == std::string::npos) break;
    size_t end = digit;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    product *= std::stod(text.substr(digit, end - digit));
    i = end;
  }
  return product;
}

}  // namespace

Types types_of(const Offer& offer, const Assignment& assignment) {
  Types types(offer.values.size());
  for (size_t v = 0; v < types.size(); ++v) {
    const Rung& rung = offer.rung(static_cast<int>(v), assignment[v]);
    types[v] = {rung.type, rung.bits};
  }
  return types;
}

Assignment uniform_assignment(const Offer& offer, const std::string& rung_name) {
  Assignment assignment(offer.values.size(), 0);
  for (size_t v = 0; v < offer.values.size(); ++v) {
    for (size_t s = 0; s < offer.values[v].ladder.size(); ++s) {
      if (offer.rung(static_cast<int>(v), static_cast<int>(s)).name == rung_name) assignment[v] = static_cast<int>(s);
    }
  }
  return assignment;
}

Assignment floor_assignment(const Offer& offer) {
  Assignment assignment(offer.values.size(), 0);
  for (size_t v = 0; v < offer.values.size(); ++v) {
    if (offer.values[v].offered()) assignment[v] = static_cast<int>(offer.values[v].ladder.size()) - 1;
  }
  return assignment;
}

Pricer::Pricer(const Offer& offer, const profile::Profile& profile)
    : offer_(offer), profile_(profile), reads_(offer.values.size()), calls_(offer.values.size(), 1) {
  for (size_t v = 0; v < offer.values.size(); ++v) {
    for (int reader : offer.values[v].readers) reads_[reader].push_back(static_cast<int>(v));
    const double per_call = type_elements(offer.values[v].type);
    if (per_call > 0) calls_[v] = std::max(1.0, std::round(offer.values[v].elements / per_call));
  }
}

double Pricer::site_seconds(const Types& types, int value, bool with_conversions) const {
  const Value& site = offer_.values[value];
  if (site.kind != ValueKind::site) return 0;
  const ValueType& own = types[value];
  const std::optional<ir::Op> op = ir::op_from_name(site.op);
  const profile::OpClass op_class = op ? profile::op_class(*op) : profile::OpClass::elementwise;
  const profile::Roofline& roofline = profile_.roofline(op_class, type_key(own));
  const double elements = static_cast<double>(site.elements);
  std::vector<profile::OperandRead> operands;
  for (int u : reads_[value]) {
    const Value& operand = offer_.values[u];
    operands.push_back({static_cast<double>(operand.elements), type_key(types[u]), types[u].type,
                        operand.kind == ValueKind::parameter});
  }
  const profile::OpCost cost =
      profile::op_cost(profile_, roofline, elements, elements * site.weight, type_key(own), own.type, operands);
  return calls_[value] * roofline.latency + cost.throughput + (with_conversions ? cost.conversions : 0.0);
}

double Pricer::seconds(const Types& types) const {
  double total = 0;
  for (size_t v = 0; v < types.size(); ++v) total += site_seconds(types, static_cast<int>(v));
  return total;
}

double Pricer::local_seconds(const Types& types, int value, bool conversions) const {
  double total = site_seconds(types, value, conversions);
  for (int reader : offer_.values[value].readers) {
    if (reader != value) total += site_seconds(types, reader, conversions);
  }
  return total;
}

namespace {

// Predicted seconds: a step saves what the values it changes (its own site and its readers')
// cost less at its type; hoped for, with every edge free.
class TimeObjective : public Objective {
 public:
  TimeObjective(const Offer& offer, const Pricer& pricer) : offer_(offer), pricer_(pricer) {}
  Gain gain(const Assignment& assignment, int value, int to) const override {
    Assignment next = assignment;
    next[value] = to;
    const Types types = types_of(offer_, assignment), after = types_of(offer_, next);
    return {pricer_.local_seconds(types, value) - pricer_.local_seconds(after, value),
            pricer_.local_seconds(types, value, false) - pricer_.local_seconds(after, value, false)};
  }

 private:
  const Offer& offer_;
  const Pricer& pricer_;
};

double near_seconds(const Offer& offer, const Pricer& pricer, const Assignment& assignment, int value) {
  return pricer.local_seconds(types_of(offer, assignment), value);
}

void time_greedy(const Offer& offer, const Pricer& pricer, const EstimateOptions& options, double target,
                 Solution& solution) {
  solution.assignment.assign(offer.values.size(), 0);
  TermTally tally(offer, options, solution.assignment);
  const Trajectory trajectory = propose_steps(offer, tally, TimeObjective(offer, pricer), target, offered_steps(offer), solution);
  keep_least(trajectory, [&](const Assignment& a) { return pricer.seconds(types_of(offer, a)); }, solution);
  undo_slower([&](const Assignment& a, int v) { return near_seconds(offer, pricer, a, v); }, solution.assignment,
              solution.moves);
  refuse_unfit(offer, TermTally(offer, options, solution.assignment), offered_steps(offer), target, solution);
  solution.proposed = solution.assignment;
}

}  // namespace

TimeProposal propose_by_time(const Offer& offer, const Pricer& pricer, const EstimateOptions& options, double target,
                             Solution& solution) {
  Solution by_time = solution, by_bytes = solution;
  time_greedy(offer, pricer, options, target, by_time);
  propose_greedy(offer, options, target, by_bytes);
  undo_slower([&](const Assignment& a, int v) { return near_seconds(offer, pricer, a, v); }, by_bytes.assignment,
              by_bytes.moves);
  by_bytes.proposed = by_bytes.assignment;
  TimeProposal out{pricer.seconds(types_of(offer, by_time.assignment)), pricer.seconds(types_of(offer, by_bytes.assignment)),
                   false};
  out.kept_bytes = out.by_bytes < out.by_time;
  solution = out.kept_bytes ? std::move(by_bytes) : std::move(by_time);
  return out;
}

TimePrediction predict_times(const Offer& offer, const Pricer& pricer, const Assignment& realization) {
  TimePrediction out;
  out.all_f64 = pricer.seconds(types_of(offer, Assignment(offer.values.size(), 0)));
  out.all_f32 = pricer.seconds(types_of(offer, uniform_assignment(offer, "f32")));
  out.realization = pricer.seconds(types_of(offer, realization));
  out.floor = pricer.seconds(types_of(offer, floor_assignment(offer)));
  return out;
}

}  // namespace presk::solve
