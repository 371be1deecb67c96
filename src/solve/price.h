// Pricing by predicted time (presk solve --profile; the seed's "Time, not traffic"): each
// stored value is priced by the profile's roofline for its primitive's class at its type,
// T̂ = calls·λ + max(W/π, Q/β) with W its elements times its primitive's weight (the envelope
// records it) and Q the bytes it writes and reads at their types, plus the conversion each
// edge between types implies — a value of type a read by a site of type b pays the profile's
// cost per element of a → b (a parameter its load cost, an integer weight its dequantization).
// A parameter costs only through its readers. The greedy (propose_by_time) ranks the steps by
// predicted seconds saved per unit of term: first the steps that save time where they stand,
// then those that would save it once their neighbours follow (their saving with free edges: a
// chain is narrowed through a first step that alone is a loss); a step that saves nothing even
// then is never taken. It keeps the prefix of its steps with the least predicted time, then
// undoes any narrowing the profile predicts slower; and as a safeguard it compares that with
// the traffic greedy's proposal (propose.h) after the same undoing, and keeps whichever is
// predicted faster. A prediction for the machine the profile measured: it promises no time.
#pragma once

#include <vector>

#include "profile/profile.h"
#include "solve/estimate.h"
#include "solve/solution.h"

namespace presk::solve {

// A value's machine type: a float, or integer storage of `bits` (meaning f32).
struct ValueType {
  RealType type = RealType::f64;
  int bits = 0;
};
using Types = std::vector<ValueType>;  // by value index of the offer

Types types_of(const Offer& offer, const Assignment& assignment);
// Every value at its rung `rung_name` where its ladder has it, else f64 ("f32": all-f32).
Assignment uniform_assignment(const Offer& offer, const std::string& rung_name);
// Every offered value at its narrowest rung: the relaxation floor.
Assignment floor_assignment(const Offer& offer);

class Pricer {
 public:
  Pricer(const Offer& offer, const profile::Profile& profile);
  double seconds(const Types& types) const;                 // one sample, predicted
  // 0 for a parameter; without `conversions`, as if every edge were free.
  double site_seconds(const Types& types, int value, bool conversions = true) const;
  // What value's type changes: its own site and its readers'.
  double local_seconds(const Types& types, int value, bool conversions = true) const;

 private:
  const Offer& offer_;
  const profile::Profile& profile_;
  std::vector<std::vector<int>> reads_;  // per value, the values it reads
  std::vector<double> calls_;            // per site, its runs per sample
};

// What the two candidates predicted (seconds per sample), and which was kept.
struct TimeProposal {
  double by_time = 0, by_bytes = 0;
  bool kept_bytes = false;
};
TimeProposal propose_by_time(const Offer& offer, const Pricer& pricer, const EstimateOptions& options, double target,
                             Solution& solution);

struct TimePrediction {
  double all_f64 = 0, all_f32 = 0, realization = 0, floor = 0;  // seconds per sample
};
TimePrediction predict_times(const Offer& offer, const Pricer& pricer, const Assignment& realization);

}  // namespace presk::solve
