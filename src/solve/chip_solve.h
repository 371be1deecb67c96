// `presk solve --contract C` (docs/chip.md, "Solved"): which products read their activation
// quantized and which caches are kept narrow, decided by the float solve's one proposal loop and
// one widening loop (greedy.h, verify.h) on the chip's own values. Each product by a matrix the
// contract quantizes is a value whose ladder runs from its values (f32) through the words of the
// contract's scheme, widest first — three, two_rest, one — to the contract's own words; a rung's
// bytes are the activation's as its product reads it per sample (its words and one f32 scale per
// block). Each cache the contract keeps narrow (a cache_write's site) is a value whose ladder runs
// from as computed (f32) through a 16-bit float (f16 where its rows fit f16's range, else bf16)
// to the contract's own keep; a rung's bytes are the cache's (an int8 row's binary16 scale
// included). The proposal ranks by each value's term at each rung: on an entry, the first-order
// s·max|y|·r (s the sensitivity and max|y| the largest output from the envelope, r the rung's
// largest relative move: 1/254 for one word or an int8 row, 2⁻¹¹ for f16, …); on the decode entry,
// whose envelope has no sensitivities (it returns a tuple: no reverse sweep), the measured gap of
// the decode runs with that value alone at that rung. The measurement runs the chip's program
// (numerics::chip_program: its quantizes and its caches' keeps) natively against the exact
// meaning — on the entry's samples, or on decode runs (chip_decode.h) — and the widening steps the
// value of the largest term back one rung at a time until the gap is inside the budget.
#pragma once

#include <nlohmann/json.hpp>

#include "exec/native/realization.h"
#include "numerics/bind.h"
#include "numerics/scheme/contract.h"
#include "precision/envelope.h"
#include "solve/measurer.h"
#include "solve/record.h"
#include "solve/verify.h"

namespace presk::solve {

// What measures a chip's program against the exact meaning: the entry's samples, or decode runs.
class ChipRuns {
 public:
  virtual ~ChipRuns() = default;
  virtual precision::MeasuredGap measure(const ir::Program& chip, bool held_out) = 0;
  virtual bool has_held_out() const = 0;
};

// The entry's samples: the native run of the chip's program under `realization` against the
// exact meaning's outputs (the plain program's, which `exact` ran once).
class EntryRuns : public ChipRuns {
 public:
  EntryRuns(const ir::Function& entry, const exec::native::Realization& realization,
            const reference::ParameterStore& parameters, Measurer& exact, SampleSet in_sample, SampleSet held_out,
            int threads);
  precision::MeasuredGap measure(const ir::Program& chip, bool held_out) override;
  bool has_held_out() const override { return held_out_.count > 0; }

 private:
  const ir::Function& entry_;
  const exec::native::Realization& realization_;
  const reference::ParameterStore& parameters_;
  Measurer& exact_;
  SampleSet in_sample_, held_out_;
  int threads_;
};

// The offer: one value per product the contract quantizes (`products`, bound with the contract's
// own schemes), then one per cache it keeps narrow, in program order. A product's sensitivity is
// the envelope's per output element, as the float offer's; without `measured_terms`, a value the
// envelope's sweep did not reach is not offered ("unknown"), with it every value is.
Offer chip_offer(const ir::Program& program, const numerics::Contract& contract,
                 const std::vector<numerics::QuantizedProduct>& products, const precision::Envelope& envelope,
                 bool measured_terms);

// The contract an assignment stands for: every offered product its rung's scheme, or its values;
// every offered cache its rung's keep.
numerics::Contract contract_of(const Offer& offer, const Assignment& assignment, const numerics::Contract& contract);

// The chip's measurements: the chip's program of each assignment measured by `runs`, cached by
// assignment.
class ChipMeasurer : public Measurements {
 public:
  ChipMeasurer(const ir::Program& program, const numerics::Contract& contract,
               const exec::native::Realization& realization, ChipRuns& runs);
  precision::MeasuredGap in_sample(const Offer& offer, const Assignment& assignment) override;
  std::optional<precision::MeasuredGap> held_out(const Offer& offer, const Assignment& assignment) override;

 private:
  precision::MeasuredGap measure(const Offer& offer, const Assignment& assignment, bool held_out);

  const ir::Program& program_;
  const numerics::Contract& contract_;
  const exec::native::Realization& realization_;
  ChipRuns& runs_;
  std::map<std::pair<bool, Assignment>, precision::MeasuredGap> cache_;
};

// Each value's term at each step of its ladder (terms[v][0] = 0): the first-order s·max|y|·r.
using ChipTerms = std::vector<std::vector<double>>;
ChipTerms first_order_terms(const Offer& offer);
// The in-sample gap with value v alone at step s (every other at its widest), measured.
ChipTerms measured_terms(const Offer& offer, Measurements& measurer, const Progress& progress);

// The solve: propose by bytes saved per unit of term, measure and widen, measure held out.
Solution solve_chip(const Offer& offer, const ChipTerms& terms, const Budget& budget, ChipMeasurer& measurer,
                    const Progress& progress);

// The solved contract's file: the contract of the final assignment and its `solve` record (the
// fields explain reads, record.h).
nlohmann::ordered_json chip_contract_file(const Offer& offer, const ChipTerms& terms, const Solution& solution,
                                          const Budget& budget, const numerics::Contract& contract,
                                          const RecordContext& context);

}  // namespace presk::solve
