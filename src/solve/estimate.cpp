// The first-order estimate (estimate.h).
#include "solve/estimate.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace presk::solve {
namespace {

double rounding_at(const Value& value, RealType type, bool unit) {
  const precision::RoundingEnvelope& r = value.rounding;
  if (unit) return exec::native::real_unit_roundoff(type) * value.max_abs;  // blind to the type's range
  return type == RealType::f64 ? r.f64 : type == RealType::f32 ? r.f32 : r.bf16;  // +∞: it overflows
}

}  // namespace

RealType effective_type(const Offer& offer, const Assignment& assignment, int value) {
  RealType type = offer.rung(value, assignment[value]).type;
  for (int reader : offer.values[value].readers) {
    const RealType read = offer.rung(reader, assignment[reader]).type;
    if (!exec::native::is_wider_or_same(read, type)) type = read;
  }
  return type;
}

double term(const Offer& offer, const Assignment& assignment, int value, const EstimateOptions& options) {
  const Value& v = offer.values[value];
  const RealType type = effective_type(offer, assignment, value);
  double rounding = rounding_at(v, type, options.unit_rounding);
  if (offer.rung(value, assignment[value]).integer()) {
    const double reread = type == RealType::f32 ? 0 : rounding;  // a reader narrower than f32
    rounding = std::max(v.ladder[assignment[value]].move, reread);
  }
  if (std::isinf(rounding)) return std::numeric_limits<double>::infinity();
  if (!v.sensitivity) return 0;
  return *v.sensitivity * rounding;
}

double estimate(const Offer& offer, const Assignment& assignment, const EstimateOptions& options) {
  double total = 0;
  for (size_t v = 0; v < offer.values.size(); ++v) {
    const double t = term(offer, assignment, static_cast<int>(v), options);
    total += options.form == EstimateForm::sum ? t : t * t;
  }
  return options.form == EstimateForm::sum ? total : std::sqrt(total);
}

double traffic(const Offer& offer, const Assignment& assignment) {
  double bytes = 0;
  for (size_t v = 0; v < offer.values.size(); ++v) bytes += offer.bytes(static_cast<int>(v), assignment[v]);
  return bytes;
}

std::vector<int> affected_by(const Offer& offer, int value) {
  std::vector<int> out{value};
  for (size_t v = 0; v < offer.values.size(); ++v) {
    const std::vector<int>& readers = offer.values[v].readers;
    if (std::find(readers.begin(), readers.end(), value) != readers.end()) out.push_back(static_cast<int>(v));
  }
  return out;
}

}  // namespace presk::solve
