// The learning-rate schedule (schedule.h), computed with MPFR at 128 bits and rounded once.
#include "train/schedule.h"

#include <mpfr.h>

#include "support/diagnostics.h"

namespace presk::train {

const char* schedule_name(ScheduleKind kind) {
  return kind == ScheduleKind::cosine ? "cosine" : "constant";
}

std::optional<ScheduleKind> schedule_from_name(std::string_view name) {
  if (name == "cosine") return ScheduleKind::cosine;
  if (name == "constant") return ScheduleKind::constant;
  return std::nullopt;
}

namespace {

// ½ (1 + cos(π·num/den)) at 128 bits: the cosine's weight of η_max − η_min.
void cosine_weight(mpfr_t out, int64_t num, int64_t den) {
  mpfr_t angle;
  mpfr_init2(angle, 128);
  mpfr_const_pi(angle, MPFR_RNDN);
  mpfr_mul_si(angle, angle, static_cast<long>(num), MPFR_RNDN);
  mpfr_div_si(angle, angle, static_cast<long>(den), MPFR_RNDN);
  mpfr_cos(out, angle, MPFR_RNDN);
  mpfr_add_ui(out, out, 1, MPFR_RNDN);
  mpfr_div_2ui(out, out, 1, MPFR_RNDN);
  mpfr_clear(angle);
}

}  // namespace

double learning_rate(const Schedule& schedule, int64_t step) {
  internal_assert(step >= 0 && schedule.warmup >= 0);
  mpfr_t rate, scratch;
  mpfr_inits2(128, rate, scratch, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(rate, schedule.peak, MPFR_RNDN);
  if (step < schedule.warmup) {
    mpfr_mul_si(rate, rate, static_cast<long>(step + 1), MPFR_RNDN);
    mpfr_div_si(rate, rate, static_cast<long>(schedule.warmup), MPFR_RNDN);
  } else if (schedule.kind == ScheduleKind::cosine && schedule.steps > schedule.warmup) {
    cosine_weight(scratch, step - schedule.warmup, schedule.steps - schedule.warmup);
    mpfr_sub_d(rate, rate, schedule.floor, MPFR_RNDN);  // η_max − η_min
    mpfr_mul(rate, rate, scratch, MPFR_RNDN);
    mpfr_add_d(rate, rate, schedule.floor, MPFR_RNDN);
  }
  double result = mpfr_get_d(rate, MPFR_RNDN);
  mpfr_clears(rate, scratch, static_cast<mpfr_ptr>(nullptr));
  return result;
}

}  // namespace presk::train
