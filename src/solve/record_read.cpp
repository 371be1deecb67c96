// Reading a solve's record back (record.h, parse_record).
#include <cmath>
#include <limits>

#include "solve/record.h"
#include "support/diagnostics.h"
#include "support/json_fields.h"

namespace presk::solve {
namespace {

const JsonFileKind kRecordKind{"the solve record in", "E1111", "solve again: presk solve … --out R.json writes a complete record",
                               1, nullptr};

RecordValue read_value(const JsonFields& r, const nlohmann::json& v, const std::string& where) {
  RecordValue value;
  value.kind = r.text(v, "kind", where);
  value.key = r.text(v, "key", where);
  value.op = r.text(v, "op", where);
  value.type = r.text(v, "type", where);
  value.elements = static_cast<int64_t>(r.number(v, "elements", where));
  if (!r.field(v, "sensitivity", where).is_null()) value.sensitivity = r.number(v, "sensitivity", where);
  value.offered = r.text(v, "offered", where);
  value.first_saving = r.number(v, "first_saving", where);
  value.proposed = r.text(v, "proposed", where);
  value.final_type = r.text(v, "final", where);
  value.bytes = r.number(v, "bytes", where);
  value.term = r.number(v, "term", where);
  if (v.contains("over")) {
    value.over = static_cast<int64_t>(r.number(v, "over", where));
    value.move = r.number(v, "move", where);
  }
  if (v.contains("line")) value.line = static_cast<int>(r.number(v, "line", where));
  if (v.contains("forms")) value.forms = r.text(v, "forms", where);
  if (v.contains("seconds")) {
    value.seconds = r.number(v, "seconds", where);
    value.seconds_widest = r.number(v, "seconds_widest", where);
  }
  return value;
}

RecordMove read_move(const JsonFields& r, const nlohmann::json& m, const std::string& where, size_t values) {
  RecordMove move;
  move.kind = r.text(m, "kind", where);
  if (m.contains("value")) {
    const double index = r.number(m, "value", where);
    if (!(index >= 0 && index < static_cast<double>(values))) r.fail(where + ".value", "names no value of the record");
    move.value = static_cast<int>(index);
    move.from = r.text(m, "from", where);
    move.to = r.text(m, "to", where);
  }
  auto optional_number = [&](const char* name, double& out) {
    if (m.contains(name)) out = r.number(m, name, where);
  };
  optional_number("saves", move.saves);
  optional_number("term", move.term);
  optional_number("estimate", move.estimate);
  optional_number("gap", move.gap);
  double measurement = 0;
  optional_number("measurement", measurement);
  move.measurement = static_cast<int>(measurement);
  move.inside = m.value("inside", false);
  move.held_out = m.value("held_out", false);
  return move;
}

}  // namespace

std::vector<RecordMove> read_moves(const JsonFields& fields, const nlohmann::json& solve, const std::string& where,
                                   size_t values) {
  std::vector<RecordMove> out;
  const nlohmann::json& moves = fields.array(solve, "moves", where);
  for (size_t i = 0; i < moves.size(); ++i) {
    out.push_back(read_move(fields, moves[i], where + ".moves[" + std::to_string(i) + "]", values));
  }
  return out;
}

Record parse_record(const nlohmann::json& file, const std::string& origin) {
  if (!file.is_object() || !file.contains("solve")) {
    user_error("E1110").hint("explain reads what presk solve --out wrote; or explain PROGRAM … --budget ε solves first")
        << origin << " has no `solve` field: it was not written by presk solve";
  }
  const JsonFields r(origin, kRecordKind);
  const nlohmann::json& s = file["solve"];
  Record record;
  record.raw = s;
  record.entry = r.text(s, "entry", "solve");
  record.program = r.text(s, "program", "solve");
  const nlohmann::json& budget = r.field(s, "budget", "solve");
  record.budget = r.number(budget, "absolute", "solve.budget");
  record.epsilon = r.number(budget, "epsilon", "solve.budget");
  record.budget_kind = r.text(budget, "kind", "solve.budget");
  record.target = r.number(s, "target", "solve");
  record.estimate = r.number(s, "estimate", "solve");
  record.min_gain_bytes = r.number(s, "min_gain_bytes", "solve");
  const nlohmann::json& values = r.array(s, "values", "solve");
  for (size_t i = 0; i < values.size(); ++i) {
    record.values.push_back(read_value(r, values[i], "solve.values[" + std::to_string(i) + "]"));
  }
  record.moves = read_moves(r, s, "solve", values.size());
  return record;
}

}  // namespace presk::solve
