// A contract against a program (docs/chip.md, "Binding"): the products by a matrix that read
// their activation quantized, and the checks that need the program — a site the contract names
// that is no such product (E1710), a block that does not divide the row (E1711), a keep mode on
// a value that is no cache (E1712), a rotated keep on a row whose length is not a power of two
// (E1713), an unsigned scale on an activation that may be negative (E1714).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/native/realization.h"
#include "ir/ir.h"
#include "numerics/scheme/contract.h"

namespace presk::numerics {

// A contraction by a matrix (an operand that is a `param` let): what a contract's activation
// scheme applies to.
struct ProductSite {
  uint32_t function = 0;  // index in program.functions
  uint32_t let = 0;
  std::string site;       // "Linear.apply/%1"
  int activation = 0;     // the operand that is the activation (the other is the matrix)
  int64_t row = 0;        // the activation's values one output element contracts
  std::string matrix;     // the matrix's full parameter path (the first context it runs in)
};

// Every product by a matrix in the program, in function and let order.
std::vector<ProductSite> products_by_matrix(const ir::Program& program);

// A product that reads its activation quantized, with its scheme and the values per scale.
struct QuantizedProduct {
  ProductSite product;
  Scheme scheme;
  int64_t block = 0;
};

// Checks `contract` against `program` (E1710–E1714) and gives the products that read their
// activation quantized. `realization` (may be null) gives the matrices' formats for Block::format.
std::vector<QuantizedProduct> bind_contract(const Contract& contract, const ir::Program& program,
                                            const exec::native::Realization* realization);

}  // namespace presk::numerics
