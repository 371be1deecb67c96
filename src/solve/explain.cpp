// The reasons of a solve's decisions (explain.h).
#include "solve/explain.h"

#include <fmt/format.h>

namespace presk::solve {
namespace {

std::string not_offered_reason(const RecordValue& value, const Record& record) {
  if (value.offered == "rule 1") return "not offered (rule 1): one element, nothing to save";
  if (value.offered == "unknown") {
    return "not offered: its sensitivity is unknown (the reverse sweep did not reach it), never taken as zero";
  }
  return fmt::format("not offered (rule 2): its first narrowing saves {:.4g} bytes, under θ·B = {:.4g}",
                     value.first_saving, record.min_gain_bytes);
}

// An offered value without a move: the exhaustive optimum left it where it is, or its ladder
// has one rung.
std::string no_move_reason(const RecordValue& value, const Record& record) {
  const nlohmann::json& options = record.raw.contains("options") ? record.raw["options"] : nlohmann::json::object();
  if (options.value("exhaustive", false)) {
    return fmt::format("no step was taken: the exhaustive optimum (the fewest bytes whose estimate is within the target "
                       "{:.3e}) leaves it at {}", record.target, value.final_type);
  }
  if (record.raw.contains("predicted")) {
    return fmt::format("no step was taken: the time greedy (--profile) predicted no narrowing of it to save time; it stays {}",
                       value.final_type);
  }
  return fmt::format("no step was taken: {} is the only rung offered to it", value.final_type);
}

}  // namespace

std::string move_reason(const RecordMove& m, int n, double target, double budget) {
  if (m.kind == "narrow") {
    return fmt::format("narrowed {} → {} (move {}: saves {:.4g} bytes, adds {:.3e} to the estimate, then {:.3e})",
                       m.from, m.to, n, m.saves, m.term, m.estimate);
  }
  if (m.kind == "refuse") {
    return fmt::format("refused {} → {} (move {}: the estimate would be {:.3e}, above its target {:.3e} by {:.3e})",
                       m.from, m.to, n, m.estimate, target, m.estimate - target);
  }
  if (m.kind == "widen") {
    return fmt::format("widened {} → {} after measurement {} (move {}: gap then {:.3e} against the budget {:.3e}; "
                       "its term {:.3e} was the largest)",
                       m.from, m.to, m.measurement, n, m.gap, budget, m.term);
  }
  if (m.kind == "try_narrow") {
    return m.inside ? fmt::format("narrowed {} → {} by measurement {} (move {}: gap {:.3e}, inside)", m.from, m.to,
                                  m.measurement, n, m.gap)
                    : fmt::format("tried {} → {} by measurement {} (move {}: gap {:.3e}, outside; not kept)", m.from,
                                  m.to, m.measurement, n, m.gap);
  }
  if (m.kind == "undo") {
    return fmt::format("undone {} → {} on the held-out samples (move {}: held-out gap {:.3e})", m.from, m.to, n, m.gap);
  }
  return m.kind;
}

std::vector<Explanation> explain(const Record& record) {
  std::vector<Explanation> out;
  for (size_t i = 0; i < record.values.size(); ++i) {
    const RecordValue& value = record.values[i];
    Explanation e{value.kind, value.key, value.op, value.final_type, "", {}, {}};
    const bool offered = value.offered == "offered";
    if (!offered) {
      e.decision = "not offered, " + value.final_type;
      e.reasons.push_back(not_offered_reason(value, record));
    }
    bool widened = false;
    for (size_t n = 0; n < record.moves.size(); ++n) {
      const RecordMove& m = record.moves[n];
      if (m.value != static_cast<int>(i)) continue;
      widened |= m.kind == "widen" || m.kind == "undo";
      e.reasons.push_back(move_reason(m, static_cast<int>(n + 1), record.target, record.budget));
      e.moves.push_back(static_cast<int>(n + 1));
    }
    if (!offered && !e.moves.empty()) {  // --quant's integer pass is outside the rules
      e.reasons.push_back("--quant offers every matrix its integer rungs, whatever rule 2 or its sensitivity");
    }
    // The widest rung of a ladder: the float solve's f64, the chip's values, as computed and as kept.
    if (offered && (value.final_type == "f64" || value.final_type == "values" || value.final_type == "as_computed" ||
                    value.final_type == "as_kept")) {
      e.decision = (widened ? "widened back to " : "kept at ") + value.final_type;
    } else if (offered) {
      e.decision = (widened ? "widened to " : "narrowed to ") + value.final_type;
    }
    if (e.reasons.empty()) e.reasons.push_back(no_move_reason(value, record));
    if (!value.forms.empty()) e.reasons.push_back("the attention at " + value.final_type + ": " + value.forms);
    if (value.seconds) {
      e.reasons.push_back(fmt::format("predicted {:.4e} s per sample at {} by the chip's profile ({:.4e} at its widest)",
                                      *value.seconds, value.final_type, *value.seconds_widest));
    }
    if (value.over) {
      const size_t group = value.final_type.find("/g");
      const std::string scales =
          group == std::string::npos
              ? fmt::format("one per index of every axis but {}", *value.over)
              : fmt::format("one per {} consecutive elements along axis {}", value.final_type.substr(group + 2), *value.over);
      e.reasons.push_back(fmt::format("stored as {}: {:.4g} bytes with its f32 scales, {}; the largest move of its values {:.3e}",
                                      value.final_type, value.bytes, scales, value.move));
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace presk::solve
