// A profile of this machine (docs/precision.md, "solve --profile"; the seed's "Time, not
// traffic"): per primitive class and type a roofline T̂ = λ + max(W/π, Q/β) — λ the fixed cost
// of one op (s), π its arithmetic rate (operations/s), β its byte rate (bytes/s) — and the cost
// per element of each conversion between types, at an op's edge (a stored value read by a site
// of another type) and at a parameter's load (a parameter read by a site of another type, an
// integer weight dequantized). W is the op's arithmetic (its elements times the weight of its
// primitive, precision::arithmetic_weight); Q the bytes it reads and writes at their types.
// JSON, format 1, with the machine's CPU model, core count, thread count and date. Errors
// E1200–E1209.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "exec/native/numeric.h"
#include "ir/ir.h"

namespace presk::profile {

using exec::native::RealType;

enum class OpClass { contraction, elementwise, reduction, normalization, transcendental, layout };
inline constexpr OpClass kClasses[] = {OpClass::contraction, OpClass::elementwise,   OpClass::reduction,
                                       OpClass::normalization, OpClass::transcendental, OpClass::layout};
const char* class_name(OpClass op_class);
// The class an op is priced under: exp, log, tanh and the GELUs are transcendental; softmax,
// log_softmax and cross_entropy normalizations; embed and the layout ops layout.
OpClass op_class(ir::Op op);

// The types a profile holds rooflines for: the floats, and int8/int4 weights (a contraction
// reading an integer parameter; only the contraction class).
inline constexpr const char* kFloatTypes[] = {"f64", "f32", "bf16"};
inline constexpr const char* kIntegerTypes[] = {"int8", "int4"};

struct Roofline {
  double latency = 0;    // λ, seconds per op
  double rate = 1;       // π, operations per second
  double bandwidth = 1;  // β, bytes per second
  double predict(double work, double bytes) const;  // seconds of one op
};

struct Fit {
  Roofline roofline;
  int points = 0;            // shapes fitted
  int held_out = 0;          // shapes held out
  double residual = 0;       // the largest |T̂ − T| / T on the held-out shapes
  double fit_residual = 0;   // the same on the fitted shapes
};

struct Profile {
  int format = 1;
  std::string cpu;      // /proc/cpuinfo's model name
  int cores = 0;        // std::thread::hardware_concurrency
  int threads = 1;      // the executor's threads while measuring
  std::string date;     // UTC, ISO 8601
  std::map<std::string, std::map<std::string, Fit>> rooflines;  // class name → type name → fit
  // Seconds per element of a conversion "FROM>TO" ("f64>f32", "bf16>f32", "int8>f32").
  std::map<std::string, double> edge;  // a stored value read by a site of another type
  std::map<std::string, double> load;  // a parameter read by a site of another type

  const Roofline& roofline(OpClass op_class, const std::string& type) const;
  double edge_cost(RealType from, RealType to) const;                // 0 when from == to
  double load_cost(const std::string& from, RealType to) const;      // from: a float or "int8"/"int4"
};

std::string conversion_key(const std::string& from, const std::string& to);  // "f64>f32"

// The JSON form (format 1); parse_profile(profile_to_json(p)) == p, bit for bit.
nlohmann::ordered_json profile_to_json(const Profile& profile);
// Validates as it reads, naming `origin`: E1201 format, E1202 a missing class, type or
// conversion, E1203 a number that is not finite, negative, or (a rate) zero, E1204 a machine
// field missing or mistyped.
Profile parse_profile(const nlohmann::json& json, const std::string& origin);
// The profile a file holds: E1200 when it cannot be read or is not JSON, then parse_profile.
Profile read_profile(const std::string& path);

}  // namespace presk::profile
