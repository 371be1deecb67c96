// `presk solve --contract C` (docs/chip.md, "Solved"): which products read their activation
// quantized, decided by the float solve's one proposal loop and one widening loop (greedy.h,
// verify.h) on the chip's own values. Each product by a matrix the contract quantizes is a value
// whose ladder runs from its values (f32) through the words of the contract's scheme, widest
// first — three, two_rest, one — to the contract's own words; a rung's bytes are the activation's
// as its product reads it per sample (its words and one f32 scale per block). The proposal ranks
// by the first-order term s·max|y|·r(words), s the product's sensitivity and max|y| its largest
// output from the envelope, r the scheme's largest relative move (half a step: 1/254 for one
// word, 1/32512 for two_rest, …); the measurement runs the chip's program (numerics::chip_program)
// natively against the exact meaning, and the widening steps the product of the largest term
// back one rung at a time until the gap is inside the budget.
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

// The offer: one value per product the contract quantizes (`products`, bound with the contract's
// own schemes), in program order; its sensitivity is the envelope's per output element, as the
// float offer's (a product the envelope's sweep did not reach is not offered: "unknown").
Offer chip_offer(const ir::Program& program, const ir::Function& entry,
                 const std::vector<numerics::QuantizedProduct>& products, const precision::Envelope& envelope);

// The contract an assignment stands for: every offered product its rung's scheme, or its values.
numerics::Contract contract_of(const Offer& offer, const Assignment& assignment, const numerics::Contract& contract);

// The chip's measurements: the native run of the chip's program under `realization` against the
// exact meaning's outputs (the plain program's, which `exact` ran once), cached by assignment.
class ChipMeasurer : public Measurements {
 public:
  ChipMeasurer(const ir::Program& program, const ir::Function& entry, const numerics::Contract& contract,
               const exec::native::Realization& realization, const reference::ParameterStore& parameters,
               Measurer& exact, SampleSet in_sample, SampleSet held_out, int threads);
  precision::MeasuredGap in_sample(const Offer& offer, const Assignment& assignment) override;
  std::optional<precision::MeasuredGap> held_out(const Offer& offer, const Assignment& assignment) override;

 private:
  precision::MeasuredGap measure(const Offer& offer, const Assignment& assignment, bool held_out);

  const ir::Program& program_;
  const ir::Function& entry_;
  const numerics::Contract& contract_;
  const exec::native::Realization& realization_;
  const reference::ParameterStore& parameters_;
  Measurer& exact_;
  SampleSet in_sample_, held_out_;
  int threads_;
  std::map<std::pair<bool, Assignment>, precision::MeasuredGap> cache_;
};

// The solve: propose by bytes saved per unit of term, measure and widen, measure held out.
Solution solve_chip(const Offer& offer, const Budget& budget, ChipMeasurer& measurer, const Progress& progress);

// The solved contract's file: the contract of the final assignment and its `solve` record (the
// fields explain reads, record.h).
nlohmann::ordered_json chip_contract_file(const Offer& offer, const Solution& solution, const Budget& budget,
                                          const numerics::Contract& contract, const RecordContext& context);

}  // namespace presk::solve
