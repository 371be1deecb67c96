// The envelope file (envelope.h): JSON, `"format": 1`, written atomically and validated on read
// field by field, each error naming the file and the field (docs/precision.md has the format).
#include "precision/envelope.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/json_reader.h"

namespace presk::precision {
namespace {

using nlohmann::json;
using ordered = nlohmann::ordered_json;  // what is written: fields in the documented order

constexpr int kFormat = 1;
constexpr int kMinBits = 53;
constexpr int kMaxBits = 1 << 20;

ordered number_json(double value) { return json_number<ordered>(value); }

ordered optional_json(const std::optional<double>& value) {
  return value ? number_json(*value) : ordered(nullptr);
}

ordered rounding_json(const RoundingEnvelope& rounding) {
  return {{"f64", number_json(rounding.f64)},
          {"f32", number_json(rounding.f32)},
          {"bf16", number_json(rounding.bf16)}};
}

ordered terms_json(const TermEnvelope& terms) {
  return {{"terms", terms.terms},
          {"sum_abs_terms", number_json(terms.sum_abs_terms)},
          {"root_sum_squares", number_json(terms.root_sum_squares)},
          {"operand_factors",
           {number_json(terms.operand_factors[0]), number_json(terms.operand_factors[1])}}};
}

ordered site_json(const SiteEnvelope& site) {
  ordered out = {{"site", site.site},
              {"op", site.op},
              {"type", site.type},
              {"max_abs", number_json(site.max_abs)},
              {"elements", site.elements},
              {"elements_per_sample", site.elements_per_sample},
              {"non_finite", site.non_finite},
              {"weight", number_json(site.weight)},
              {"terms", site.terms ? terms_json(*site.terms) : ordered(nullptr)},
              {"rounding", rounding_json(site.rounding)},
              {"sensitivity", optional_json(site.sensitivity)}};
  return out;
}

ordered parameter_json(const ParameterEnvelope& parameter) {
  return {{"path", parameter.path},
          {"type", parameter.type},
          {"max_abs", number_json(parameter.max_abs)},
          {"elements", parameter.elements},
          {"rounding", rounding_json(parameter.rounding)},
          {"sensitivity", optional_json(parameter.sensitivity)}};
}

// Reads the fields of one JSON object; `where` is the object's place in the file
// (`sites[3].rounding`), so each error names the file and the field.
class Fields {
 public:
  Fields(const json& object, std::string where, std::string origin)
      : object_(object), where_(std::move(where)), origin_(std::move(origin)) {
    if (!object_.is_object()) {
      user_error("E0905").hint(kRewrite) << origin_ << ": field `" << where_ << "` is " << kind(object_)
                                         << ", not an object";
    }
  }

  const std::string& origin() const { return origin_; }
  const json& object() const { return object_; }
  std::string name(const std::string& key) const {
    const std::string shown = key.size() <= 80 ? key : text_excerpt(key, 80);  // a hostile key stays short
    return where_.empty() ? shown : where_ + "." + shown;
  }

  const json& field(const std::string& key) const {
    auto found = object_.find(key);
    if (found == object_.end()) {
      user_error("E0904").hint(kRewrite) << origin_ << ": field `" << name(key) << "` is missing";
    }
    return *found;
  }

  // The object in field `key`, or `value` at place `key` (a list element), with this file.
  Fields inner(const std::string& key) const { return Fields(field(key), name(key), origin_); }
  Fields element(const json& value, const std::string& key) const { return Fields(value, name(key), origin_); }

  [[noreturn]] void mistyped(const std::string& key, const json& value, const char* wanted) const {
    user_error("E0905").hint(kRewrite) << origin_ << ": field `" << name(key) << "` is " << kind(value)
                                       << ", not " << wanted;
  }

  [[noreturn]] void out_of_range(const std::string& key, const json& value, const std::string& wanted) const {
    user_error("E0906").hint(kRewrite) << origin_ << ": field `" << name(key) << "` is " << json_excerpt(value)
                                       << ", but must be " << wanted;
  }

  std::string text(const std::string& key) const {
    const json& value = field(key);
    if (!value.is_string()) mistyped(key, value, "a string");
    return value.get<std::string>();
  }

  // An integer ≥ `least`.
  int64_t integer(const std::string& key, int64_t least = 0) const {
    const json& value = field(key);
    if (!value.is_number_integer()) mistyped(key, value, "an integer");
    if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      out_of_range(key, value, "below 2^63");
    }
    int64_t number = value.get<int64_t>();
    if (number < least) out_of_range(key, value, "at least " + std::to_string(least));
    return number;
  }

  // An integer in [0, 2^64).
  uint64_t unsigned_integer(const std::string& key) const {
    const json& value = field(key);
    if (!value.is_number_integer()) mistyped(key, value, "an integer");
    if (!value.is_number_unsigned() && value.get<int64_t>() < 0) out_of_range(key, value, "at least 0");
    return value.get<uint64_t>();
  }

  // A magnitude: a number ≥ 0, or "inf", or "nan" (never negative).
  double number(const std::string& key) const { return number_in(key, field(key)); }

