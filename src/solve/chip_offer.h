// What the chip's solve decides (docs/chip.md, "Solved"): its values and their ladders. Each
// product by a matrix the contract quantizes is a value whose ladder runs from its values (f32)
// through the words of the contract's scheme, widest first — three, two_rest, one — to the
// contract's own words; a rung's bytes are the activation's as its product reads it per sample
// (its words and one f32 scale per block). Each cache the contract keeps narrow (a cache_write's
// site) runs from as computed (f32) through a 16-bit float (f16 where its rows fit f16's range,
// else bf16) to the contract's own keep (an int8 row's binary16 scale in its bytes). Each
// attention the contract gives forms runs from as kept (no forms) through its forms with every
// scheme's words widened — to three, to two_rest — to the contract's own forms; a rung's bytes
// are its four operands' (queries, keys, values, weights). Beside each rung, the work a chip's
// time profile prices (numerics/chip_profile.h): its multiply-accumulates, int8 or float, and
// the values it quantizes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "exec/native/realization.h"
#include "numerics/bind.h"
#include "numerics/scheme/contract.h"
#include "precision/envelope.h"
#include "solve/offer.h"
#include "solve/solution.h"

namespace presk::solve {

// The work a value does per sample at one rung, beyond moving its bytes.
struct StepWork {
  double int8_macs =
      0;  // int8 × int8 multiply-accumulates (each word of a quantized operand its own)
  double float_macs = 0;  // float multiply-accumulates (a product on values)
  double quantized = 0;   // values quantized, or rounded into a narrower keep or form
};

struct ChipOffer {
  Offer offer;
  std::vector<std::vector<StepWork>> work;  // [value][ladder step]
};

// The offer: one value per product the contract quantizes (`products`, bound with the contract's
// own schemes), then one per cache it keeps narrow, then one per attention it gives forms, in
// program order. A product's sensitivity is the envelope's per output element, as the float
// offer's; without `measured_terms`, a value the envelope's sweep did not reach is not offered
// ("unknown"), with it every value is. A product's multiply-accumulates are int8 where
// `realization` stores its matrix as integers (the chip's sums), float otherwise.
ChipOffer chip_offer(const ir::Program& program, const numerics::Contract& contract,
                     const std::vector<numerics::QuantizedProduct>& products,
                     const precision::Envelope& envelope,
                     const exec::native::Realization& realization, bool measured_terms);

// The contract an assignment stands for: every offered product its rung's scheme, or its values;
// every offered cache its rung's keep; every offered attention its rung's forms, or none.
numerics::Contract contract_of(const Offer& offer, const Assignment& assignment,
                               const numerics::Contract& contract);

// For an attention's value, the forms it takes its operands in at ladder step `step` (its text,
// numerics::forms_text, or "on its values as the chip keeps them"); none for another value.
std::optional<std::string> attention_forms_text(const Offer& offer, int value, int step,
                                                const numerics::Contract& contract);

// Each value's term at each step of its ladder (terms[v][0] = 0).
using ChipTerms = std::vector<std::vector<double>>;
// The first-order s·max|y|·r of each value at each step.
ChipTerms first_order_terms(const Offer& offer);

}  // namespace presk::solve
