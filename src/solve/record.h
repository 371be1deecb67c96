// The record of a solve, the `solve` field of the realization file it writes (docs/precision.md,
// "solve"): the budget, the envelope's hash, the options, every value with its decision, every
// move, and what was measured. The executor ignores it; explain reads it back. Written with
// sorted, fixed content (no times, no dates), so the same solve writes the same bytes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "solve/solve.h"
#include "support/json_fields.h"

namespace presk::solve {

struct RecordContext {
  std::string program;
  std::string program_hash;
  std::string entry;
  std::string envelope;         // its path as given
  std::string envelope_sha256;  // of its bytes
};

// The whole realization file: format 1, "default": "f64", the typed sites and params, and
// `solve`, the record.
nlohmann::ordered_json realization_file(const Offer& offer, const Solution& solution, const Budget& budget,
                                        const SolveOptions& options, const RecordContext& context);

// What explain reads back.
struct RecordValue {
  std::string kind;  // "site" | "parameter"
  std::string key, op, type;
  int64_t elements = 0;
  std::optional<double> sensitivity;
  std::string offered;  // exclusion_name
  double first_saving = 0;
  std::string proposed, final_type;
  double bytes = 0, term = 0;
  std::optional<int64_t> over;  // an integer final rung: its scale axis and largest move
  double move = 0;
  int line = 0;  // its line in the program text (0: unknown)
  std::string forms;  // a chip's attention: the forms it takes its operands in at its final rung
  std::optional<double> seconds, seconds_widest;  // a chip's solve with a profile: predicted per sample
};
struct RecordMove {
  std::string kind;  // move_kind_name
  int value = -1;
  std::string from, to;
  double saves = 0, term = 0, estimate = 0, gap = 0;
  int measurement = 0;
  bool inside = false, kept = false, held_out = false;
};
struct Record {
  nlohmann::json raw;  // the whole `solve` object
  std::string entry, program;
  double budget = 0, epsilon = 0, target = 0, estimate = 0, min_gain_bytes = 0;
  std::string budget_kind;
  std::vector<RecordValue> values;
  std::vector<RecordMove> moves;
};

// The moves of a record (the entry solve's, or the step solve's: src/step/solve_step.h), the
// array `moves` of `solve` at path `where`, each naming one of `values` values; `fields` says
// which kind of file it is and its code.
std::vector<RecordMove> read_moves(const JsonFields& fields, const nlohmann::json& solve, const std::string& where,
                                   size_t values);
// The moves as the record writes them (move kinds, rung names, and each kind's numbers).
nlohmann::ordered_json moves_json(const Offer& offer, const Solution& solution);

// The record of a realization file's JSON: E1110 when it has no `solve` field (a realization
// written by hand), E1111 when the field is malformed (naming the field).
Record parse_record(const nlohmann::json& file, const std::string& origin);

}  // namespace presk::solve
