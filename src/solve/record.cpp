// The solve's record (record.h).
#include "solve/record.h"

#include <cmath>
#include <limits>

#include "support/diagnostics.h"
#include "support/json_reader.h"

namespace presk::solve {
namespace {

using Json = nlohmann::ordered_json;

Json json_number(double value) { return presk::json_number<Json>(value); }

const std::string& rung_name(const Offer& offer, int value, int step) { return offer.rung(value, step).name; }

Json gap_json(const precision::MeasuredGap& gap, const Budget& budget) {
  return {{"absolute", json_number(gap.absolute)},
          {"relative", json_number(gap.relative())},
          {"magnitude", json_number(gap.magnitude)},
          {"inside", gap.absolute <= budget.absolute}};
}

Json values_json(const Offer& offer, const Solution& solution, const SolveOptions& options) {
  Json values = Json::array();
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const Value& v = offer.values[i];
    const int index = static_cast<int>(i);
    values.push_back({{"kind", v.kind == ValueKind::site ? "site" : "parameter"},
                      {"key", v.key},
                      {"op", v.op},
                      {"type", v.type},
                      {"elements", v.elements},
                      {"sensitivity", v.sensitivity ? json_number(*v.sensitivity) : Json(nullptr)},
                      {"offered", exclusion_name(v.exclusion)},
                      {"first_saving", json_number(v.first_saving)},
                      {"proposed", rung_name(offer, index, solution.proposed[i])},
                      {"final", rung_name(offer, index, solution.assignment[i])},
                      {"bytes", json_number(offer.bytes(index, solution.assignment[i]))},
                      {"term", json_number(term(offer, solution.assignment, index, options.estimate))}});
    if (v.line > 0) values.back()["line"] = v.line;
    if (offer.rung(index, solution.assignment[i]).integer()) {  // the integer decision's facts
      values.back()["over"] = v.over;
      values.back()["move"] = json_number(v.ladder[solution.assignment[i]].move);
    }
  }
  return values;
}

const char* narrow_name(NarrowMode mode) {
  return mode == NarrowMode::none ? "none" : mode == NarrowMode::measured ? "measured" : "heldout";
}

}  // namespace

Json moves_json(const Offer& offer, const Solution& solution) {
  Json moves = Json::array();
  for (size_t n = 0; n < solution.moves.size(); ++n) {
    const Move& m = solution.moves[n];
    Json move = {{"n", n + 1}, {"kind", move_kind_name(m.kind)}};
    if (m.value >= 0) {
      move["value"] = m.value;
      move["key"] = offer.values[m.value].key;
      move["from"] = rung_name(offer, m.value, m.from);
      move["to"] = rung_name(offer, m.value, m.to);
    }
    if (m.kind == MoveKind::narrow || m.kind == MoveKind::refuse || m.kind == MoveKind::try_narrow) {
      move["saves"] = json_number(m.saves);
    }
    if (m.kind == MoveKind::narrow || m.kind == MoveKind::refuse) {
      move["term"] = json_number(m.term);
      move["estimate"] = json_number(m.estimate);
    }
    if (m.kind != MoveKind::narrow && m.kind != MoveKind::refuse) move["gap"] = json_number(m.gap);
    if (m.measurement > 0) move["measurement"] = m.measurement;
    if (m.kind == MoveKind::measure || m.kind == MoveKind::try_narrow) move["inside"] = m.inside;
    if (m.kind == MoveKind::measure) move["held_out"] = m.held_out;
    if (m.kind == MoveKind::widen) move["term"] = json_number(m.term);
    moves.push_back(std::move(move));
  }
  return moves;
}

Json realization_file(const Offer& offer, const Solution& solution, const Budget& budget,
                      const SolveOptions& options, const RecordContext& context) {
  const nlohmann::json realization = exec::native::realization_to_json(realization_of(offer, solution.assignment));
  Json file;
  for (const char* field : {"format", "default", "order", "sites", "params", "quant"}) file[field] = realization[field];
  const double all_f64 = offer.all_f64_bytes, bytes = traffic(offer, solution.assignment);
  Json record = {
      {"format", 1},
      {"program", context.program},
      {"program_hash", context.program_hash},
      {"entry", context.entry},
      {"envelope", {{"path", context.envelope}, {"sha256", context.envelope_sha256}}},
      {"budget", {{"kind", budget.relative ? "relative" : "absolute"}, {"epsilon", json_number(budget.epsilon)},
                  {"absolute", json_number(budget.absolute)}, {"source", budget.source}}},
      {"options", {{"menu", options.menu.text()}, {"rounding", options.estimate.unit_rounding ? "unit" : "measured"},
                   {"estimate", options.estimate.form == EstimateForm::sum ? "sum" : "rss"},
                   {"margin", json_number(options.margin)}, {"narrow", narrow_name(options.narrow)},
                   {"min_gain", json_number(options.min_gain)}, {"exhaustive", options.exhaustive}}},
      {"traffic", {{"all_f64", json_number(all_f64)}, {"realization", json_number(bytes)},
                   {"ratio", json_number(bytes > 0 ? all_f64 / bytes : 0)},
                   {"per_sample", offer.per_sample_counts}}},
      {"min_gain_bytes", json_number(offer.min_gain * all_f64)},
      {"target", json_number(solution.target)},
      {"estimate", json_number(solution.estimate)},
      {"inside", solution.inside},
      {"rounds", solution.rounds},
      {"measurements", solution.measurements},
      {"gap", {{"in_sample", gap_json(solution.gap, budget)},
               {"held_out", solution.held_out ? gap_json(*solution.held_out, budget) : Json(nullptr)},
               {"held_out_samples", solution.held_out_samples}}},
      {"values", values_json(offer, solution, options)},
      {"moves", moves_json(offer, solution)}};
  if (options.quant) {
    record["options"]["quant"] = true;
    record["options"]["scheme"] = options.scheme == exec::native::QuantScheme::pow2 ? "pow2" : "absmax";
    if (solution.quant_estimate) record["quant_estimate"] = json_number(*solution.quant_estimate);
  }
  file["solve"] = std::move(record);
  return file;
}

}  // namespace presk::solve
