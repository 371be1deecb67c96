// Measuring this machine (presk bench --calibrate): small programs of one primitive each (two
// kernels per class), run on the native executor with its per-op timer (ExecuteOptions::profile)
// over shapes from a few hundred elements to half a million, a roofline fitted per class and
// type on most samples and judged on the others (held out), and each conversion's cost per
// element from the same op run under a uniform and under a mixed realization, the two in
// alternating rounds, less the traffic difference the roofline prices. Every time is a median
// over rounds (kMinRounds at least); a fit past kResidualLimit, or a conversion below 0 beyond its
// error, is rejected and measured again. A measurement: two runs give two profiles; the fit of
// given samples is deterministic. Errors: E1529.
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
// see): "good" up to kGoodResidual, "fair" up to kResidualLimit, "LOW" beyond. A fit past
// kResidualLimit is rejected and measured again with twice the rounds, kMeasurements times at
// most (fit_measured).
inline constexpr double kGoodResidual = 0.10;
inline constexpr double kResidualLimit = 0.25;
inline constexpr int kMeasurements = 3;
const char* fit_confidence(const Fit& fit);

// A conversion's cost per element, from one shape's paired times: the op with the conversion
// (`with`) and without it, and `traffic`, what the op's roofline prices for the bytes the two
// read differently (a bf16 operand in place of an f32 one, an int8 weight's saving). The
// conversion's own time is with − without − traffic.
struct ConversionPoint {
  double elements = 0;
  double with = 0;
  double without = 0;
  double traffic = 0;
};
// The least-squares cost per element through the origin and its standard error.
struct ConversionFit {
  double cost = 0;
  double error = 0;
  int points = 0;
};
ConversionFit fit_conversion(const std::vector<ConversionPoint>& points);
// "good" when the error is at most a quarter of the cost, "fair" up to half, else "LOW" (below
// 0, or within the noise).
const char* conversion_confidence(const ConversionFit& fit);
// What a profile records: the cost, or 0 for one below 0 (a conversion does not save time; a fit
// below 0 by more than twice its error was measured again first, conversion_measured).
double recorded_cost(const ConversionFit& fit);

// Every time is the median, over at least kMinRounds rounds, of one run per round; the runs that
// are compared (a conversion against the same op without it) alternate within each round.
inline constexpr int kMinRounds = 5;

struct CalibrateOptions {
  int threads = 1;
  int runs = 5;  // rounds per shape after a warm-up (at least kMinRounds); each time the median
  std::function<void(const std::string&)> progress;
};

Profile calibrate_machine(const CalibrateOptions& options);

// The fit of `measure(rounds)`'s samples (every third held out), rejected and measured again at
// twice the rounds while its held-out residual passes kResidualLimit (kMeasurements times at
// most; then the best is kept); the progress line names the confidence and each rejection.
Fit fit_measured(const CalibrateOptions& options, const std::string& what,
                 const std::function<std::vector<Sample>(int rounds)>& measure);
// The same for a conversion: a fit below 0 by more than twice its error is rejected and measured
// again; returns recorded_cost of the last.
double conversion_measured(const CalibrateOptions& options, const std::string& what,
                           const std::function<std::vector<ConversionPoint>(int rounds)>& measure);

// /proc/cpuinfo's first "model name", or "unknown".
std::string cpu_model();

}  // namespace presk::profile
