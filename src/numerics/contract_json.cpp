// Reading and writing a contract file (contract_json.h, docs/chip.md).
#include "numerics/contract_json.h"

#include <cmath>
#include <set>

#include "ir/ir.h"
#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/json_fields.h"
#include "support/json_reader.h"

namespace presk::numerics {
namespace {

using nlohmann::json;

constexpr const char* kHint = "see docs/chip.md for the contract file; examples/contracts/ has examples";

// The fields of one file, with the contract's checks beside the shared ones.
class Reader {
 public:
  explicit Reader(const std::string& origin)
      : fields_(origin, JsonFileKind{"contract", "E1701", kHint, 1, "E1702"}) {}

  const JsonFields& fields() const { return fields_; }

  // E1708 for a key of `object` outside `known` (a misspelt field is never ignored).
  void only(const json& object, const std::set<std::string>& known, const std::string& where) const {
    for (const auto& item : object.items()) {
      if (!known.count(item.key())) {
        std::string list;
        for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
        fields_.fail(JsonFields::join(where, item.key()), "is no field of this object (its fields: " + list + ")", "E1708");
      }
    }
  }

  // A string field that must be one of `names` (E1703 otherwise).
  size_t choice(const json& value, const std::vector<const char*>& names, const std::string& path, const char* what) const {
    if (!value.is_string()) fields_.fail(path, std::string("is not a string naming ") + what + ": " + json_excerpt(value));
    const std::string text = value.get<std::string>();
    std::string list;
    for (size_t i = 0; i < names.size(); ++i) {
      if (text == names[i]) return i;
      list += std::string(i ? ", " : "") + names[i];
    }
    fields_.fail(path, "is " + json_excerpt(value) + ", no " + what + " (" + list + ")", "E1703");
  }

  Block block(const json& value, const std::string& path) const {
    if (value.is_number_integer()) {
      const int64_t n = value.get<int64_t>();
      if (n < 1 || n > (int64_t{1} << 30)) fields_.fail(path, "is " + std::to_string(n) + ", not a block of 1 … 2^30 values", "E1704");
      return Block::fixed_count(n);
    }
    if (!value.is_string()) fields_.fail(path, "is neither a count nor \"row\" or \"format\": " + json_excerpt(value), "E1703");
    return choice(value, {"row", "format"}, path, "block") == 0 ? Block::of_row() : Block::of_format();
  }

  Scheme scheme(const json& object, const std::string& where) const {
    if (!object.is_object()) fields_.fail(where, "is not a scheme object: " + json_excerpt(object));
    only(object, {"block", "scale", "significand_bits", "words"}, where);
    Scheme scheme;
    scheme.block = block(fields_.field(object, "block", where), JsonFields::join(where, "block"));
    const size_t scale = choice(fields_.field(object, "scale", where), {"absmax", "pow2", "unsigned"},
                                JsonFields::join(where, "scale"), "scale");
    scheme.scale.kind = static_cast<Scale::Kind>(scale);
    if (scheme.scale.kind == Scale::Kind::pow2) {
      const int64_t bits = fields_.integer(object, "significand_bits", 1, where);
      if (bits > 24) fields_.fail(JsonFields::join(where, "significand_bits"), "is " + std::to_string(bits) + ", above 24", "E1704");
      scheme.scale.significand_bits = static_cast<int>(bits);
    } else if (object.contains("significand_bits")) {
      fields_.fail(JsonFields::join(where, "significand_bits"), "is given for a scale other than pow2", "E1709");
    }
    const size_t words = choice(fields_.field(object, "words", where), {"one", "two_rest", "two_code16", "three"},
                                JsonFields::join(where, "words"), "words");
    scheme.words = static_cast<Words>(words);
    return scheme;
  }

  std::optional<Scheme> optional_scheme(const json& value, const std::string& where) const {
    if (value.is_null()) return std::nullopt;
    return scheme(value, where);
  }

  FloatFormat float_format(const json& value, const std::string& path) const {
    return static_cast<FloatFormat>(choice(value, {"f32", "bf16", "f16"}, path, "float format"));
  }

