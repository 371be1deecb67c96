// presk report: one self-contained HTML page of a solve (docs/precision.md, "report"): the
// realization as a type map of the program, each value's sensitivity and term on a log scale, the
// estimate against the budget, the measured gaps, the moves of explain; and, given the curve's
// JSON (scripts/experiment-curve), the ε curve. No network: inline CSS and SVG only, no script.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "solve/record.h"

namespace presk::report {

// One solve of the curve: a budget, on the loss (relative) or on the logits (absolute).
struct CurvePoint {
  std::string on;      // "loss" | "logits"
  std::string label;   // "1e-3", "ε*(1e-2)"
  double budget = 0;   // as asked (relative on the loss, absolute on the logits)
  double absolute = 0; // what the gaps are compared with
  double traffic_ratio = 0;            // all-f64 bytes / the realization's
  double gap_in_sample = 0;
  std::optional<double> gap_held_out;
  bool inside = false;
  std::optional<double> quality;        // held-out loss of the model trained under the nests
  std::optional<int64_t> flipped, allowed;  // decisions, on the logits
};

struct Curve {
  std::string title;                 // what was swept, in words
  std::vector<int64_t> seeds;        // the all-f64 trainings' seeds
  std::vector<double> yardstick;     // their held-out losses (the seed-to-seed spread)
  std::vector<CurvePoint> points;
};

// The curve of a curve file's JSON: E1173 (naming the field) when it is not one.
Curve parse_curve(const nlohmann::json& file, const std::string& origin);

// The page. `origin` names the realization file in the title (and where the program is looked
// for beside it, report/sections.h's find_program_text).
std::string report_html(const solve::Record& record, const std::string& origin, const Curve* curve);

// Reads a realization file and an optional curve file and writes the page atomically:
// E1170 (not a solve's realization), E1171/E1172 (unreadable or not JSON), E1173.
void write_report(const std::string& realization, const std::string& curve, const std::string& out);

// The same from a realization's JSON already in memory (presk solve --report).
void write_report(const nlohmann::json& realization_file, const std::string& origin, const std::string& curve,
                  const std::string& out);

}  // namespace presk::report
