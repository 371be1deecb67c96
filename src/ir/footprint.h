// How many elements a run of a program holds at once, at most, from the IR's static shapes:
// the ground for refusing a run that cannot fit in memory before it allocates (E0017).
#pragma once

#include <cstdint>
#include <string>

#include "ir/ir.h"

namespace presk::ir {

struct Footprint {
  uint64_t let_elements = 0;     // every let of every function, each function's lets once
  uint64_t peak_let_elements = 0;  // the most lets held at once by a run of the entry (below)
  uint64_t param_elements = 0;   // every parameter tensor
  uint64_t result_elements = 0;  // the entry's results (one sample's)
};

// The letters of operand `operand` (0: x, 1: w) of a contraction spec ("td,vd->tv") along which
// a reader may split it into tiles: in the output, once in the operand, absent from the other.
std::string tile_letters(const std::string& spec, int operand);

// Whether let `index` of `function` is a parameter the exact reference reads where it is stored
// (exec/reference/ops_in_place.cpp), never converted whole to exact numbers: a `param` let, not a
// result, whose every reader is an embed reading it as the table (row by row) or a contraction
// reading it as one operand with a tile letter beside an operand that is not a parameter (a tile
// of at most kInPlaceTileElements at a time). A run with an observer converts it whole.
bool read_in_place(const Function& function, uint32_t index);
constexpr int64_t kInPlaceTileElements = int64_t{1} << 20;

// Counts saturate at UINT64_MAX. `entry` may be null (no results counted, no peak). The peak
// is an upper bound for both executors (exec/reference/interpreter.cpp, exec/native/executor.cpp),
// which free a let after its last reader, move a callee's results into the calling let and run
// a fold's layers one after another: at each let of a function, the lets produced before it
// and read at or after it (a let nothing reads, which the native executor keeps to the frame's
// end when observed, held to the end); for a call, the callee's own peak in place of the let;
// for any other let the let, a transient copy of it and of each operand (converted or packed
// operands, an observer's copies), and for a fold the callee's peak and arguments (the carry and
// the layer's slices); maximised over the lets. `gets_share`: a `get` costs nothing (the native
// executor hands the tuple's element on); the reference copies it. `params_in_place`: a run of
// the reference with no observer, where a let read_in_place holds nothing and costs its readers
// a tile (a contraction: the tile and its packed rows) or nothing (an embed).
// `streams_cotangents`: a reverse sweep that hands each parameter's cotangent on as it is made
// (ir/cotangent_stream.h, the native executor's ExecuteOptions::cotangents): such a let is held
// only while it is made, a tuple holds none of them, and a fold_vjp keeps its layers' carries.
Footprint footprint(const Program& program, const Function* entry, bool gets_share = false,
                    bool params_in_place = false, bool streams_cotangents = false);

}  // namespace presk::ir
