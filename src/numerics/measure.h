// A contract's gap against the exact meaning (`presk check --contract C --measure`; docs/chip.md,
// "Measured"), product by product and cache by cache: the exact reference runs the program, and at every evaluation
// of a product that reads its activation quantized, its exact activation is quantized by the
// contract's exact meaning, and the split is taken as `presk quantize` takes it —
//   representation: the exact product of the quantized activation (and of the weights as their
//                   integer codes times their scales, where the realization quantizes them)
//                   against the exact product of the true operands;
//   arithmetic:     the chip's integer arithmetic (codes dotted in the contract's accumulator,
//                   wrapping or saturating; each run's sum times its scales added in binary64)
//                   against the former, for a matrix the realization stores as integers.
// Each gap is local: the product's own output, with every value it reads exact. The gap of the
// entry's output needs the quantize op in both executors (docs/chip.md, "Status").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exec/native/realization.h"
#include "exec/reference/parameters.h"
#include "exec/reference/value.h"
#include "ir/ir.h"
#include "numerics/bind.h"

namespace presk::numerics {

struct ProductGap {
  std::string site;
  std::string scheme;
  int64_t block = 0;
  int64_t evaluations = 0;     // calls × layers × samples
  double magnitude = 0;        // max |exact output|
  double representation = 0;   // max |exact on the quantized operands − exact|
  bool integer = false;        // the chip's arithmetic was measured (on an integer matrix)
  int64_t integer_evaluations = 0;  // the evaluations it was measured on
  std::string why_not;         // why it was not on the others (the last reason)
  double arithmetic = 0;       // max |chip − exact on the quantized operands|
  int bits_needed = 0;         // holds_accumulator's width for the worst run (integer only)
  int64_t overflowed = 0;      // outputs whose accumulator wrapped or saturated
  int64_t outputs = 0;         // outputs computed by the chip
};

// A cache kept otherwise than as computed: each row it writes (its last axis) kept as the contract
// says, against the row itself.
struct CacheGap {
  std::string site;            // the cache_write's site
  std::string keep;            // its keep mode
  int64_t rows = 0;            // rows kept, over every evaluation
  double magnitude = 0;        // max |exact value|
  double representation = 0;   // max |kept − exact|
};

struct ContractGaps {
  std::vector<ProductGap> products;
  std::vector<CacheGap> caches;
};

using SampleInputs = std::function<std::vector<reference::HostTensor>(int64_t k)>;

// The gaps of every quantized product and kept cache of `entry` over `count` samples, the
// reference at `bits`.
ContractGaps measure_contract(const ir::Program& program, const ir::Function& entry,
                                         const Contract& contract, const std::vector<QuantizedProduct>& products,
                                         const exec::native::Realization& realization,
                                         const reference::ParameterStore& parameters, int64_t count,
                                         const SampleInputs& inputs, long bits);

}  // namespace presk::numerics
