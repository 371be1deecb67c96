// The solver's menu: the rungs a value may take, widest first (f64, f32, bf16 today). A rung is
// a storage type with its bytes per element; integer rungs (int8/int4 weights) are to come and
// will be rungs of this list too, offered to parameters alone.
#pragma once

#include <string>
#include <vector>

#include "exec/native/numeric.h"

namespace presk::solve {

using exec::native::RealType;

struct Rung {
  RealType type = RealType::f64;
  double bytes = 8;  // per element
};

struct Menu {
  std::vector<Rung> rungs;  // widest first; rungs[0] is the default type of the realization

  // The rung narrower than `rung` by one step, or -1 when `rung` is the last.
  int narrower(int rung) const { return rung + 1 < static_cast<int>(rungs.size()) ? rung + 1 : -1; }
  int wider(int rung) const { return rung - 1; }
  std::string text() const;  // "f64,f32,bf16"
};

// "f64,f32,bf16" (the default): names from the realization's menu, each once, widest first,
// beginning with f64 (the realization's default). E1101 otherwise, naming what exists.
Menu parse_menu(const std::string& text);

// The default menu: f64, f32, bf16.
Menu default_menu();

}  // namespace presk::solve
