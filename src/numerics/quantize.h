// Quantize insertion (the seed's `quantize`; docs/chip.md, "Placement"): every product that reads
// its activation quantized gets that activation's quantized form, from one quantize per value:
//  * at the root of its views — a product reading rows of a tensor in place (a reshape, a
//    transpose or a slice that keeps each contracted row whole) reads the tensor's quantized form
//    in place, so the tensor is quantized once for every product that reads it;
//  * in its producer's epilogue where the chip runs the two as one op (a `<op>_quant` class of the
//    contract) and nothing reads the producer's own values but quantized products;
//  * for a table assembled a row at a time (a concat, a cache_write): right before the first
//    product that reads it, once its last row has landed — or, where each row is set from a
//    result its producer can quantize in its epilogue, a row at a time by those producers, each
//    set carrying its row's quantized form into the table's (PARITY-BATCH-ROW-QUANT);
//  * otherwise right after the producer (on entry, for an argument).
// The result is the placement: where each quantize goes and which products read it; chip_program
// makes it the IR's `quantize` lets, which both executors run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/ir.h"
#include "numerics/bind.h"

namespace presk::numerics {

enum class Placement : uint8_t { after_producer, epilogue, before_first_reader, per_row_by_producers };
const char* placement_name(Placement placement);  // "after_producer", "epilogue", …

struct QuantizeSite {
  uint32_t function = 0;
  ir::ValueRef value;             // the value quantized: the root of the readers' views
  std::string name;               // its site name, or "$i name" for an argument
  Placement where = Placement::after_producer;
  Scheme scheme;
  int64_t block = 0;
  std::vector<std::string> readers;        // the products that read it, in let order
  uint32_t first_reader = 0;               // the let index of the first
  std::vector<std::string> row_producers;  // per_row_by_producers: the sites that set its rows
};

// The placement of every quantize the bound products need, per function in let order.
std::vector<QuantizeSite> quantize(const ir::Program& program, const Contract& contract,
                                   const std::vector<QuantizedProduct>& products);

// The program as the chip runs it: each placement made a `quantize` let (ops.def) that the
// readers read, through their views. A quantize goes right after its producer (on entry for an
// argument), or, for a table assembled a row at a time, right before its first reader (with
// per_row_by_producers too: a block lies within a row, so quantizing the table whole gives the
// values its rows' producers would set). The readers' views read it in place where nothing else
// reads them; a view something else reads too keeps its values, and the product reads a quantize
// of the view of its own, right before it (the same values: a view keeps each row whole).
// Each cache the contract keeps otherwise than as computed (a cache_write's site) gets the rows it
// writes kept: a quantize with spec "keep/<mode>" (the row its block) right before the write.
// Quantize sites are named "F/quantize<k>" and leave every other site's name as it was.
ir::Program chip_program(const ir::Program& program, const Contract& contract, const std::vector<QuantizeSite>& sites,
                         const std::vector<QuantizedProduct>& products);

// `realization` with the contract's integer sums (exec::native::IntegerSums: its accumulator's
// bits, wrapping or saturating): the chip's program runs under it natively, each product of a
// quantize's codes by integer weights, and each attention product of two quantizes' codes,
// computed as the chip computes it (docs/chip.md, "The chip's products").
exec::native::Realization chip_realization(const exec::native::Realization& realization, const Contract& contract);

// A table for `presk dump --stage chip`, and its JSON form.
std::string quantize_text(const ir::Program& program, const std::vector<QuantizeSite>& sites);
nlohmann::json quantize_json(const std::vector<QuantizeSite>& sites);

}  // namespace presk::numerics
