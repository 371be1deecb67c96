// Parameter cotangents streamed out of a reverse sweep (issue #37, item 3): which lets of a
// vjp compute a parameter's cotangent that reaches the entry's results unchanged, so that an
// executor may hand each to its consumer as soon as it is computed and free it, instead of
// returning every parameter's cotangent at once (exec/native/executor.h, ExecuteOptions::
// cotangents). Only `get` and the return may carry such a cotangent on: a let that anything
// else reads (an accumulation of a tied parameter's cotangents, say) is not streamed, nor is
// its callee's result.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.h"

namespace presk::ir {

// How a run of `function` with some of its results final streams them.
struct CotangentStream {
  std::vector<uint8_t> emits;  // per let: a final cotangent computed here (handed on once computed)
  // Per let that calls a function (call, fold_vjp): which of the callee's results are final
  // (empty: none). A fold_vjp's callee results are its per-layer cotangents.
  std::vector<std::vector<uint8_t>> callee_finals;
  bool any = false;  // something above is set
};

// The results of `entry` (an entry's vjp) that are final: those named for a parameter of
// `program`.
std::vector<uint8_t> parameter_results(const Program& program, const Function& entry);

// The stream of `function` run with `finals[r]` set for each result r that is final (handed
// unchanged to the entry's results): result r, when it is a let that nothing but the return
// reads (once), is emitted where it is computed, or, when it is a `get` (not an adjoint) of
// element k of a call's or fold_vjp's tuple (k ≥ 1 for a fold_vjp) that no other `get` reads,
// final in that callee.
CotangentStream cotangent_stream(const Function& function, const std::vector<uint8_t>& finals);

}  // namespace presk::ir