  std::optional<double> optional_number(const std::string& key) const {
    const json& value = field(key);
    if (value.is_null()) return std::nullopt;
    return number_in(key, value);
  }

  // `value` read as a magnitude, named `key` in errors.
  double number_in(const std::string& key, const json& value) const {
    double number = 0;
    if (value.is_number()) {
      number = value.get<double>();
    } else if (value == "inf" || value == "-inf" || value == "nan") {
      number = value == "nan" ? std::numeric_limits<double>::quiet_NaN()
                              : (value == "inf" ? 1 : -1) * std::numeric_limits<double>::infinity();
    } else {
      mistyped(key, value, "a number (or \"inf\", \"nan\")");
    }
    if (number < 0) out_of_range(key, value, "a magnitude (not negative)");
    return number;
  }

 private:
  static constexpr const char* kRewrite = "calibrate again: `presk calibrate --precision ... --out FILE`";

  static std::string kind(const json& value) {
    if (value.is_null()) return "null";
    if (value.is_boolean()) return "a boolean";
    if (value.is_number()) return "a number";
    if (value.is_string()) return "a string";
    if (value.is_array()) return "a list";
    return "an object";
  }

  const json& object_;
  std::string where_;
  std::string origin_;
};

const json& list_field(const Fields& fields, const std::string& key) {
  const json& value = fields.field(key);
  if (!value.is_array()) fields.mistyped(key, value, "a list");
  return value;
}

RoundingEnvelope parse_rounding(const Fields& owner) {
  Fields fields = owner.inner("rounding");
  return {fields.number("f64"), fields.number("f32"), fields.number("bf16")};
}

std::optional<TermEnvelope> parse_terms(const Fields& owner) {
  if (owner.field("terms").is_null()) return std::nullopt;
  Fields fields = owner.inner("terms");
  TermEnvelope terms;
  terms.terms = fields.integer("terms");
  terms.sum_abs_terms = fields.number("sum_abs_terms");
  terms.root_sum_squares = fields.number("root_sum_squares");
  const json& factors = list_field(fields, "operand_factors");
  if (factors.size() != 2) fields.out_of_range("operand_factors", factors, "a list of two numbers");
  for (size_t i = 0; i < 2; ++i) {
    terms.operand_factors[i] = fields.number_in("operand_factors[" + std::to_string(i) + "]", factors[i]);
  }
  return terms;
}

SiteEnvelope parse_site(const Fields& fields) {
  SiteEnvelope site;
  site.site = fields.text("site");
  site.op = fields.text("op");
  site.type = fields.text("type");
  site.max_abs = fields.number("max_abs");
  site.elements = fields.integer("elements");
  site.elements_per_sample = fields.integer("elements_per_sample");
  site.non_finite = fields.integer("non_finite");
  site.weight = fields.number("weight");
  site.terms = parse_terms(fields);
  site.rounding = parse_rounding(fields);
  site.sensitivity = fields.optional_number("sensitivity");
  return site;
}

ParameterEnvelope parse_parameter(const Fields& fields) {
  ParameterEnvelope parameter;
  parameter.path = fields.text("path");
  parameter.type = fields.text("type");
  parameter.max_abs = fields.number("max_abs");
  parameter.elements = fields.integer("elements");
  parameter.rounding = parse_rounding(fields);
  parameter.sensitivity = fields.optional_number("sensitivity");
  return parameter;
}

// Each element of list `key`, parsed by `parse`, with its name (read by `name_key`) unique.
template <class T, class Parse>
std::vector<T> parse_list(const Fields& fields, const std::string& key, const std::string& name_key,
                          const Parse& parse) {
  std::vector<T> list;
  std::set<std::string> seen;
  const json& values = list_field(fields, key);
  for (size_t i = 0; i < values.size(); ++i) {
    Fields element = fields.element(values[i], key + "[" + std::to_string(i) + "]");
    std::string name = element.text(name_key);
    if (!seen.insert(name).second) {
      user_error("E0907").hint("calibrate again: each site and parameter appears once")
          << fields.origin() << ": field `" << element.name(name_key) << "` is " << text_excerpt(name)
          << ", listed twice";
    }
    list.push_back(parse(element));
  }
  return list;
}

bool is_identifier(const std::string& text) {
  auto letter = [](unsigned char c) { return std::isalpha(c) != 0 || c == '_'; };
  return !text.empty() && text.size() <= 256 && letter(text[0]) &&
         std::all_of(text.begin(), text.end(), [&](unsigned char c) { return letter(c) || std::isdigit(c) != 0; });
}

// What `--const`/`--dim` accept after the `=` (calibrate records it as given).
bool is_integer_text(const std::string& text) {
  size_t used = 0;
  try {
    (void)std::stoll(text, &used, 10);
  } catch (const std::exception&) {
    return false;
  }
  return used == text.size();
}

// `--const`/`--dim` bindings as calibrate recorded them: a name of the program, an integer.
std::map<std::string, std::string> parse_bindings(const Fields& fields) {
  Fields bindings = fields.inner("bindings");
  std::map<std::string, std::string> map;
  for (const auto& item : bindings.object().items()) {
    std::string value = bindings.text(item.key());
    if (!is_identifier(item.key())) {
      bindings.out_of_range(item.key(), item.key(), "keyed by a const or dim name (an identifier)");
    }
    if (!is_integer_text(value)) bindings.out_of_range(item.key(), item.value(), "an integer, as text");
    map[item.key()] = value;
  }
  return map;
}

void check_format(const Fields& fields) {
  const json& format = fields.field("format");
  if (!format.is_number_integer() || format.get<int64_t>() != kFormat) {
    user_error("E0903").hint("this presk reads envelope format 1; calibrate again")
        << fields.origin() << ": field `format` is " << json_excerpt(format) << ", not a known format (1)";
  }
}

}  // namespace

