// Realization files: parsing (structure only) and validation against a program.
#include "exec/native/realization.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/json_reader.h"

namespace presk::exec::native {
namespace {

const char* const kMenu = "f64, f32, bf16";

// Levenshtein distance, for "did you mean".
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      size_t replace = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, replace});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "nearest: `a`, `b`, `c` (of N)" over the existing names.
std::string nearest_names(const std::string& wanted, const std::vector<std::string>& names) {
  if (names.empty()) return "the program has none";
  const std::string prefix = wanted.substr(0, 256);  // a hostile name's cost stays bounded
  std::vector<std::pair<size_t, std::string>> ranked;
  for (const std::string& name : names) ranked.emplace_back(edit_distance(prefix, name), name);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::ostringstream out;
  out << "nearest existing: ";
  for (size_t i = 0; i < std::min<size_t>(3, ranked.size()); ++i) {
    out << (i ? ", " : "") << "`" << ranked[i].second << "`";
  }
  out << " (of " << names.size() << ")";
  return out.str();
}

// A key of the file as a message shows it: as written when short, else a quoted prefix.
std::string shown_key(const std::string& key) { return key.size() <= 64 ? key : text_excerpt(key); }

RealType parse_type(const nlohmann::json& value, const std::string& field, const std::string& origin) {
  std::optional<RealType> type;
  if (value.is_string()) type = real_type_from_name(value.get<std::string>());
  if (!type) {
    user_error("E0603").hint(std::string("use one of ") + kMenu)
        << origin << ": field `" << field << "` is " << json_excerpt(value)
        << ", not a type on the menu (" << kMenu << ")";
  }
  return *type;
}

int64_t positive_integer(const nlohmann::json& order, const char* key, const std::string& origin) {
  if (!order.contains(key) || !order[key].is_number_integer() || order[key].get<int64_t>() < 1) {
    user_error("E0604").hint(std::string("write e.g. {\"kind\": \"") + order.value("kind", "") +
                             "\", \"" + key + "\": 8}")
        << origin << ": field `order." << key << "` must be an integer >= 1";
  }
  return order[key].get<int64_t>();
}

Order parse_order(const nlohmann::json& json, const std::string& origin) {
  const char* kinds = "sequential, blocked {block}, interleaved {partials}";
  if (!json.is_object() || !json.contains("kind") || !json["kind"].is_string()) {
    user_error("E0604").hint(std::string("one of ") + kinds)
        << origin << ": field `order` must be an object with a string `kind`";
  }
  Order order;
  std::string kind = json["kind"].get<std::string>();
  std::set<std::string> allowed = {"kind"};
  if (kind == "sequential") {
    order.kind = OrderKind::sequential;
  } else if (kind == "blocked") {
    order.kind = OrderKind::blocked;
    order.block = positive_integer(json, "block", origin);
    allowed.insert("block");
  } else if (kind == "interleaved") {
    order.kind = OrderKind::interleaved;
    order.partials = positive_integer(json, "partials", origin);
    allowed.insert("partials");
  } else {
    user_error("E0604").hint(std::string("one of ") + kinds)
        << origin << ": field `order.kind` is " << text_excerpt(kind) << ", not a known order";
  }
  for (const auto& [key, value] : json.items()) {
    if (!allowed.count(key)) {
      user_error("E0604") << origin << ": field `order." << shown_key(key) << "` does not belong to order `"
                          << kind << "`";
    }
  }
  return order;
}

QuantSpec parse_quant(const nlohmann::json& json, const std::string& path, const std::string& origin) {
  std::string field = "quant." + text_excerpt(path);
  if (!json.is_object()) user_error("E0608") << origin << ": field `" << field << "` must be an object";
  QuantSpec spec;
  for (const auto& [key, value] : json.items()) {
    if (key == "bits" && value.is_number_integer() && (value == 8 || value == 4)) {
      spec.bits = value.get<int>();
    } else if (key == "over" && value.is_number_integer() &&
               !(value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{INT64_MAX})) {
      spec.over = value.get<int64_t>();
    } else if (key == "scheme" && value.is_string() && (value == "absmax" || value == "pow2")) {
      spec.scheme = value == "absmax" ? QuantScheme::absmax : QuantScheme::pow2;
    } else if (key == "group" && value.is_number_integer() &&
               !(value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{INT64_MAX}) && value.get<int64_t>() >= 1) {
      spec.group = value.get<int64_t>();
    } else {
      user_error("E0608").hint(
          "bits: 8 or 4; over: an axis (negative from the end); scheme: absmax or pow2; group: a positive integer")
          << origin << ": field `" << field << "." << shown_key(key) << "` is " << json_excerpt(value)
          << ", not a valid quantization setting";
    }
  }
  if (!json.contains("bits")) {
    user_error("E0608").hint("add \"bits\": 8 or 4") << origin << ": field `" << field << ".bits` is missing";
  }
  return spec;
}

