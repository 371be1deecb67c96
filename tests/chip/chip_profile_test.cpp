// A chip's time profile (docs/chip.md, "A chip's profile"): the example reads and says it is an
// example, and every bad field is a coded error that names it (E1729–E1735).
#include "numerics/chip_profile.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error_code.h"

namespace presk::numerics {
namespace chip_profile_test {

using presk::testing::error_code;

nlohmann::json good() {
  return nlohmann::json::parse(
      R"({"format": 1, "chip": "test", "source": "measured", "int8_mac_seconds": 1e-14,
    "float_mac_seconds": 1e-13, "quantize_seconds": 1e-11, "bytes_per_second": 1e11})");
}

std::string code_of(const nlohmann::json& json) {
  return error_code([&] { parse_chip_profile(json, "profile.json"); });
}

std::string message_of(const nlohmann::json& json) {
  try {
    parse_chip_profile(json, "profile.json");
  } catch (const UserError& error) {
    return error.diagnostics().front().message;
  }
  return "";
}

TEST(ChipProfile, TheExampleReadsAndSaysItIsAnExample) {
  const ChipProfile p =
      read_chip_profile(std::string(PRESK_SOURCE_DIR) + "/examples/chip_profiles/example_npu.json");
  EXPECT_EQ(p.source, "example");
  EXPECT_NE(p.chip.find("NOT a measurement"), std::string::npos) << p.chip;
  EXPECT_GT(p.float_mac, p.int8_mac);
  const ChipProfile q = parse_chip_profile(good(), "profile.json");
  EXPECT_EQ(q.int8_mac, 1e-14);
  EXPECT_EQ(q.float_mac, 1e-13);
  EXPECT_EQ(q.quantize, 1e-11);
  EXPECT_EQ(q.bytes_per_second, 1e11);
}

TEST(ChipProfile, BadProfilesAreCodedErrors) {
  EXPECT_EQ(error_code([] { read_chip_profile("/no/such/profile.json"); }), "E1729");
  EXPECT_EQ(code_of(nlohmann::json::array()), "E1729");
  nlohmann::json j = good();
  j["format"] = 2;
  EXPECT_EQ(code_of(j), "E1730");
  for (const char* field : {"chip", "source", "int8_mac_seconds", "float_mac_seconds",
                            "quantize_seconds", "bytes_per_second"}) {
    j = good();
    j.erase(field);
    EXPECT_EQ(code_of(j), "E1731") << field;
    EXPECT_NE(message_of(j).find(field), std::string::npos) << message_of(j);
  }
  j = good();
  j["int8_mac_seconds"] = "fast";
  EXPECT_EQ(code_of(j), "E1731");
  for (double bad : {0.0, -1e-12}) {
    for (const char* field :
         {"int8_mac_seconds", "float_mac_seconds", "quantize_seconds", "bytes_per_second"}) {
      j = good();
      j[field] = bad;
      EXPECT_EQ(code_of(j), "E1732") << field << " " << bad;
      EXPECT_NE(message_of(j).find(field), std::string::npos) << message_of(j);
    }
  }
  j = good();
  j["bytes_per_second"] = "inf";  // json_number's infinity: a rate must be finite
  EXPECT_EQ(code_of(j), "E1732");
  j = good();
  j["quantise_seconds"] = 1e-11;  // a misspelt field is never ignored
  EXPECT_EQ(code_of(j), "E1733");
  j = good();
  j["source"] = "guessed";
  EXPECT_EQ(code_of(j), "E1734");
  j = good();
  j["rooflines"] = nlohmann::json::object();  // presk bench --calibrate's profile of this machine
  EXPECT_EQ(code_of(j), "E1735");
}

}  // namespace chip_profile_test
}  // namespace presk::numerics
