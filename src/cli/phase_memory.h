// The memory of a command's long phases, estimated from the compiled program before any of
// them starts (MemoryPlan::phases, cli/pipeline.h): a phase that would exceed the memory the
// machine has available is refused with its estimate (E0017), not killed by the kernel.
// Estimates count every let of the functions run (ir/footprint.h: an upper bound) at the bytes
// per element of the evaluator that holds them, the parameters' cotangents a sweep returns, and
// what a phase keeps to its end; the parameters as read are added by the check.
#pragma once

#include <cstdint>
#include <vector>

#include "cli/pipeline.h"
#include "precision/native_sweep.h"

namespace presk::cli {

// The reverse sweep of `prepared.entry` (its vjp seeded with ones, one sample): on the reference
// at `bits` (Sweep::exact), or natively in binary64, the parameters at rest in their own types;
// `streams`: natively, each parameter's cotangent folded into its 1-norm as it is made
// (calibrate's sweep, precision::binary64_sensitivity), not returned with the others.
PhaseEstimate sweep_phase(const PreparedRun& prepared, precision::Sweep sweep, long bits, bool streams = true);

// The reference's exact outputs of `count` samples, `at_once` of them in flight, every
// sample's outputs kept to the end (a solve's in-sample and held-out samples); `observed`: with
// an observer (every parameter converted whole), else parameters read in place (ir::read_in_place).
PhaseEstimate exact_outputs_phase(const PreparedRun& prepared, int64_t count, int64_t at_once, long bits,
                                  bool observed);

// calibrate --precision: under Sweep::exact the sweep runs beside the samples (one phase, the
// sum); under Sweep::f64 the native sweep, the native samples (one at a time) and the exact
// outputs one after another.
std::vector<PhaseEstimate> calibrate_phases(const PreparedRun& prepared, precision::Sweep sweep, long bits, int threads);

// solve: the exact outputs of the envelope's samples and `held_out` more; with `quant`, the
// first-order pass (a sweep per sample, one sample's cotangents kept at a time).
std::vector<PhaseEstimate> solve_phases(const PreparedRun& prepared, int64_t held_out, bool quant,
                                        precision::Sweep sweep, long bits, int threads);

}  // namespace presk::cli
