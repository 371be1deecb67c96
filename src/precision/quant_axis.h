// The axis a parameter's integer scales run along (docs/precision.md, "quantize"; the seed's
// "One menu: integers in the solve"): the one every reader of it contracts — the last axis of
// a ·'s left operand, the first of its right operand, the one label of an einsum operand that
// the output does not keep — counted from the end, so that a fold's stack axis does not move
// it. A parameter read by anything else (a gather, an elementwise op, a call, a layout op),
// along two different axes, or contracted over several labels at once is scaled along −2.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/ir.h"

namespace presk::precision {

struct QuantAxis {
  int64_t over = -2;       // the axis, negative from the end
  bool contracted = false;  // found from the readers (false: the −2 fallback)
  std::string why;          // "contracted by FeedForward.apply/%1", "read by embed (GPT.apply/%1)", …
};

// Every real parameter reached from `entry`, by full path.
std::map<std::string, QuantAxis> quant_axes(const ir::Program& program, const ir::Function& entry);

// A parameter's bytes at rest: `bits` per element for a float type (64, 32, 16); for an integer
// width (8, 4) the integers two to a byte at 4 bits, plus one f32 scale per index of every axis
// but `over` (negative from the end), or with a group G one per G elements along `over`.
double bytes_at_rest(const ir::Param& param, int bits, int64_t over, int64_t group = 0);

}  // namespace presk::precision
