// The solver's first-order estimate (the seed's "Where a budget should go", "A rounding term
// from the values"): a value v stored at rung d adds the term t_v = s_v · r_v(d), s_v its
// sensitivity ‖∂L/∂v‖₁ and r_v(d) its rounding into d — the envelope's measured
// max|fl_d(x) − x| (the default) or u(d)·max|v| (--rounding unit). d is the narrowest of v's
// own rung and its readers' (a narrower reader rounds it again at its edge). A measured rounding
// the envelope records as +∞ (v overflows d) makes the term +∞, whatever s_v; the unit form
// compares no magnitude with the type's range, and the measurement finds what it misses. A value of unknown
// sensitivity adds nothing: it is not offered, and the measurement judges it. A parameter at an
// integer rung adds s_v · max|ŵ − w| (the largest move of its values), or its rounding into a
// reader narrower than f32 where that is larger. The estimate is
// Σ t_v (--estimate sum) or √Σ t_v² (--estimate rss). It ranks; it is no bound.
#pragma once

#include <vector>

#include "solve/offer.h"

namespace presk::solve {

// A step of its own ladder per value of the offer (Value::ladder; 0 is f64); values not
// offered stay 0.
using Assignment = std::vector<int>;

enum class EstimateForm { sum, rss };

struct EstimateOptions {
  bool unit_rounding = false;  // --rounding unit: u(d)·max|v| instead of the measured rounding
  EstimateForm form = EstimateForm::sum;
};

// The float type v is read at: the narrowest of its own (an integer rung's is f32, the type of
// the q·s it denotes) and its readers'.
RealType effective_type(const Offer& offer, const Assignment& assignment, int value);
// t_v under `assignment`.
double term(const Offer& offer, const Assignment& assignment, int value, const EstimateOptions& options);
// Σ t_v or √Σ t_v².
double estimate(const Offer& offer, const Assignment& assignment, const EstimateOptions& options);
// The traffic of one sample: Σ elements · bytes of each value's rung.
double traffic(const Offer& offer, const Assignment& assignment);

// The values whose term depends on v's rung: v and the values v reads.
std::vector<int> affected_by(const Offer& offer, int value);

}  // namespace presk::solve
