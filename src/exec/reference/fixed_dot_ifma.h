// The IFMA kernels of FixedRows::dot_group (fixed_dot.h): a binade's terms, or a row of 3 limbs,
// for eight rows of the other operand at once, in AVX-512's 52-bit multiply–adds. Exact integer
// sums: a binade's are the scalar kernel's, bit for bit; a row's leave out only the low partial
// products named below.
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

// digits as above; one row's entries of 3 limbs (DigitEntry), positive [positive, positive_end)
// and negative [negative, negative_end). lanes[j] (7 limbs, two's complement) ← Σ ±(X_k·W_k − δ_k)
// for row j over those entries, δ_k what the digit products U_a·W_b with a + b < 2 and the low
// halves of those with a + b = 2 add to U·W: 0 ≤ δ_k < 5·2^156 + 2^104 < 2^159, and δ_k = 0
// where X_k = 0 (U = 2^192: digits 0 … 2 zero). Only where has_ifma().
void ifma_row_sums(const uint64_t* digits, const DigitEntry* positive, const DigitEntry* positive_end,
                   const DigitEntry* negative, const DigitEntry* negative_end, std::array<uint64_t, 7>* lanes);

}  // namespace presk::reference
