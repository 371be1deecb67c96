// What the solver offers and how it prices it (the seed's "A budget in, a realization out",
// "The cost per sample" and "Two rules"). Every real value the estimate charges is a Value:
// the stored values (typable sites, exec::native::is_typable) the envelope's run reached, and
// the real parameters by path. A Value is offered the whole menu or none of it: not when it
// has one element (rule 1), when the sweep did not reach it (its sensitivity is unknown, never
// zero), or when its first narrowing saves less than θ·B bytes (rule 2; B the all-f64 traffic
// of one sample, θ = --min-gain). A Value not offered keeps f64 and is still charged where a
// narrower reader rounds it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/reference/parameters.h"
#include "ir/ir.h"
#include "precision/envelope.h"
#include "solve/menu.h"

namespace presk::solve {

enum class ValueKind { site, parameter };
// no_effect: the step solve's unit whose narrowing alone moves no bit of the update.
enum class Exclusion { offered, one_element, unknown_sensitivity, min_gain, no_effect };
const char* exclusion_name(Exclusion exclusion);  // "offered", "rule 1", "unknown", "rule 2", "no effect"

// One rung of a value's own ladder: its bytes there (an integer rung's scales included) and,
// for an integer rung, the largest move of its values, max|ŵ − w| (ŵ the f32 q·s it denotes).
struct LadderStep {
  int rung = 0;  // into the menu's rungs
  double bytes = 0;
  double move = 0;
};

struct Value {
  ValueKind kind = ValueKind::site;
  std::string key;       // the site's name, or the parameter's full path
  std::string op;        // the site's primitive; "param" for a parameter
  std::string type;      // its IR type, "R[256, 64]"
  int64_t elements = 0;  // priced elements: one sample's (a site), all at rest (a parameter)
  double weight = 0;     // a site's arithmetic per element (the envelope's; 0 for a parameter)
  double max_abs = 0;
  precision::RoundingEnvelope rounding;  // max|fl_d(x) − x| of its exact values (envelope)
  // s_v = ‖∂L/∂v‖₁ (a tensor entry's: of Σ y, divided by the output's elements per sample);
  // nullopt where the sweep did not reach it.
  std::optional<double> sensitivity;
  std::vector<int> readers;  // indices (into Offer::values) of the sites that read it
  Exclusion exclusion = Exclusion::offered;
  double first_saving = 0;  // bytes its first narrowing (f64 → the menu's second rung) saves
  // Its rungs, widest first, each saving bytes over the one before: the menu's floats, and for
  // a parameter of rank two or more as declared, per integer width the scheme of the smaller
  // move (two rungs of the same bytes are never both offered).
  std::vector<LadderStep> ladder;
  int64_t over = -2;  // a parameter's scale axis (precision/quant_axis.h)
  // The 1-based line of the program text that wrote it: a site's let, or the first `param` let
  // that reads a parameter; 0 when unknown (a generated let). presk report links a cell to it.
  int line = 0;

  bool offered() const { return exclusion == Exclusion::offered; }
};

struct Offer {
  std::vector<Value> values;  // the envelope's typable sites in program order, then parameters
  Menu menu;
  double min_gain = 1e-3;     // θ
  double all_f64_bytes = 0;   // B: every value at f64, one sample's sites and the parameters once
  int64_t output_elements = 1;  // the entry's result elements per sample
  bool per_sample_counts = true;  // false: an envelope without per-sample counts (priced as is)

  int find(ValueKind kind, const std::string& key) const;  // -1 when absent
  int offered_count() const;
  // By a value's ladder index (an Assignment's entries).
  double bytes(int value, int step) const { return values[value].ladder[step].bytes; }
  const Rung& rung(int value, int step) const { return menu.rungs[values[value].ladder[step].rung]; }
  int narrower(int value, int step) const { return step + 1 < static_cast<int>(values[value].ladder.size()) ? step + 1 : -1; }
};

// A parameter's values stored at integer rung `rung` (its scales along axis `over`, counted from
// 0), as the f32 q·s a reader dequantizes them to; and the largest move of its values,
// max|ŵ − w|. The one place a solve quantizes a parameter (the menu's integer rungs here,
// --quant's rungs and terms in quant_pass.cpp).
std::vector<double> quantized_values(const std::vector<double>& weights, const ir::Param& param, int64_t over,
                                     const Rung& rung);
double integer_move(const std::vector<double>& weights, const ir::Param& param, int64_t over, const Rung& rung);

// The offer for `entry` of `program` (as compiled for the envelope) from `envelope`. With
// integer rungs on the menu, `parameters` (the envelope's) price each integer rung's move.
Offer make_offer(const ir::Program& program, const ir::Function& entry,
                 const precision::Envelope& envelope, const Menu& menu, double min_gain,
                 const reference::ParameterStore* parameters = nullptr);

}  // namespace presk::solve
