// Pricing by predicted time, and the greedy that minimises it (price.h).
#include "solve/price.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "solve/propose.h"

namespace presk::solve {
namespace {

double bytes_per_element(const ValueType& t) {
  if (t.bits > 0) return t.bits / 8.0;
  return facts(exec::native::element_type_of(t.type)).bits / 8.0;
}

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

struct Step {
  int value = -1, to = 0;
  double saved = 0;  // predicted seconds
  double hoped = 0;  // predicted seconds with free edges (its neighbours at its type)
  double added = 0;  // the estimate's increase
  double estimate = 0;
  double bytes = 0;
};

// 0: it saves time where it stands; 1: only with free edges; 2: not even then (never taken).
int tier(const Step& s) { return s.saved > 0 ? 0 : s.hoped > 0 ? 1 : 2; }

// By tier, then seconds saved (tier 1: hoped) per unit of term (a step that adds nothing: by
// its saving), then the larger saving, then program order.
bool better(const Step& a, const Step& b) {
  if (tier(a) != tier(b)) return tier(a) < tier(b);
  const double sa = tier(a) == 0 ? a.saved : a.hoped, sb = tier(b) == 0 ? b.saved : b.hoped;
  const double ra = a.added > 0 ? sa / a.added : std::numeric_limits<double>::infinity();
  const double rb = b.added > 0 ? sb / b.added : std::numeric_limits<double>::infinity();
  if (ra != rb) return ra > rb;
  if (sa != sb) return sa > sb;
  return a.value < b.value;
}

Move narrow_move(MoveKind kind, const Step& step, int from) {
  Move move;
  move.kind = kind;
  move.value = step.value;
  move.from = from;
  move.to = step.to;
  move.saves = step.bytes;
  move.term = step.added;
  move.estimate = step.estimate;
  return move;
}

// Widens, one step at a time in program order until nothing changes, every value whose
// narrowing the profile predicts slower where it now stands; drops its last narrowing move.
void undo_slower(const Offer& offer, const Pricer& pricer, Assignment& assignment, std::vector<Move>& moves) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t v = 0; v < assignment.size(); ++v) {
      if (assignment[v] == 0) continue;
      Assignment wider = assignment;
      --wider[v];
      const int value = static_cast<int>(v);
      if (pricer.local_seconds(types_of(offer, wider), value) < pricer.local_seconds(types_of(offer, assignment), value)) {
        assignment = wider;
        for (auto it = moves.rbegin(); it != moves.rend(); ++it) {
          if (it->kind == MoveKind::narrow && it->value == value) {
            moves.erase(std::next(it).base());
            break;
          }
        }
        changed = true;
      }
    }
  }
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
  double bytes = elements * bytes_per_element(own);
  double conversions = 0;
  for (int u : reads_[value]) {
    const Value& operand = offer_.values[u];
    const double n = static_cast<double>(operand.elements);
    bytes += n * bytes_per_element(types[u]);
    if (with_conversions) conversions += n * (operand.kind == ValueKind::parameter ? profile_.load_cost(type_key(types[u]), own.type)
                                                             : profile_.edge_cost(types[u].type, own.type));
  }
  return calls_[value] * roofline.latency + std::max(elements * site.weight / roofline.rate, bytes / roofline.bandwidth) +
         conversions;
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

void time_greedy(const Offer& offer, const Pricer& pricer, const EstimateOptions& options, double target,
                 Solution& solution) {
  Assignment assignment(offer.values.size(), 0);
  std::vector<char> refused(offer.values.size(), 0);
  std::vector<Assignment> trajectory = {assignment};
  std::vector<size_t> moves_at = {solution.moves.size()};  // moves recorded when each was reached
  std::vector<double> seconds = {pricer.seconds(types_of(offer, assignment))};
  for (;;) {
    const double current = estimate(offer, assignment, options);
    const Types types = types_of(offer, assignment);
    std::vector<Step> steps;
    for (size_t i = 0; i < offer.values.size(); ++i) {
      const int v = static_cast<int>(i);
      const int to = offer.narrower(v, assignment[v]);
      if (!offer.values[v].offered() || refused[v] || to < 0) continue;
      Assignment next = assignment;
      next[v] = to;
      Step step;
      step.value = v, step.to = to;
      step.estimate = estimate(offer, next, options);
      step.bytes = offer.bytes(v, assignment[v]) - offer.bytes(v, to);
      step.added = std::max(0.0, step.estimate - current);
      if (step.estimate > target) {  // it cannot fit later: narrowing never lowers the estimate
        refused[v] = 1;
        solution.moves.push_back(narrow_move(MoveKind::refuse, step, assignment[v]));
        continue;
      }
      const Types after = types_of(offer, next);
      step.saved = pricer.local_seconds(types, v) - pricer.local_seconds(after, v);
      step.hoped = pricer.local_seconds(types, v, false) - pricer.local_seconds(after, v, false);
      steps.push_back(step);
    }
    if (steps.empty()) break;
    const Step best = *std::min_element(steps.begin(), steps.end(), better);
    if (tier(best) == 2) break;
    solution.moves.push_back(narrow_move(MoveKind::narrow, best, assignment[best.value]));
    assignment[best.value] = best.to;
    trajectory.push_back(assignment);
    moves_at.push_back(solution.moves.size());
    seconds.push_back(pricer.seconds(types_of(offer, assignment)));
  }
  // The prefix of the least predicted time (the shortest of equals), its moves alone.
  const size_t chosen = static_cast<size_t>(std::min_element(seconds.begin(), seconds.end()) - seconds.begin());
  assignment = trajectory[chosen];
  solution.moves.resize(moves_at[chosen]);
  undo_slower(offer, pricer, assignment, solution.moves);
  solution.proposed = assignment;
  solution.assignment = assignment;
}

}  // namespace

TimeProposal propose_by_time(const Offer& offer, const Pricer& pricer, const EstimateOptions& options, double target,
                             Solution& solution) {
  Solution by_time = solution, by_bytes = solution;
  time_greedy(offer, pricer, options, target, by_time);
  propose_greedy(offer, options, target, by_bytes);
  undo_slower(offer, pricer, by_bytes.assignment, by_bytes.moves);
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