void check_format(const nlohmann::json& json, const std::string& origin) {
  if (!json.is_object()) user_error("E0601") << origin << ": a realization must be a JSON object";
  if (!json.contains("format")) {
    user_error("E0601").hint("add \"format\": 1") << origin << ": field `format` is missing";
  }
  if (json["format"] != 1) {
    user_error("E0601").hint("this presk reads format 1")
        << origin << ": field `format` is " << json_excerpt(json["format"]) << ", not a known format";
  }
  // `solve`: the record of the solve that wrote the file (src/solve/record.h); not read here.
  static const std::set<std::string> known = {"format", "default", "order", "sites", "params", "quant", "solve"};
  for (const auto& [key, value] : json.items()) {
    if (!known.count(key)) {
      user_error("E0602").hint("known fields: format, default, order, sites, params, quant, solve")
          << origin << ": unknown field `" << shown_key(key) << "`";
    }
  }
}

void require_object(const nlohmann::json& json, const char* field, const std::string& origin) {
  if (json.contains(field) && !json[field].is_object()) {
    user_error("E0602") << origin << ": field `" << field << "` must be an object keyed by name";
  }
}

}  // namespace

const char* order_kind_name(OrderKind kind) {
  switch (kind) {
    case OrderKind::sequential: return "sequential";
    case OrderKind::blocked: return "blocked";
    case OrderKind::interleaved: return "interleaved";
  }
  return "?";
}

RealType Realization::site_type(const std::string& site_name) const {
  auto it = sites.find(site_name);
  return it == sites.end() ? default_type : it->second;
}

RealType Realization::param_type(const std::string& path) const {
  auto it = params.find(path);
  return it == params.end() ? default_type : it->second;
}

const QuantSpec* Realization::param_quant(const std::string& path) const {
  auto it = quant.find(path);
  return it == quant.end() ? nullptr : &it->second;
}

Realization uniform_realization(RealType type) {
  Realization realization;
  realization.origin = real_type_name(type);
  realization.default_type = type;
  return realization;
}

Realization parse_realization(const nlohmann::json& json, const std::string& origin) {
  check_format(json, origin);
  Realization realization;
  realization.origin = origin;
  if (json.contains("default")) realization.default_type = parse_type(json["default"], "default", origin);
  if (json.contains("order")) realization.order = parse_order(json["order"], origin);
  for (const char* field : {"sites", "params", "quant"}) require_object(json, field, origin);
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& sites = json.contains("sites") ? json["sites"] : empty;
  const nlohmann::json& params = json.contains("params") ? json["params"] : empty;
  const nlohmann::json& quant = json.contains("quant") ? json["quant"] : empty;
  for (const auto& [name, value] : sites.items()) {
    realization.sites[name] = parse_type(value, "sites." + text_excerpt(name), origin);
  }
  for (const auto& [path, value] : params.items()) {
    realization.params[path] = parse_type(value, "params." + text_excerpt(path), origin);
  }
  for (const auto& [path, value] : quant.items()) {
    realization.quant[path] = parse_quant(value, path, origin);
  }
  return realization;
}

bool is_typable(const ir::Let& let) {
  const bool hands_on = let.op == ir::Op::param || ir::op_info(let.op).family == ir::OpFamily::Control;
  return let.type.kind == ir::ElemKind::Real && !let.type.is_tuple() && !hands_on;
}

namespace {

// Site names of lets whose stored value a realization may type (is_typable).
std::vector<std::string> typable_sites(const ir::Program& program) {
  std::vector<std::string> names;
  for (const ir::Function& function : program.functions) {
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      if (is_typable(function.lets[i])) names.push_back(function.site_name(i));
    }
  }
  return names;
}

std::vector<std::string> real_param_paths(const ir::Program& program) {
  std::vector<std::string> paths;
  for (const ir::Param& param : program.params) {
    if (param.type.kind == ir::ElemKind::Real) paths.push_back(param.path);
  }
  return paths;
}

