// The contract file (docs/chip.md): the examples read, round-trip, and every bad field is a
// coded error that names it.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/error_code.h"
#include "numerics/contract_json.h"

namespace presk::numerics {
namespace {

namespace fs = std::filesystem;
using presk::testing::error_code;

nlohmann::json base() {
  return nlohmann::json::parse(R"({
    "format": 1, "chip": "test",
    "activation": {"block": "row", "scale": "absmax", "words": "one"},
    "accumulator": {"bits": 32, "overflow": "wrap"}})");
}

std::string code_of(const nlohmann::json& json) {
  return error_code([&] { parse_contract(json, "test.json"); });
}

std::string message_of(const nlohmann::json& json) {
  try {
    parse_contract(json, "test.json");
  } catch (const UserError& error) {
    return error.diagnostics().front().message;
  }
  return "";
}

TEST(Contract, EveryExampleReadsAndRoundTrips) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(PRESK_SOURCE_DIR) / "examples" / "contracts")) {
    const Contract contract = read_contract_file(entry.path().string());
    EXPECT_EQ(parse_contract(contract_to_json(contract), "again"), contract) << entry.path();
    ++count;
  }
  EXPECT_EQ(count, 6);
}

TEST(Contract, ExamplesSayWhatTheirNamesSay) {
  const std::string dir = std::string(PRESK_SOURCE_DIR) + "/examples/contracts/";
  const Contract npu = read_contract_file(dir + "npu_w8a8.json");
  ASSERT_TRUE(npu.activation);
  EXPECT_EQ(npu.activation->block, Block::of_row());
  EXPECT_EQ(npu.activation->scale.kind, Scale::Kind::absmax);
  EXPECT_EQ(npu.accumulator_bits, 32);
  const Contract narrow = read_contract_file(dir + "npu_w8a8_acc16.json");
  EXPECT_EQ(narrow.accumulator_bits, 16);
  EXPECT_EQ(narrow.overflow, Overflow::saturate);
  EXPECT_EQ(read_contract_file(dir + "a16_two_word.json").activation->words, Words::two_rest);
  EXPECT_EQ(read_contract_file(dir + "cpu_q8_block32.json").activation->block, Block::fixed_count(32));
  EXPECT_EQ(read_contract_file(dir + "kv_int8.json").cache.kind, Keep::Kind::int8_rows);
  const Contract rotated = read_contract_file(dir + "kv_int8_rotated.json");
  EXPECT_EQ(rotated.cache.kind, Keep::Kind::int8_rows_rotated);
  EXPECT_FALSE(rotated.activation);
  ASSERT_TRUE(rotated.attention);
  EXPECT_EQ(rotated.attention->weights.scheme->scale.kind, Scale::Kind::unsigned_pow2);
  EXPECT_FALSE(rotated.fused_bound.is_exact());
}

TEST(Contract, DefaultsAndOverrides) {
  nlohmann::json json = base();
  json["products"] = {{"Block.apply/%3", nullptr}, {"Block.apply/%5", {{"block", 32}, {"scale", "pow2"}, {"significand_bits", 1}, {"words", "three"}}}};
  json["caches"] = {{"SelfAttention.decode/%3", "f16"}};
  const Contract c = parse_contract(json, "test.json");
  EXPECT_FALSE(c.scheme_of("Block.apply/%3"));
  EXPECT_EQ(scheme_text(*c.scheme_of("Block.apply/%5")), "32/pow2(1)/three");
  EXPECT_EQ(scheme_text(*c.scheme_of("Block.apply/%7")), "row/absmax/one");
  EXPECT_EQ(c.keep_of("SelfAttention.decode/%3"), (Keep{Keep::Kind::float_format, FloatFormat::f16}));
  EXPECT_EQ(c.keep_of("SelfAttention.decode/%4").kind, Keep::Kind::as_computed);
  EXPECT_TRUE(c.fused_bound.is_exact());
  EXPECT_EQ(parse_contract(contract_to_json(c), "again"), c);
  // Each attention's own forms, or none (on its values as kept), over the contract's.
  json["attention"] = {{"queries", {{"float", "f32"}}}, {"keys", {{"float", "bf16"}}}, {"values", {{"float", "bf16"}}},
                       {"weights", {{"float", "f32"}}}};
  json["attentions"] = {{"SelfAttention.decode/%8", nullptr}, {"SelfAttention.apply/%7", json["attention"]}};
  json["attentions"]["SelfAttention.apply/%7"]["keys"] = {{"scheme", json["activation"]}};
  const Contract a = parse_contract(json, "test.json");
  EXPECT_FALSE(a.attention_of("SelfAttention.decode/%8"));
  EXPECT_TRUE(a.attention_of("SelfAttention.apply/%7")->keys.scheme);
  EXPECT_EQ(a.attention_of("Other/%1"), a.attention);
  EXPECT_EQ(parse_contract(contract_to_json(a), "again"), a);
  json["attentions"]["SelfAttention.apply/%7"]["keys"] = {{"float", "f8"}};
  EXPECT_EQ(code_of(json), "E1703");
  EXPECT_NE(message_of(json).find("attentions.SelfAttention.apply/%7.keys.float"), std::string::npos) << message_of(json);
}

