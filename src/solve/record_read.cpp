// Reading a solve's record back (record.h, parse_record).
#include <cmath>
#include <limits>

#include "solve/record.h"
#include "support/diagnostics.h"

namespace presk::solve {
namespace {

class Reader {
 public:
  explicit Reader(const std::string& origin) : origin_(origin) {}

  const nlohmann::json& field(const nlohmann::json& object, const char* name, const std::string& where) const {
    if (!object.is_object() || !object.contains(name)) fail(where + "." + name, "is missing");
    return object[name];
  }
  double number(const nlohmann::json& object, const char* name, const std::string& where) const {
    const nlohmann::json& value = field(object, name, where);
    if (value.is_number()) return value.get<double>();
    if (value == "inf") return std::numeric_limits<double>::infinity();
    if (value == "-inf") return -std::numeric_limits<double>::infinity();
    if (value == "nan") return std::numeric_limits<double>::quiet_NaN();
    fail(where + "." + name, "is not a number");
  }
  std::string text(const nlohmann::json& object, const char* name, const std::string& where) const {
    const nlohmann::json& value = field(object, name, where);
    if (!value.is_string()) fail(where + "." + name, "is not a string");
    return value.get<std::string>();
  }
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    user_error("E1111").hint("solve again: presk solve … --out R.json writes a complete record")
        << origin_ << ": the solve record's field `" << field << "` " << what;
    internal_assert(false);
    std::abort();
  }

 private:
  const std::string& origin_;
};

RecordValue read_value(const Reader& r, const nlohmann::json& v, const std::string& where) {
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
  return value;
}

RecordMove read_move(const Reader& r, const nlohmann::json& m, const std::string& where, size_t values) {
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

Record parse_record(const nlohmann::json& file, const std::string& origin) {
  if (!file.is_object() || !file.contains("solve")) {
    user_error("E1110").hint("explain reads what presk solve --out wrote; or explain PROGRAM … --budget ε solves first")
        << origin << " has no `solve` field: it was not written by presk solve";
  }
  const Reader r(origin);
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
  const nlohmann::json& values = r.field(s, "values", "solve");
  const nlohmann::json& moves = r.field(s, "moves", "solve");
  if (!values.is_array()) r.fail("solve.values", "is not an array");
  if (!moves.is_array()) r.fail("solve.moves", "is not an array");
  for (size_t i = 0; i < values.size(); ++i) {
    record.values.push_back(read_value(r, values[i], "solve.values[" + std::to_string(i) + "]"));
  }
  for (size_t i = 0; i < moves.size(); ++i) {
    record.moves.push_back(read_move(r, moves[i], "solve.moves[" + std::to_string(i) + "]", values.size()));
  }
  return record;
}

}  // namespace presk::solve
