// The solution's realization (solution.h).
#include "solve/solution.h"

namespace presk::solve {

const char* move_kind_name(MoveKind kind) {
  switch (kind) {
    case MoveKind::narrow: return "narrow";
    case MoveKind::refuse: return "refuse";
    case MoveKind::measure: return "measure";
    case MoveKind::widen: return "widen";
    case MoveKind::try_narrow: return "try_narrow";
    case MoveKind::undo: return "undo";
  }
  return "?";
}

exec::native::Realization realization_of(const Offer& offer, const Assignment& assignment) {
  exec::native::Realization realization;
  realization.origin = "the solver's candidate";
  realization.default_type = offer.menu.rungs[0].type;
  for (size_t v = 0; v < offer.values.size(); ++v) {
    if (assignment[v] == 0) continue;
    const Value& value = offer.values[v];
    const Rung& rung = offer.rung(static_cast<int>(v), assignment[v]);
    if (rung.integer()) {
      realization.quant[value.key] = {rung.bits, value.over, rung.scheme, rung.group};
      continue;
    }
    auto& table = value.kind == ValueKind::site ? realization.sites : realization.params;
    table[value.key] = rung.type;
  }
  return realization;
}

}  // namespace presk::solve
