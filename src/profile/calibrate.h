// Measuring this machine (presk bench --calibrate): small programs of one primitive each, run
// on the native executor with its per-op timer (ExecuteOptions::profile) over shapes from a
// few hundred elements to half a million, a roofline fitted per class and type on most shapes
// and judged on the others (held out), and each conversion's cost per element from the same
// op run under a uniform and under a mixed realization, the two in alternating rounds. Every time
// is a median over rounds (kMinRounds at least); a fit of low confidence is measured again. A
// measurement: two runs give two profiles; the fit of given samples is deterministic.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "profile/profile.h"

namespace presk::profile {

// One timed op: its arithmetic W (operations), its bytes Q, its seconds (the least of the runs).
struct Sample {
  double work = 0;
  double bytes = 0;
  double seconds = 0;
};

// λ, π, β minimising the squared relative error on `fitted` (λ ≥ 0 in closed form for each π, β
// of a logarithmic grid above the largest W/T and Q/T); the residuals as Fit documents.
Fit fit_roofline(const std::vector<Sample>& fitted, const std::vector<Sample>& held_out);

// A fit's confidence from its held-out residual (the largest |T̂ − T| / T on the shapes it did not
// see): "good" up to kGoodResidual, "fair" up to kResidualLimit, "LOW" beyond. calibrate_machine
// measures a class again, with twice the rounds, when its fit is past kResidualLimit, and keeps
// the better fit.
inline constexpr double kGoodResidual = 0.10;
inline constexpr double kResidualLimit = 0.25;
const char* fit_confidence(const Fit& fit);

// Every time is the median, over at least kMinRounds rounds, of one run per round; the runs that
// are compared (a conversion against the same op without it) alternate within each round.
inline constexpr int kMinRounds = 5;

struct CalibrateOptions {
  int threads = 1;
  int runs = 5;  // rounds per shape after a warm-up (at least kMinRounds); each time the median
  std::function<void(const std::string&)> progress;
};

Profile calibrate_machine(const CalibrateOptions& options);

// /proc/cpuinfo's first "model name", or "unknown".
std::string cpu_model();

}  // namespace presk::profile
