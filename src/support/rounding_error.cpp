#include "support/rounding_error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace presk {

double rounding_error(double x, BinaryFormat format) {
  if (x == 0) return 0;
  const int quantum = std::max(std::ilogb(x), format.min_exponent) - (format.precision - 1);
  const double scaled = std::ldexp(x, -quantum);  // exact: x has at most 53 bits
  const double nearest = std::nearbyint(scaled);  // the default rounding mode: ties to even
  if (nearest != 0 && std::ilogb(nearest) + quantum > format.max_exponent) {
    return std::numeric_limits<double>::infinity();
  }
  return std::ldexp(std::fabs(scaled - nearest), quantum);  // exact: |·| ≤ 1/2, x's own bits
}

}  // namespace presk
