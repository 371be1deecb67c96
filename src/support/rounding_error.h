// The error of rounding a binary64 value once into a narrower binary format, computed exactly
// in binary64 arithmetic (no MPFR): what calibrate measures for every element of every
// parameter and, under `--sweep f64`, of every site.
#pragma once

#include "support/exact_real.h"

namespace presk {

// |fl(x) − x| for a finite x, fl rounding to nearest with ties to even into `format` (gradual
// underflow); +inf when fl(x) overflows the format. Exact: with q the quantum of x's binade in
// the format, x·2^−q, its nearest integer and their difference are all binary64 numbers.
double rounding_error(double x, BinaryFormat format);

}  // namespace presk