TEST(Contract, BadFilesAreCodedErrors) {
  EXPECT_EQ(error_code([] { parse_contract_text("{not json", "x.json"); }), "E1700");
  EXPECT_EQ(error_code([] { read_contract_file("/no/such/contract.json"); }), "E1700");
  nlohmann::json j = base();
  j["format"] = 2;
  EXPECT_EQ(code_of(j), "E1702");
  j = base();
  j.erase("chip");
  EXPECT_EQ(code_of(j), "E1701");
  j = base();
  j["activation"]["scale"] = "absmin";  // an unknown scale
  EXPECT_EQ(code_of(j), "E1703");
  EXPECT_NE(message_of(j).find("activation.scale"), std::string::npos) << message_of(j);
  j = base();
  j["activation"]["words"] = "four";  // an unknown scheme
  EXPECT_EQ(code_of(j), "E1703");
  j = base();
  j["cache"] = "int4_rows";
  EXPECT_EQ(code_of(j), "E1703");
  j = base();
  j["activation"]["block"] = 0;
  EXPECT_EQ(code_of(j), "E1704");
  j = base();
  j["activation"]["scale"] = "pow2";
  j["activation"]["significand_bits"] = 25;
  EXPECT_EQ(code_of(j), "E1704");
  j["activation"].erase("significand_bits");
  EXPECT_EQ(code_of(j), "E1701");
  for (int bits : {0, 65, -1}) {
    j = base();
    j["accumulator"]["bits"] = bits;
    EXPECT_EQ(code_of(j), "E1705") << bits;
  }
  j = base();
  j["fused_bound"] = {{"of_block", -1}, {"of_value", 0}, {"floor", 0}};
  EXPECT_EQ(code_of(j), "E1706");
  j = base();
  j["fused"] = {"matmul_quant"};
  EXPECT_EQ(code_of(j), "E1707");
  j["fused"] = {"reshape_quant"};  // a layout op computes nothing to fuse
  EXPECT_EQ(code_of(j), "E1707");
  j = base();
  j["activation"]["blok"] = 32;  // a misspelt field is never ignored
  EXPECT_EQ(code_of(j), "E1708");
  j = base();
  j["activation"]["significand_bits"] = 3;  // only a pow2 scale has significand bits
  EXPECT_EQ(code_of(j), "E1709");
  j = base();
  j["attention"] = {{"queries", {{"float", "f32"}, {"scheme", base()["activation"]}}}};
  EXPECT_EQ(code_of(j), "E1709");
}

TEST(Contract, BlockLengths) {
  EXPECT_EQ(block_length(Block::of_row(), 64, 0), 64);
  EXPECT_EQ(block_length(Block::fixed_count(32), 64, 0), 32);
  EXPECT_EQ(block_length(Block::fixed_count(24), 64, 0), 0);  // does not divide the row
  EXPECT_EQ(block_length(Block::of_format(), 64, 32), 32);    // int4/g32 weights
  EXPECT_EQ(block_length(Block::of_format(), 64, 0), 64);     // per-channel weights: the row
}

TEST(Contract, BoundAdmits) {
  EXPECT_TRUE(Bound::EXACT.admits(1.0, 1.0, 5.0));
  EXPECT_FALSE(Bound::EXACT.admits(1.0, std::nextafter(1.0, 2.0), 5.0));
  const Bound b{0.01, 0.001, 1e-6};
  EXPECT_TRUE(b.admits(1.0 + 0.05 + 0.001, 1.0, 5.0));
  EXPECT_FALSE(b.admits(1.0 + 0.05 + 0.0011 + 1e-6, 1.0, 5.0));
}

}  // namespace
}  // namespace presk::numerics
