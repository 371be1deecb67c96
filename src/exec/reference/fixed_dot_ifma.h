// The IFMA kernel of FixedRows::dot_group (fixed_dot.h): a binade's terms for eight rows of the
// other operand at once, in AVX-512's 52-bit multiply–adds. Exact integer sums: the result is
// the scalar kernel's, bit for bit.
#pragma once

#include <array>
#include <cstdint>

#include "exec/reference/fixed_dot.h"

namespace presk::reference {

// digits: a group's rows as FixedRows::prepare_digits lays them out (per entry index k, the 4
// 52-bit digits of U = ±X + 2^192, each for the 8 rows side by side); one binade's entries,
// positive [e, split) and negative [split, end), each W < 2^52. lanes[j] (5 limbs, two's
// complement) ← Σ ±X_k·W_k for row j: the sum accumulate_binade<3> gives. Only where has_ifma().
void ifma_bucket_sums(const uint64_t* digits, const BinadeEntry* e, const BinadeEntry* split,
                      const BinadeEntry* end, std::array<uint64_t, 5>* lanes);

}  // namespace presk::reference
