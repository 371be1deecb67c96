// A profile of this machine: its JSON form and its validation (profile.h).
#include "profile/profile.h"

#include <algorithm>
#include <cmath>

#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/json_reader.h"

namespace presk::profile {
namespace {

constexpr const char* kRemedy = "measure this machine again: presk bench --calibrate --out PROFILE.json";

const nlohmann::json& field(const nlohmann::json& object, const std::string& key, const std::string& where,
                            const std::string& origin) {
  if (!object.is_object() || !object.contains(key)) {
    user_error("E1202").hint(kRemedy) << "profile " << origin << " has no " << where << " `" << key << "`";
  }
  return object.at(key);
}

double number(const nlohmann::json& value, const std::string& where, const std::string& origin, bool positive) {
  if (!value.is_number()) {
    user_error("E1203").hint(kRemedy) << "profile " << origin << ": " << where << " is " << json_excerpt(value)
                                      << ", not a number";
  }
  const double x = value.get<double>();
  if (!std::isfinite(x) || x < 0 || (positive && x == 0)) {
    user_error("E1203").hint(kRemedy) << "profile " << origin << ": " << where << " is " << x << "; it must be finite and "
                                      << (positive ? "above 0" : "at least 0");
  }
  return x;
}

template <class Check>
const nlohmann::json& machine_field(const nlohmann::json& json, const char* key, const std::string& origin, Check check,
                                    const char* what) {
  if (!json.contains(key) || !check(json.at(key))) {
    user_error("E1204").hint(kRemedy) << "profile " << origin << ": `" << key << "` must be " << what;
  }
  return json.at(key);
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
  if (!json.is_object() || !json.contains("format") || json.at("format") != 1) {
    user_error("E1201").hint(kRemedy) << "profile " << origin << " is not a profile of format 1 (its `format` is "
                                      << (json.is_object() && json.contains("format") ? json_excerpt(json.at("format")) : "missing") << ")";
  }
  Profile profile;
  profile.cpu = machine_field(json, "cpu", origin, [](const auto& v) { return v.is_string(); }, "a string (the CPU model)")
                    .template get<std::string>();
  profile.date = machine_field(json, "date", origin, [](const auto& v) { return v.is_string(); }, "a string (the UTC date)")
                     .template get<std::string>();
  auto count = [](const auto& v) { return v.is_number_integer() && v.template get<int64_t>() >= 1 && v.template get<int64_t>() <= 1 << 20; };
  profile.cores = machine_field(json, "cores", origin, count, "a whole number ≥ 1").template get<int>();
  profile.threads = machine_field(json, "threads", origin, count, "a whole number ≥ 1").template get<int>();
  const nlohmann::json& rooflines = field(json, "rooflines", "field", origin);
  for (const auto& [name, type] : required_rooflines()) {
    const nlohmann::json& entry = field(field(rooflines, name, "class", origin), type, "type of class `" + name + "`:", origin);
    const std::string where = name + "." + type;
    Fit fit;
    fit.roofline.latency = number(field(entry, "latency", where, origin), where + ".latency", origin, false);
    fit.roofline.rate = number(field(entry, "rate", where, origin), where + ".rate", origin, true);
    fit.roofline.bandwidth = number(field(entry, "bandwidth", where, origin), where + ".bandwidth", origin, true);
    fit.points = static_cast<int>(number(field(entry, "points", where, origin), where + ".points", origin, false));
    fit.held_out = static_cast<int>(number(field(entry, "held_out", where, origin), where + ".held_out", origin, false));
    fit.residual = number(field(entry, "residual", where, origin), where + ".residual", origin, false);
    fit.fit_residual = number(field(entry, "fit_residual", where, origin), where + ".fit_residual", origin, false);
    profile.rooflines[name][type] = fit;
  }
  const nlohmann::json& conversions = field(json, "conversions", "field", origin);
  for (bool load : {false, true}) {
    const char* kind = load ? "load" : "edge";
    const nlohmann::json& table = field(conversions, kind, "conversion table", origin);
    for (const auto& [from, to] : conversion_pairs(load)) {
      const std::string key = conversion_key(from, to);
      const double cost = number(field(table, key, std::string(kind) + " conversion", origin),
                                 std::string(kind) + " conversion " + key, origin, false);
      (load ? profile.load : profile.edge)[key] = cost;
    }
  }
  return profile;
}

Profile read_profile(const std::string& path) {
  const std::string text = read_input_file(path, {"profile", "E1200", std::string("check the path; ") + kRemedy, kJsonFileLimit});
  return parse_profile(parse_user_json(text, {path, "E1200", "the file is truncated or not a profile; measure again"}), path);
}

}  // namespace presk::profile
