// The report's sections, each an HTML fragment with its inline SVG (report.h). Internal to
// src/report: report.cpp assembles them into the page.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "report/report.h"
#include "solve/record.h"

namespace presk::report {

// The type map: one row per function (sites) or module path (parameters), one cell per value,
// coloured by its final type, sized and labelled by its bytes. Each cell is the one element
// of class `cell` carrying the value's key; with `link_lines`, a link to its line of the program.
std::string type_map_section(const solve::Record& record, bool link_lines);

// Every value's sensitivity ‖∂L/∂v‖₁ and its term in the estimate on log scales, the term
// panel with the estimate's target.
std::string value_scales_section(const solve::Record& record);

// What the report reads of the record beyond solve::Record (report.cpp reads it, E1174).
struct Summary {
  double all_f64_bytes = 0, bytes = 0, ratio = 0;
  double gap_in_sample = 0;
  std::optional<double> gap_held_out;
  int64_t held_out_samples = 0, rounds = 0, measurements = 0;
  bool inside = false;
  std::string menu, budget_source;
};

// The budget, the target, the estimate and the measured gaps in and out of sample on one log
// scale, with the summary table (traffic, rounds, measurements).
std::string budget_section(const solve::Record& record, const Summary& summary);

// explain's decisions and reasons per value, and the solve's moves in order.
std::string moves_section(const solve::Record& record);

// The ε curve: the measured gaps and the traffic against the budget (log–log), the quality
// axis against the seed-to-seed spread, and its table.
std::string curve_section(const Curve& curve);

// The program text a solve typed, found from the record (its path, then beside the realization
// file) and checked against its program_sha256; `note` says why it is not shown otherwise.
struct ProgramText {
  bool shown = false;
  std::string path, text, note;
};
ProgramText find_program_text(const solve::Record& record, const std::string& origin);

// The program, one line per source line (anchors `line-N`), each with the values written there:
// their keys, IR types and final types. The type map's cells link to these anchors.
std::string program_section(const solve::Record& record, const ProgramText& program);

}  // namespace presk::report
