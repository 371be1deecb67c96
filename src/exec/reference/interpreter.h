// The exact reference interpreter: runs a function of a Program over MPFR numbers correctly
// rounded at `bits` (MpfrArith), or over Arb balls that enclose the exact denotation
// (BallArith). It is the definition of every op (ops.h) and the yardstick of every
// measurement presk makes. docs/reference.md says what it computes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "exec/reference/arith_ball.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/observer.h"
#include "exec/reference/parameters.h"
#include "exec/reference/value.h"
#include "ir/ir.h"
#include "support/dropout_mask.h"

namespace presk::reference {

enum class Arithmetic { Mpfr, Ball };

struct RunOptions {
  long bits = 256;               // working precision; at least 53 so every input is exact
  int threads = 1;               // worker threads; the results do not depend on it
  Observer* observer = nullptr;  // the statistics hook (observer.h); none: no statistics work
  // A training run's dropout key (support/dropout_mask.h), shared by every sample of the run:
  // each `dropout` keeps its seeded mask. Absent: dropout is the identity.
  std::optional<random::DropoutKey> training;
};

constexpr long kMinBits = 53;
constexpr long kMaxBits = 1 << 20;

// The entry `name` of the program (E0500 when there is none; the message lists the entries).
const ir::Function& find_entry(const ir::Program& program, const std::string& name);

// Runs `function` in the root parameter context on `arguments` (one per argument, of its
// type: E0502 otherwise) and returns its results. Parameters are read from `parameters`
// (E0506 for a parameter without values); `bits` outside [kMinBits, kMaxBits] is E0501.
template <class A>
std::vector<Value<A>> run_function(const ir::Program& program, const ir::Function& function,
                                   const ParameterStore& parameters,
                                   const std::vector<Value<A>>& arguments,
                                   const RunOptions& options);

// The arguments of sample k of a multi-sample run (k = 0, 1, …; the caller adds any offset).
template <class A>
using SampleArguments = std::function<std::vector<Value<A>>(const A& arith, int64_t sample)>;

// Runs `function` on `count` samples, sample k on arguments_of(arith, k), and returns each
// sample's results. With count ≥ options.threads (and no observer) the samples run in
// parallel, each entirely on one thread; otherwise one after another, each over the threads
// (output elements in parallel). Either way every result is bit-identical for any thread
// count. Arguments are made when their sample starts and freed when it ends. With an
// observer attached the samples run one after another (its calls stay in program order).
template <class A>
std::vector<std::vector<Value<A>>> run_samples(const ir::Program& program,
                                               const ir::Function& function,
                                               const ParameterStore& parameters, int64_t count,
                                               const SampleArguments<A>& arguments_of,
                                               const RunOptions& options);

// A copy of a value (the interpreter itself never copies one; tests and tools may).
template <class A>
Value<A> copy_value(const A& arith, const Value<A>& value);

}  // namespace presk::reference