  Taken taken(const json& object, const std::string& where) const {
    if (!object.is_object() || object.size() != 1 || !(object.contains("float") || object.contains("scheme"))) {
      fields_.fail(where, "is not {\"float\": …} or {\"scheme\": …}: " + json_excerpt(object), "E1709");
    }
    Taken taken;
    if (object.contains("float")) {
      taken.float_format = float_format(object["float"], JsonFields::join(where, "float"));
    } else {
      taken.scheme = scheme(object["scheme"], JsonFields::join(where, "scheme"));
    }
    return taken;
  }

  Keep keep(const json& value, const std::string& path) const {
    static const std::vector<const char*> names = {"as_computed", "f32", "bf16", "f16", "int8_rows", "int8_rows_rotated"};
    return *parse_keep_name(names[choice(value, names, path, "keep mode")]);
  }

  Bound bound(const json& value, const std::string& where) const {
    if (value == "exact") return Bound::EXACT;
    if (!value.is_object()) fields_.fail(where, "is neither \"exact\" nor {of_block, of_value, floor}: " + json_excerpt(value));
    only(value, {"of_block", "of_value", "floor"}, where);
    Bound bound;
    bound.of_block = fields_.non_negative(value, "of_block", where, false, "E1706");
    bound.of_value = fields_.non_negative(value, "of_value", where, false, "E1706");
    bound.floor = fields_.non_negative(value, "floor", where, false, "E1706");
    return bound;
  }

  AttentionNumerics attention(const json& object, const std::string& where) const {
    only(object, {"queries", "keys", "values", "weights"}, where);
    AttentionNumerics a;
    a.queries = taken(fields_.object(object, "queries", where), JsonFields::join(where, "queries"));
    a.keys = taken(fields_.object(object, "keys", where), JsonFields::join(where, "keys"));
    a.values = taken(fields_.object(object, "values", where), JsonFields::join(where, "values"));
    a.weights = taken(fields_.object(object, "weights", where), JsonFields::join(where, "weights"));
    return a;
  }

  // `<op>_quant` for an op of the IR that computes a value (not a source, layout or control op).
  std::string fused_class(const json& value, const std::string& path) const {
    if (!value.is_string()) fields_.fail(path, "is not a string: " + json_excerpt(value));
    const std::string name = value.get<std::string>();
    const std::string suffix = "_quant";
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      auto op = ir::op_from_name(name.substr(0, name.size() - suffix.size()));
      if (op) {
        const ir::OpFamily family = ir::op_info(*op).family;
        if (family != ir::OpFamily::Source && family != ir::OpFamily::Layout && family != ir::OpFamily::Control &&
            family != ir::OpFamily::Loss) {
          return name;
        }
      }
    }
    fields_.fail(path, "is " + json_excerpt(value) + ", no fused class: an IR op that computes a value and `_quant` "
                 "(contract_quant, gelu_tanh_quant, softmax_quant, add_quant, …)", "E1707");
  }

 private:
  JsonFields fields_;
};

void read_accumulator(const Reader& r, const json& root, Contract& c) {
  const JsonFields& f = r.fields();
  const json& accumulator = f.object(root, "accumulator", "");
  r.only(accumulator, {"bits", "overflow"}, "accumulator");
  const json& bits = f.field(accumulator, "bits", "accumulator");
  if (!bits.is_number_integer() || bits.get<int64_t>() < 1 || bits.get<int64_t>() > 64) {
    f.fail("accumulator.bits", "is " + json_excerpt(bits) + ", not a whole number of bits from 1 to 64", "E1705");
  }
  c.accumulator_bits = static_cast<int>(bits.get<int64_t>());
  c.overflow = static_cast<Overflow>(r.choice(f.field(accumulator, "overflow", "accumulator"), {"wrap", "saturate"},
                                              "accumulator.overflow", "overflow"));
}

void read_overrides(const Reader& r, const json& root, Contract& c) {
  const JsonFields& f = r.fields();
  if (root.contains("products")) {
    for (const auto& item : f.object(root, "products", "").items()) {
      c.products[item.key()] = r.optional_scheme(item.value(), "products." + item.key());
    }
  }
  if (root.contains("caches")) {
    for (const auto& item : f.object(root, "caches", "").items()) {
      c.caches[item.key()] = r.keep(item.value(), "caches." + item.key());
    }
  }
  if (root.contains("attentions")) {
    for (const auto& item : f.object(root, "attentions", "").items()) {
      const std::string where = "attentions." + item.key();
      c.attentions[item.key()] =
          item.value().is_null() ? std::nullopt : std::optional(r.attention(f.object(root["attentions"], item.key(), "attentions"), where));
    }
  }
}

json scheme_json(const Scheme& s) {
  json j;
  if (s.block.kind == Block::Kind::fixed) j["block"] = s.block.count;
  else j["block"] = s.block.kind == Block::Kind::row ? "row" : "format";
  const char* scales[] = {"absmax", "pow2", "unsigned"};
  j["scale"] = scales[static_cast<int>(s.scale.kind)];
  if (s.scale.kind == Scale::Kind::pow2) j["significand_bits"] = s.scale.significand_bits;
  j["words"] = words_name(s.words);
  return j;
}

json taken_json(const Taken& t) {
  if (t.float_format) return {{"float", float_format_name(*t.float_format)}};
  return {{"scheme", scheme_json(*t.scheme)}};
}

json attention_json(const std::optional<AttentionNumerics>& a) {
  if (!a) return nullptr;
  return {{"queries", taken_json(a->queries)}, {"keys", taken_json(a->keys)}, {"values", taken_json(a->values)},
          {"weights", taken_json(a->weights)}};
}

}  // namespace

