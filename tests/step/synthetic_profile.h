// A synthetic profile for the step's pricing tests: every class at each float type's arithmetic
// rate (operations per second), a byte rate (bf16 its own), one latency, one conversion cost per element.
#pragma once

#include <map>
#include <string>

#include "profile/profile.h"

namespace presk::step::price_testing {

struct Speeds {
  double f64 = 1e9, f32 = 2e9, bf16 = 1.5e9;
  double bandwidth = 4e9;    // bytes per second, f64 and f32
  double bf16_bandwidth = 4e9;
  double conversion = 1e-9;  // seconds per element, every edge and load
  double latency = 1e-7;
};

inline profile::Profile synthetic_profile(const Speeds& speeds) {
  profile::Profile p;
  p.cpu = "Synthetic CPU";
  p.cores = 2;
  p.date = "2026-12-02T00:00:00Z";
  const std::map<std::string, double> rate = {{"f64", speeds.f64}, {"f32", speeds.f32}, {"bf16", speeds.bf16},
                                              {"int8", speeds.f32}, {"int4", speeds.f32}};
  for (profile::OpClass c : profile::kClasses) {
    for (const auto& [type, r] : rate) {
      if (type.rfind("int", 0) == 0 && c != profile::OpClass::contraction) continue;
      profile::Fit fit;
      fit.roofline = {speeds.latency, r, type == "bf16" ? speeds.bf16_bandwidth : speeds.bandwidth};
      fit.points = 5;
      fit.held_out = 2;
      p.rooflines[profile::class_name(c)][type] = fit;
    }
  }
  for (const char* from : profile::kFloatTypes) {
    for (const char* to : profile::kFloatTypes) {
      if (std::string(from) == to) continue;
      p.edge[profile::conversion_key(from, to)] = speeds.conversion;
      p.load[profile::conversion_key(from, to)] = speeds.conversion;
    }
  }
  p.load["int8>f32"] = p.load["int4>f32"] = speeds.conversion;
  return p;
}

}  // namespace presk::step::price_testing