void check_sites(const Realization& realization, const ir::Program& program) {
  std::vector<std::string> names = typable_sites(program);
  std::set<std::string> known(names.begin(), names.end());
  for (const auto& [name, type] : realization.sites) {
    if (known.count(name)) continue;
    // A let that exists but holds no value of its own type gets its own message.
    size_t slash = name.rfind("/%");
    const ir::Function* function = slash == std::string::npos ? nullptr : program.find_function(name.substr(0, slash));
    if (function) {
      std::string index = name.substr(slash + 2);
      // At most 18 digits: within int64, and far beyond any function's let count.
      bool digits = !index.empty() && index.size() <= 18 &&
                    std::all_of(index.begin(), index.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
      if (digits && std::stoull(index) < function->lets.size()) {
        user_error("E0610").hint("type the parameter under `params`, or the callee's sites")
            << realization.origin << ": field `sites." << text_excerpt(name)
            << "` names a let that holds no real value of its own (param, call, fold, or Z/B)";
      }
    }
    user_error("E0605").hint("`presk dump --stage sites` lists every site")
        << realization.origin << ": field `sites." << text_excerpt(name) << "`: no such site; "
        << nearest_names(name, names);
  }
}

// The bytes of a realization file; a folder or an unreadable file is E0600.
std::string read_realization_file(const std::string& path) {
  return read_input_file(path, {"realization file", "E0600", "check the path after `@`", kJsonFileLimit});
}

void check_params(const Realization& realization, const ir::Program& program) {
  std::vector<std::string> paths = real_param_paths(program);
  std::set<std::string> known(paths.begin(), paths.end());
  auto check = [&](const std::string& field, const std::string& path) {
    if (!known.count(path)) {
      user_error("E0606").hint("`presk dump --stage sites` lists every parameter path")
          << realization.origin << ": field `" << field << "." << text_excerpt(path) << "`: no such parameter; "
          << nearest_names(path, paths);
    }
  };
  for (const auto& [path, type] : realization.params) check("params", path);
  for (const auto& [path, spec] : realization.quant) {
    check("quant", path);
    if (realization.params.count(path)) {
      user_error("E0607").hint("a quantized parameter is integers with f32 scales; drop one of the two")
          << realization.origin << ": parameter `" << path << "` is both typed (params) and quantized (quant)";
    }
    const ir::Param* param = program.find_param(path);
    int64_t rank = param->type.rank();
    if (spec.over < -rank || spec.over >= rank) {
      user_error("E0609").hint("`over` is an axis of the parameter's full shape, negative from the end")
          << realization.origin << ": field `quant." << text_excerpt(path) << ".over` is " << spec.over
          << ", outside the " << rank << " axes of " << ir::type_to_string(param->type);
    }
    const int64_t extent = param->type.shape[spec.over < 0 ? spec.over + rank : spec.over];
    if (spec.group != 0 && extent % spec.group != 0) {
      user_error("E0612").hint("a group divides the axis it runs along: choose a divisor of " +
                               std::to_string(extent) + ", or drop `group` for one scale per channel")
          << realization.origin << ": field `quant." << text_excerpt(path) << ".group` is " << spec.group
          << ", which does not divide axis " << spec.over << " (" << extent << " elements) of "
          << ir::type_to_string(param->type);
    }
  }
}

}  // namespace

void validate_realization(const Realization& realization, const ir::Program& program) {
  check_sites(realization, program);
  check_params(realization, program);
}

Realization parse_realization_text(std::string_view text, const std::string& origin) {
  return parse_realization(parse_user_json(text, {origin, "E0600", "a realization is a JSON object (docs/realization.md)"}),
                           origin);
}

Realization read_realization(const std::string& argument) {
  if (!argument.empty() && argument[0] == '@') {
    return parse_realization_text(read_realization_file(argument.substr(1)), argument.substr(1));
  }
  if (auto type = real_type_from_name(argument)) return uniform_realization(*type);
  user_error("E0611").hint(std::string("a type (") + kMenu + ") or @file.json")
      << "`--realize " << argument << "` is neither a type on the menu nor @file.json";
  return {};  // not reached: the error throws
}

Realization load_realization(const std::string& argument, const ir::Program& program) {
  Realization realization = read_realization(argument);
  validate_realization(realization, program);
  return realization;
}

nlohmann::json realization_to_json(const Realization& realization) {
  nlohmann::json json = {{"format", 1}, {"default", real_type_name(realization.default_type)}};
  nlohmann::json order = {{"kind", order_kind_name(realization.order.kind)}};
  if (realization.order.kind == OrderKind::blocked) order["block"] = realization.order.block;
  if (realization.order.kind == OrderKind::interleaved) order["partials"] = realization.order.partials;
  json["order"] = order;
  json["sites"] = nlohmann::json::object();
  for (const auto& [name, type] : realization.sites) json["sites"][name] = real_type_name(type);
  json["params"] = nlohmann::json::object();
  for (const auto& [path, type] : realization.params) json["params"][path] = real_type_name(type);
  json["quant"] = nlohmann::json::object();
  for (const auto& [path, spec] : realization.quant) {
    json["quant"][path] = {{"bits", spec.bits}, {"over", spec.over},
                           {"scheme", spec.scheme == QuantScheme::absmax ? "absmax" : "pow2"}};
    if (spec.group != 0) json["quant"][path]["group"] = spec.group;
  }
  return json;
}

}  // namespace presk::exec::native
