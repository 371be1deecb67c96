// Reading a chip's time profile (chip_profile.h, docs/chip.md).
#include "numerics/chip_profile.h"

#include <set>

#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/json_fields.h"
#include "support/json_reader.h"

namespace presk::numerics {
namespace {

using nlohmann::json;

constexpr const char* kHint =
    "see docs/chip.md, \"A chip's profile\"; examples/chip_profiles/ has an example";
const std::set<std::string> kFields = {"format",
                                       "chip",
                                       "source",
                                       "int8_mac_seconds",
                                       "float_mac_seconds",
                                       "quantize_seconds",
                                       "bytes_per_second"};

// E1735 for presk bench --calibrate's profile (this machine's float kernels: it has rooflines),
// E1733 for a field no chip profile has (a misspelling is never ignored).
void only_chip_fields(const JsonFields& fields, const json& root) {
  if (root.contains("rooflines")) {
    fields.fail("rooflines",
                "is a field of presk bench --calibrate's profile, which times this machine's float "
                "kernels; "
                "a contract's solve is priced by a chip's profile (seconds per int8 and float "
                "multiply-accumulate, per value quantized, and bytes per second)",
                "E1735");
  }
  for (const auto& item : root.items()) {
    if (kFields.count(item.key())) continue;
    std::string list;
    for (const std::string& k : kFields) list += (list.empty() ? "" : ", ") + k;
    fields.fail(item.key(), "is no field of a chip profile (its fields: " + list + ")", "E1733");
  }
}

// A number of the profile: E1731 when missing or no number, E1732 unless finite and above 0.
double positive(const JsonFields& fields, const json& root, const char* name) {
  fields.number(root, name, "");
  return fields.non_negative(root, name, "", true, "E1732");
}

}  // namespace

ChipProfile parse_chip_profile(const json& root, const std::string& origin) {
  const JsonFields f(origin, JsonFileKind{"chip profile", "E1731", kHint, 1, "E1730"});
  if (!root.is_object()) f.fail("", "is not a JSON object: " + json_excerpt(root), "E1729");
  f.check_format(root);
  only_chip_fields(f, root);
  ChipProfile p;
  p.chip = f.text(root, "chip", "");
  p.source = f.text(root, "source", "");
  if (p.source != "example" && p.source != "measured") {
    f.fail("source",
           "is " + json_excerpt(root["source"]) +
               ", neither \"example\" (illustrative numbers) nor "
               "\"measured\" (timed on the chip)",
           "E1734");
  }
  p.int8_mac = positive(f, root, "int8_mac_seconds");
  p.float_mac = positive(f, root, "float_mac_seconds");
  p.quantize = positive(f, root, "quantize_seconds");
  p.bytes_per_second = positive(f, root, "bytes_per_second");
  return p;
}

ChipProfile read_chip_profile(const std::string& path) {
  const std::string text = read_input_file(
      path, {"chip profile", "E1729", "check the path after --profile", kJsonFileLimit});
  return parse_chip_profile(
      parse_user_json(text, {path, "E1729", "a chip profile is a JSON object (docs/chip.md)"}),
      path);
}

}  // namespace presk::numerics
