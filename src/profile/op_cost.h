// One op's predicted seconds under a profile (profile.h), the one formula both prices use: the
// entry solve's per stored value (src/solve/price.h) and the training step's per let
// (src/step/step_price.h). An op of `elements` elements at its own type reads its operands, each
// at its own type: its roofline's throughput term is max(W/π, Q/β), W its work and Q the bytes it
// writes at its type plus the bytes each operand holds at its type; each operand read at another
// type adds its elements times the conversion's cost per element (a parameter's load cost, an
// integer weight's dequantization then f32 → the op's type; a stored value's edge cost). The
// latency λ is the caller's to add, once per run.
#pragma once

#include <string>
#include <vector>

#include "profile/profile.h"

namespace presk::profile {

// A type's bytes per element: f64 8, f32 4, bf16 2, int8 1, int4 ½.
double type_bytes(const std::string& type);

struct OperandRead {
  double elements = 0;
  std::string type;              // "f64", "f32", "bf16", "int8", "int4"
  RealType real = RealType::f64; // its float type (an integer weight's: f32, what it denotes)
  bool parameter = false;        // read from rest (load cost) rather than from a stored value (edge cost)
};

struct OpCost {
  double throughput = 0;   // max(W/π, Q/β)
  double conversions = 0;  // Σ elements × cost per element
};

OpCost op_cost(const Profile& profile, const Roofline& roofline, double elements, double work, const std::string& own,
               RealType own_real, const std::vector<OperandRead>& operands);

}  // namespace presk::profile