const SiteEnvelope* Envelope::find_site(const std::string& name) const {
  for (const SiteEnvelope& entry : sites) {
    if (entry.site == name) return &entry;
  }
  return nullptr;
}

const ParameterEnvelope* Envelope::find_parameter(const std::string& path) const {
  for (const ParameterEnvelope& entry : parameters) {
    if (entry.path == path) return &entry;
  }
  return nullptr;
}

nlohmann::ordered_json envelope_json(const Envelope& envelope) {
  ordered sites = ordered::array(), parameters = ordered::array();
  for (const SiteEnvelope& site : envelope.sites) sites.push_back(site_json(site));
  for (const ParameterEnvelope& parameter : envelope.parameters) parameters.push_back(parameter_json(parameter));
  return {{"format", envelope.format},         {"program", envelope.program},
          {"program_hash", envelope.program_hash}, {"entry", envelope.entry},
          {"bindings", envelope.bindings},     {"data", envelope.data},
          {"seed", static_cast<uint64_t>(envelope.seed)}, {"token_range", envelope.token_range},
          {"samples", envelope.samples},       {"offset", envelope.offset},
          {"bits", envelope.bits},             {"weights", envelope.weights},
          {"weights_sha256", envelope.weights_sha256}, {"data_sha256", envelope.data_sha256},
          {"date", envelope.date},             {"sweep", envelope.sweep},
          {"output_max_abs", number_json(envelope.output_max_abs)},
          {"sites", std::move(sites)},         {"parameters", std::move(parameters)}};
}

Envelope parse_envelope(const nlohmann::json& json, const std::string& origin) {
  if (!json.is_object()) {
    user_error("E0902").hint("an envelope is the JSON object `presk calibrate --precision` writes")
        << origin << ": an envelope must be a JSON object";
  }
  Fields fields(json, "", origin);
  check_format(fields);
  Envelope envelope;
  envelope.program = fields.text("program");
  envelope.program_hash = fields.text("program_hash");
  envelope.entry = fields.text("entry");
  envelope.bindings = parse_bindings(fields);
  envelope.data = fields.text("data");
  envelope.seed = static_cast<int64_t>(fields.unsigned_integer("seed"));  // --seed is 64 bits
  envelope.token_range = fields.integer("token_range");
  envelope.samples = fields.integer("samples", 1);
  envelope.offset = fields.integer("offset");
  int64_t bits = fields.integer("bits", kMinBits);
  if (bits > kMaxBits) fields.out_of_range("bits", fields.field("bits"), "at most " + std::to_string(kMaxBits));
  envelope.bits = static_cast<int>(bits);
  envelope.weights = fields.text("weights");
  // Recorded since the solver (envelopes written before have neither: nothing to compare).
  if (json.contains("weights_sha256")) envelope.weights_sha256 = fields.text("weights_sha256");
  if (json.contains("data_sha256")) envelope.data_sha256 = fields.text("data_sha256");
  envelope.date = fields.text("date");
  if (json.contains("sweep")) envelope.sweep = fields.text("sweep");
  if (envelope.sweep != "exact" && envelope.sweep != "f64") {
    fields.out_of_range("sweep", fields.field("sweep"), "\"exact\" or \"f64\"");
  }
  envelope.output_max_abs = fields.number("output_max_abs");
  envelope.sites = parse_list<SiteEnvelope>(fields, "sites", "site", parse_site);
  envelope.parameters = parse_list<ParameterEnvelope>(fields, "parameters", "path", parse_parameter);
  return envelope;
}

void write_envelope(const Envelope& envelope, const std::string& path) {
  write_file_atomically(path, envelope_json(envelope).dump(1) + "\n");
}

Envelope read_envelope(const std::string& path) {
  const std::string text = read_input_file(
      path, {"envelope file", "E0900", "check the path; `presk calibrate --precision ... --out FILE` writes one",
             kJsonFileLimit});
  return parse_envelope_text(text, path);
}

Envelope parse_envelope_text(std::string_view text, const std::string& origin) {
  return parse_envelope(
      parse_user_json(text, {origin, "E0901", "the file is truncated or not an envelope; calibrate again"}), origin);
}

}  // namespace presk::precision
