// A profile of this machine: its JSON form and its validation (profile.h).
#include "profile/profile.h"

#include <algorithm>
#include <cmath>

#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/json_fields.h"
#include "support/json_reader.h"

namespace presk::profile {
namespace {

constexpr const char* kRemedy = "measure this machine again: presk bench --calibrate --out PROFILE.json";

// A field missing is E1202, another format E1201 (json_fields.h); a bad number E1203, a bad
// machine field E1204 (named where they are read).
const JsonFileKind kProfileKind{"profile", "E1202", kRemedy, 1, "E1201"};

std::string machine_text(const JsonFields& f, const nlohmann::json& json, const char* key, const char* what) {
  if (!json.contains(key) || !json.at(key).is_string()) f.fail(key, std::string("must be ") + what, "E1204");
  return json.at(key).get<std::string>();
}

int machine_count(const JsonFields& f, const nlohmann::json& json, const char* key) {
  const bool fits = json.contains(key) && json.at(key).is_number_integer() && json.at(key).get<int64_t>() >= 1 &&
                    json.at(key).get<int64_t>() <= 1 << 20;
  if (!fits) f.fail(key, "must be a whole number ≥ 1", "E1204");
  return json.at(key).get<int>();
}

std::vector<std::pair<std::string, std::string>> conversion_pairs(bool load) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const char* from : kFloatTypes) {
    for (const char* to : kFloatTypes) {
      if (std::string(from) != to) pairs.emplace_back(from, to);
    }
  }
  if (load) {
    for (const char* from : kIntegerTypes) pairs.emplace_back(from, "f32");
  }
  return pairs;
}

std::vector<std::pair<std::string, std::string>> required_rooflines() {
  std::vector<std::pair<std::string, std::string>> out;
  for (OpClass c : kClasses) {
    for (const char* type : kFloatTypes) out.emplace_back(class_name(c), type);
  }
  for (const char* type : kIntegerTypes) out.emplace_back(class_name(OpClass::contraction), type);
  return out;
}

}  // namespace

const char* class_name(OpClass op_class) {
  switch (op_class) {
    case OpClass::contraction: return "contraction";
    case OpClass::elementwise: return "elementwise";
    case OpClass::reduction: return "reduction";
    case OpClass::normalization: return "normalization";
    case OpClass::transcendental: return "transcendental";
    case OpClass::layout: return "layout";
  }
  return "?";
}

OpClass op_class(ir::Op op) {
  switch (op) {
    case ir::Op::exp: case ir::Op::log: case ir::Op::tanh: case ir::Op::gelu_tanh: case ir::Op::gelu_erf:
    case ir::Op::gelu_tanh_grad: case ir::Op::gelu_erf_grad:
      return OpClass::transcendental;
    case ir::Op::softmax: case ir::Op::log_softmax: case ir::Op::cross_entropy: return OpClass::normalization;
    default: break;
  }
  switch (ir::op_info(op).family) {
    case ir::OpFamily::Contraction: return OpClass::contraction;
    case ir::OpFamily::Reduction: return OpClass::reduction;
    case ir::OpFamily::Normalization: case ir::OpFamily::Loss: return OpClass::normalization;
    case ir::OpFamily::Layout: case ir::OpFamily::Gather: case ir::OpFamily::Source: case ir::OpFamily::Control:
      return OpClass::layout;
    case ir::OpFamily::Elementwise: return OpClass::elementwise;
  }
  return OpClass::elementwise;
}

double Roofline::predict(double work, double bytes) const {
  return latency + std::max(work / rate, bytes / bandwidth);
}

std::string conversion_key(const std::string& from, const std::string& to) { return from + ">" + to; }

const Roofline& Profile::roofline(OpClass op_class, const std::string& type) const {
  return rooflines.at(class_name(op_class)).at(type).roofline;
}

double Profile::edge_cost(RealType from, RealType to) const {
  if (from == to) return 0;
  return edge.at(conversion_key(exec::native::real_type_name(from), exec::native::real_type_name(to)));
}

double Profile::load_cost(const std::string& from, RealType to) const {
  const std::string to_name = exec::native::real_type_name(to);
  if (from == to_name) return 0;
  if (from == "int8" || from == "int4") {  // dequantized to f32, then as an f32 value would be
    return load.at(conversion_key(from, "f32")) + (to == RealType::f32 ? 0 : load.at(conversion_key("f32", to_name)));
  }
  return load.at(conversion_key(from, to_name));
}

nlohmann::ordered_json profile_to_json(const Profile& profile) {
  nlohmann::ordered_json out = {{"format", profile.format}, {"cpu", profile.cpu}, {"cores", profile.cores},
                                {"threads", profile.threads}, {"date", profile.date}};
  nlohmann::ordered_json rooflines = nlohmann::ordered_json::object();
  for (const auto& [name, types] : profile.rooflines) {
    for (const auto& [type, fit] : types) {
      rooflines[name][type] = {{"latency", fit.roofline.latency}, {"rate", fit.roofline.rate},
                               {"bandwidth", fit.roofline.bandwidth}, {"points", fit.points},
                               {"held_out", fit.held_out}, {"residual", fit.residual},
                               {"fit_residual", fit.fit_residual}};
    }
  }
  out["rooflines"] = rooflines;
  out["conversions"] = {{"edge", profile.edge}, {"load", profile.load}};
  return out;
}

Profile parse_profile(const nlohmann::json& json, const std::string& origin) {
  const JsonFields f(origin, kProfileKind);
  f.check_format(json);
  Profile profile;
  profile.cpu = machine_text(f, json, "cpu", "a string (the CPU model)");
  profile.date = machine_text(f, json, "date", "a string (the UTC date)");
  profile.cores = machine_count(f, json, "cores");
  profile.threads = machine_count(f, json, "threads");
  const nlohmann::json& rooflines = f.object(json, "rooflines", "");
  for (const auto& [name, type] : required_rooflines()) {
    const nlohmann::json& entry = f.object(f.object(rooflines, name, "rooflines"), type, "rooflines." + name);
    const std::string where = "rooflines." + name + "." + type;
    Fit fit;
    fit.roofline.latency = f.non_negative(entry, "latency", where, false, "E1203");
    fit.roofline.rate = f.non_negative(entry, "rate", where, true, "E1203");
    fit.roofline.bandwidth = f.non_negative(entry, "bandwidth", where, true, "E1203");
    fit.points = static_cast<int>(f.non_negative(entry, "points", where, false, "E1203"));
    fit.held_out = static_cast<int>(f.non_negative(entry, "held_out", where, false, "E1203"));
    fit.residual = f.non_negative(entry, "residual", where, false, "E1203");
    fit.fit_residual = f.non_negative(entry, "fit_residual", where, false, "E1203");
    profile.rooflines[name][type] = fit;
  }
  const nlohmann::json& conversions = f.object(json, "conversions", "");
  for (bool load : {false, true}) {
    const char* kind = load ? "load" : "edge";
    const nlohmann::json& table = f.object(conversions, kind, "conversions");
    for (const auto& [from, to] : conversion_pairs(load)) {
      const std::string key = conversion_key(from, to);
      (load ? profile.load : profile.edge)[key] = f.non_negative(table, key, std::string("conversions.") + kind, false, "E1203");
    }
  }
  return profile;
}

Profile read_profile(const std::string& path) {
  const std::string text = read_input_file(path, {"profile", "E1200", std::string("check the path; ") + kRemedy, kJsonFileLimit});
  return parse_profile(parse_user_json(text, {path, "E1200", "the file is truncated or not a profile; measure again"}), path);
}

}  // namespace presk::profile