Contract parse_contract(const json& root, const std::string& origin) {
  Reader r(origin);
  const JsonFields& f = r.fields();
  f.check_format(root);
  r.only(root, {"format", "chip", "activation", "products", "cache", "caches", "memory", "attention", "attentions", "fused",
                "fused_bound", "accumulator", "solve"}, "");  // solve: presk solve --contract's record (explain reads it)
  Contract c;
  c.chip = f.text(root, "chip", "");
  c.activation = r.optional_scheme(f.field(root, "activation", ""), "activation");
  if (root.contains("cache")) c.cache = r.keep(root["cache"], "cache");
  if (root.contains("memory")) c.memory = r.keep(root["memory"], "memory");
  if (root.contains("attention") && !root["attention"].is_null()) {
    c.attention = r.attention(f.object(root, "attention", ""), "attention");
  }
  if (root.contains("fused")) {
    const json& fused = f.array(root, "fused", "");
    for (size_t i = 0; i < fused.size(); ++i) c.fused.push_back(r.fused_class(fused[i], "fused[" + std::to_string(i) + "]"));
  }
  if (root.contains("fused_bound")) c.fused_bound = r.bound(root["fused_bound"], "fused_bound");
  read_accumulator(r, root, c);
  read_overrides(r, root, c);
  return c;
}

Contract parse_contract_text(std::string_view text, const std::string& origin) {
  return parse_contract(parse_user_json(text, {origin, "E1700", "a contract is a JSON object (docs/chip.md)"}), origin);
}

Contract read_contract_file(const std::string& path) {
  return parse_contract_text(read_input_file(path, {"contract file", "E1700", "check the path after --contract", kJsonFileLimit}),
                             path);
}

json contract_to_json(const Contract& c) {
  json j = {{"format", 1}, {"chip", c.chip}};
  j["activation"] = c.activation ? scheme_json(*c.activation) : json(nullptr);
  if (!c.products.empty()) {
    j["products"] = json::object();
    for (const auto& [site, scheme] : c.products) j["products"][site] = scheme ? scheme_json(*scheme) : json(nullptr);
  }
  j["cache"] = keep_name(c.cache);
  if (!c.caches.empty()) {
    j["caches"] = json::object();
    for (const auto& [site, keep] : c.caches) j["caches"][site] = keep_name(keep);
  }
  j["memory"] = keep_name(c.memory);
  j["attention"] = attention_json(c.attention);
  if (!c.attentions.empty()) {
    j["attentions"] = json::object();
    for (const auto& [site, forms] : c.attentions) j["attentions"][site] = attention_json(forms);
  }
  j["fused"] = c.fused;
  if (c.fused_bound.is_exact()) j["fused_bound"] = "exact";
  else j["fused_bound"] = {{"of_block", c.fused_bound.of_block}, {"of_value", c.fused_bound.of_value}, {"floor", c.fused_bound.floor}};
  j["accumulator"] = {{"bits", c.accumulator_bits}, {"overflow", c.overflow == Overflow::wrap ? "wrap" : "saturate"}};
  return j;
}

}  // namespace presk::numerics
