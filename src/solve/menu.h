// The solver's menu: the rungs a value may take, widest first — the float types (f64, f32,
// bf16), then for parameters of rank two or more as declared the integer rungs (int8, int4,
// each under absmax and pow2 scales). Integers are a storage type: a reader dequantizes them to
// f32(q·s) as it reads them, and nothing is computed in them.
#pragma once

#include <string>
#include <vector>

#include "exec/native/numeric.h"
#include "exec/native/realization.h"

namespace presk::solve {

using exec::native::RealType;

struct Rung {
  std::string name;                 // "f32", "int8", "int4/pow2"
  RealType type = RealType::f64;    // a float rung's type; an integer rung's meaning, f32
  double bytes = 8;                 // per element (an integer rung's scales come on top)
  int bits = 0;                     // 8 or 4 for an integer rung, 0 for a float one
  exec::native::QuantScheme scheme = exec::native::QuantScheme::absmax;
  int64_t group = 0;                // an integer rung's group (`int4/g32`: 32), 0 for one scale per channel
  bool integer() const { return bits > 0; }
};

struct Menu {
  std::vector<Rung> rungs;  // widest first; rungs[0] is f64, the realization's default
  std::string text() const;  // "f64,f32,bf16"
  bool has_integers() const;
};

// "f64,f32,bf16" (the default), optionally followed by integer rungs: "int8" and "int4" (each
// offering both scale schemes) and group rungs "int8/gG", "int4/gG" (absmax scales, one per G
// elements along the scale's axis; offered where G divides it): names each once, widest first
// (int8's before int4's), beginning with f64. E1101 otherwise.
Menu parse_menu(const std::string& text);

// The default menu: f64, f32, bf16.
Menu default_menu();

}  // namespace presk::solve
