// The chip commands as a user runs them: `presk dump --stage chip` and
// `presk check --contract C --measure` on the tiny GPT (docs/chip.md).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/run_command.h"
#include "exec/reference/parameters.h"
#include "lang/frontend.h"
#include "support/safetensors.h"
#include "support/tensor.h"

namespace presk {
namespace {

namespace fs = std::filesystem;
using presk::testing::presk;
using presk::testing::run_command;

std::string source(const std::string& path) { return "'" + std::string(PRESK_SOURCE_DIR) + "/" + path + "'"; }

TEST(ChipCli, DumpPlacesTheQuantizes) {
  const auto text = run_command(presk() + " dump --stage chip " + source("examples/gpt_tiny.psk") +
                                " --dim T=8 --contract " + source("examples/contracts/npu_w8a8.json"));
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find("quantize GPT.apply/%5 : R[8, 8]  row/absmax/one, blocks of 8  after_producer"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("read by Linear.apply/%1"), std::string::npos) << text.output;
  const auto json = run_command(presk() + " dump --stage chip --json " + source("examples/gpt_tiny.psk") +
                                " --dim T=8 --contract " + source("examples/contracts/npu_w8a8.json"), false);
  ASSERT_EQ(json.status, 0) << json.output;
  const nlohmann::json sites = nlohmann::json::parse(json.output);
  ASSERT_EQ(sites.size(), 4u);
  EXPECT_EQ(sites[1]["block"], 32) << json.output;  // the feed-forward's hidden rows
  // The tiny GPT's rows of 8 values: blocks of 32 do not divide them.
  const auto blocks = run_command(presk() + " dump --stage chip " + source("examples/gpt_tiny.psk") +
                                  " --dim T=8 --contract " + source("examples/contracts/cpu_q8_block32.json"));
  EXPECT_EQ(blocks.status, 1);
  EXPECT_NE(blocks.output.find("E1711"), std::string::npos) << blocks.output;
}

// A contract's attention forms: each attention listed with its forms, and the chip's program
// taking its weights times the value rows' scales and the values' codes.
TEST(ChipCli, DumpShowsTheAttentionsForms) {
  const auto text = run_command(presk() + " dump --stage chip " + source("examples/gpt_tiny.psk") +
                                " --dim T=8 --contract " + source("examples/contracts/kv_int8_rotated.json"));
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find("attention SelfAttention.apply/%7 · SelfAttention.apply/%15  queries f32, keys row/absmax/one"),
            std::string::npos) << text.output;
  EXPECT_NE(text.output.find("spec=\"weights|unsigned/one|absmax/one|axy,ayz\""), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("spec=\"codes/absmax/one\""), std::string::npos) << text.output;
}

TEST(ChipCli, UsageErrors) {
  auto r = run_command(presk() + " dump --stage chip " + source("examples/gpt_tiny.psk") + " --dim T=8");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("E1720"), std::string::npos) << r.output;
  r = run_command(presk() + " dump --stage ir " + source("examples/gpt_tiny.psk") + " --dim T=8 --contract " +
                  source("examples/contracts/npu_w8a8.json"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("E1720"), std::string::npos) << r.output;
  r = run_command(presk() + " dump --stage chip " + source("examples/gpt_tiny.psk") + " --dim T=8 --contract /no/such.json");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("E1700"), std::string::npos) << r.output;
}

// A file's bytes as text.
std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class ChipMeasure : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char pattern[] = "/tmp/presk-chip-XXXXXX";
    dir_ = mkdtemp(pattern);
    write_weights("examples/gpt_tiny.psk", "T=8", dir_ + "/synth");
    const auto calibrate = run_command(presk() + " calibrate --precision " + source("examples/gpt_tiny.psk") +
                                       " --entry logits --dim T=8 --samples 2 --bits 128 --weights " + weights() +
                                       " --out " + dir_ + "/env.json");
    ASSERT_EQ(calibrate.status, 0) << calibrate.output;
    std::ofstream(dir_ + "/r8.json") << R"({"format": 1, "default": "f32", "quant": {
      "blocks.ff.up.w": {"bits": 8, "over": -2}, "blocks.ff.down.w": {"bits": 8, "over": -2}}})";
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  // An envelope of the corpus GPT's decode entry (T = 8, 2 samples) on synthetic weights in
  // dir_/<name>, written to dir_/<name>.json; its path.
  static std::string decode_envelope(const std::string& name) {
    write_weights("examples/gpt.psk", "T=8", dir_ + "/" + name);
    const auto calibrate = run_command(presk() + " calibrate --precision " + source("examples/gpt.psk") +
                                       " --entry decode --dim T=8 --samples 2 --bits 128 --quiet --weights " + dir_ +
                                       "/" + name + " --out " + dir_ + "/" + name + ".json");
    EXPECT_EQ(calibrate.status, 0) << calibrate.output;
    return dir_ + "/" + name + ".json";
  }

  // gpt_tiny's head starts at zeros, which makes every logit 0 whatever the activations: the
  // tests read a synthetic checkpoint whose head is small values that are not zero.
  static std::string weights() { return dir_ + "/synth"; }  // a checkpoint folder (docs/checkpoints.md)
  static void write_weights(const std::string& program, const std::string& dim, const std::string& out) {
    const auto synth = run_command(presk() + " checkpoint synth " + source(program) + " --dim " + dim +
                                   " --dtype f32 --shard-size 0 --quiet --out " + out);
    ASSERT_EQ(synth.status, 0) << synth.output;
    const std::string path = out + "/model.safetensors";
    const SafetensorsFile file = SafetensorsFile::open(path);
    std::vector<Tensor> tensors;
    for (const SafetensorsEntry& entry : file.entries()) tensors.push_back(file.read(entry));
    std::vector<NamedTensor> named;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const std::string& name = file.entries()[i].name;
      if (name == "head") {
        for (uint64_t k = 0; k < tensors[i].element_count(); ++k) tensors[i].set(k, 0.3 * std::sin(1.0 + 0.7 * k));
      }
      named.push_back({name, tensors[i]});
    }
    write_safetensors(path + ".new", named);
    fs::rename(path + ".new", path);
  }

  static std::string check(const std::string& contract, const std::string& extra = "") {
    const auto r = run_command(presk() + " check --json --precision " + dir_ + "/env.json " + source("examples/gpt_tiny.psk") +
                                   " --realize @" + dir_ + "/r8.json --measure --contract " +
                                   source("examples/contracts/" + contract) + extra,
                               false);
    EXPECT_EQ(r.status, 0) << r.output;
    return r.output;
  }

  static nlohmann::json product(const nlohmann::json& report, const std::string& site) {
    for (const nlohmann::json& p : report["products"]) {
      if (p["site"] == site) return p;
    }
    ADD_FAILURE() << site;
    return {};
  }

  static std::string dir_;
};
std::string ChipMeasure::dir_;

TEST_F(ChipMeasure, SixteenBitsOverflowWhereThirtyTwoHold) {
  const nlohmann::json wide = nlohmann::json::parse(check("npu_w8a8.json"));
  const nlohmann::json narrow = nlohmann::json::parse(check("npu_w8a8_acc16.json"));
  const nlohmann::json up_wide = product(wide, "FeedForward.apply/%1"), up_narrow = product(narrow, "FeedForward.apply/%1");
  // The representation is the contract's scheme, whatever the accumulator.
  EXPECT_EQ(up_wide["representation"], up_narrow["representation"]);
  EXPECT_GT(up_wide["representation"]["relative"].get<double>(), 1e-4);  // int8 activations and weights
  // 32 bits hold every partial sum: the chip's sums are exact, only the binary64 epilogue rounds.
  EXPECT_EQ(up_wide["accumulator"]["overflowed"], 0);
  EXPECT_LE(up_wide["accumulator"]["bits_needed"].get<int>(), 32);
  EXPECT_LT(up_wide["arithmetic"]["relative"].get<double>(), 1e-12);
  // 8 terms of 127·127 need 18 bits: the 16-bit chip saturates, and its result is wrong.
  EXPECT_EQ(up_narrow["accumulator"]["bits_needed"], 18);
  EXPECT_GT(up_narrow["accumulator"]["overflowed"].get<int>(), 0);
  EXPECT_GT(up_narrow["arithmetic"]["relative"].get<double>(), 1e-3);
  // The entry's native run sums each product of codes by int8 weights as its chip does (docs/chip.md,
  // "The chip's products"): the 16-bit chip's saturated sums move the logits far past the 32-bit one's.
  const double wide_entry = wide["entry_gap"]["arithmetic"]["relative"];
  const double narrow_entry = narrow["entry_gap"]["arithmetic"]["relative"];
  EXPECT_GT(narrow_entry, 1e-3) << narrow["entry_gap"];
  EXPECT_GT(narrow_entry, 100 * wide_entry) << wide["entry_gap"];
  // A matrix the realization keeps as floats: representation only, and why.
  const nlohmann::json linear = product(wide, "Linear.apply/%1");
  EXPECT_TRUE(linear["arithmetic"].is_null());
  EXPECT_NE(linear["why_not"].get<std::string>().find("not stored as integers"), std::string::npos);
}

TEST_F(ChipMeasure, MoreWordsRepresentBetterAndBitsDoNotDependOnThreads) {
  const std::string one = check("npu_w8a8.json", " --threads 1");
  EXPECT_EQ(one, check("npu_w8a8.json", " --threads 2"));
  const nlohmann::json two = nlohmann::json::parse(check("a16_two_word.json"));
  const double one_word = product(nlohmann::json::parse(one), "Linear.apply/%1")["representation"]["relative"];
  const double two_words = product(two, "Linear.apply/%1")["representation"]["relative"];
  EXPECT_LT(two_words, one_word / 50) << "float weights: the activation's representation alone";
}

TEST_F(ChipMeasure, CachesKeptAsInt8Rows) {
  const std::string envelope = dir_ + "/decode.json";
  const auto calibrate = run_command(presk() + " calibrate --precision " + source("examples/gpt.psk") +
                                     " --entry decode --dim T=16 --samples 1 --bits 128 --out " + envelope);
  ASSERT_EQ(calibrate.status, 0) << calibrate.output;
  for (const std::string contract : {"kv_int8.json", "kv_int8_rotated.json"}) {
    const auto r = run_command(presk() + " check --json --precision " + envelope + " " + source("examples/gpt.psk") +
                                   " --realize f32 --measure --contract " + source("examples/contracts/" + contract),
                               false);
    ASSERT_EQ(r.status, 0) << r.output;
    const nlohmann::json report = nlohmann::json::parse(r.output);
    EXPECT_TRUE(report["products"].empty());
    ASSERT_EQ(report["caches"].size(), 2u) << r.output;  // the keys' and the values' cache_write
    for (const nlohmann::json& cache : report["caches"]) {
      EXPECT_EQ(cache["rows"], 4);  // 2 layers × 2 heads, one new row each
      const double relative = cache["representation"]["relative"];
      // int8 codes of a row under its own scale: within half a code, 1/254 of the row's largest.
      EXPECT_GT(relative, 0) << contract;
      EXPECT_LT(relative, contract == "kv_int8.json" ? 1.0 / 254 : 0.05) << contract;
    }
    // Each attention's forms and its integer sums' accumulator: the rotated contract's weights are
    // u8 codes against the values' int8 codes over the 16 keys, |Σ| ≤ 255·127·16 = 518160 < 2^19:
    // 19 bits and a sign, which 32 hold; kv_int8's weights (and both contracts' queries) are f32,
    // so those products run on the forms' values and have no integer sums to hold.
    ASSERT_FALSE(report["attentions"].empty()) << r.output;
    for (const nlohmann::json& attention : report["attentions"]) {
      EXPECT_TRUE(attention["scores"].is_null()) << attention;
      if (contract == "kv_int8.json") {
        EXPECT_TRUE(attention["weighted"].is_null()) << attention;
        continue;
      }
      EXPECT_EQ(attention["weighted"]["bits_needed"], 20) << attention;
      EXPECT_EQ(attention["weighted"]["holds"], true) << attention;
    }
  }
}

TEST_F(ChipMeasure, TheEntrysGapSplitAsQuantizeSplitsIt) {
  const nlohmann::json report = nlohmann::json::parse(check("npu_w8a8.json"));
  const nlohmann::json& entry = report["entry_gap"];
  const double representation = entry["representation"]["relative"], arithmetic = entry["arithmetic"]["relative"];
  const double total = entry["total"]["relative"];
  // int8 activations and weights move the logits; the native f32 run of the same program lies
  // much nearer its own exact meaning than that meaning lies to the plain program's.
  EXPECT_GT(representation, 1e-4) << entry;
  EXPECT_LT(arithmetic, representation / 10) << entry;
  EXPECT_LE(total, representation + arithmetic) << entry;  // a triangle
  EXPECT_GE(total, representation - arithmetic) << entry;
  // Two words represent the activations 128 times finer: the entry's representation gap shrinks.
  const nlohmann::json two = nlohmann::json::parse(check("a16_two_word.json"))["entry_gap"];
  EXPECT_LT(two["representation"]["relative"].get<double>(), representation) << two;
}

TEST_F(ChipMeasure, SolvedContractInsideItsBudgetInAndOutOfSampleAtAnyThreadCount) {
  // Six windows of T + 1 tokens: two calibrated, two held out. The weights stay f32: the budget is
  // the activations' alone (int8 weights would move the logits whatever the activations).
  Tensor tokens(ElementType::i32, {6, 9});
  for (uint64_t i = 0; i < 54; ++i) tokens.set_integer(i, static_cast<int64_t>((i * 7 + i / 9) % 11));
  write_safetensors(dir_ + "/data.safetensors", {{"tokens", tokens}});
  const auto calibrate = run_command(presk() + " calibrate --precision " + source("examples/gpt_tiny.psk") +
                                     " --entry logits --dim T=8 --data " + dir_ + "/data.safetensors --samples 2 "
                                     "--bits 128 --quiet --weights " + weights() + " --out " + dir_ + "/data-env.json");
  ASSERT_EQ(calibrate.status, 0) << calibrate.output;
  auto solve = [&](const std::string& out, int threads) {
    return run_command(presk() + " solve " + source("examples/gpt_tiny.psk") + " --precision " + dir_ +
                       "/data-env.json --contract " + source("examples/contracts/npu_w8a8.json") +
                       " --realize f32 --budget 3e-3 --heldout 2 --quiet --threads " + std::to_string(threads) +
                       " --out " + dir_ + "/" + out);
  };
  const auto one = solve("solved1.json", 1);
  ASSERT_EQ(one.status, 0) << one.output;
  ASSERT_EQ(solve("solved2.json", 2).status, 0);
  EXPECT_EQ(read(dir_ + "/solved1.json"), read(dir_ + "/solved2.json"));
  const nlohmann::json solved = nlohmann::json::parse(read(dir_ + "/solved1.json"));
  const nlohmann::json& record = solved["solve"];
  EXPECT_TRUE(record["gap"]["in_sample"]["inside"].get<bool>()) << record["gap"];
  ASSERT_FALSE(record["gap"]["held_out"].is_null());
  EXPECT_TRUE(record["gap"]["held_out"]["inside"].get<bool>()) << record["gap"];
  // Some product reads its activation quantized, and every product the contract names is decided.
  int quantized = 0;
  for (const auto& [site, scheme] : solved["products"].items()) quantized += !scheme.is_null();
  EXPECT_GT(quantized, 0) << solved["products"];
  EXPECT_EQ(solved["products"].size(), record["values"].size());
  // The solved contract is a contract: check --measure reads it, and its entry's gap is the solve's.
  const auto checked = run_command(presk() + " check --json --precision " + dir_ + "/data-env.json " +
                                       source("examples/gpt_tiny.psk") + " --realize f32 --measure --contract " + dir_ +
                                       "/solved1.json", false);
  ASSERT_EQ(checked.status, 0) << checked.output;
  EXPECT_EQ(nlohmann::json::parse(checked.output)["entry_gap"]["total"]["absolute"], record["gap"]["in_sample"]["absolute"]);
  // explain gives each decision its reason.
  const auto explained = run_command(presk() + " explain " + dir_ + "/solved1.json");
  ASSERT_EQ(explained.status, 0) << explained.output;
  EXPECT_NE(explained.output.find("Linear.apply/%1"), std::string::npos) << explained.output;
  // Options the chip's solve does not take are coded.
  const auto refused = run_command(presk() + " solve " + source("examples/gpt_tiny.psk") + " --precision " + dir_ +
                                   "/data-env.json --contract " + source("examples/contracts/npu_w8a8.json") +
                                   " --budget 1e-2 --exhaustive --out " + dir_ + "/x.json");
  EXPECT_EQ(refused.status, 2) << refused.output;
  EXPECT_NE(refused.output.find("E1724"), std::string::npos) << refused.output;
}

// The chip's solve on the corpus GPT's decode entry: which caches are kept narrow (and which
// products read their activation quantized), accepted by measurement on decode runs.
TEST_F(ChipMeasure, CachesSolvedOnDecodeRunsInsideTheBudgetAtAnyThreadCount) {
  decode_envelope("gpt-decode");
  ASSERT_FALSE(HasFailure());
  std::ofstream(dir_ + "/both.json") << R"({"format": 1, "chip": "W8A8 and int8 KV rows, rotated",
    "activation": {"block": "row", "scale": "absmax", "words": "one"}, "cache": "int8_rows_rotated",
    "accumulator": {"bits": 32, "overflow": "wrap"}})";
  // The caches alone: kv_int8.json's attention takes its keys and values as int8 whatever the
  // caches' keep (its forms are the contract's, not the solve's), which no widening undoes.
  const std::string kv_int8 = dir_ + "/kv_int8.json";
  std::ofstream(kv_int8) << R"({"format": 1, "chip": "int8 KV rows, attended as kept", "activation": null,
    "cache": "int8_rows", "accumulator": {"bits": 32, "overflow": "wrap"}})";
  auto solve = [&](const std::string& contract, const std::string& budget, const std::string& out, int threads) {
    return run_command(presk() + " solve " + source("examples/gpt.psk") + " --precision " + dir_ +
                       "/gpt-decode.json --contract " + contract + " --realize f32 --budget " + budget +
                       " --heldout 2 --quiet --json --threads " + std::to_string(threads) + " --out " + dir_ + "/" + out);
  };
  for (const auto& [contract, budget] : {std::pair<std::string, std::string>{kv_int8, "2e-5"},
                                         {dir_ + "/both.json", "1e-3"}}) {
    const auto one = solve(contract, budget, "decode1.json", 1);
    ASSERT_EQ(one.status, 0) << one.output;
    ASSERT_EQ(solve(contract, budget, "decode2.json", 2).status, 0);
    EXPECT_EQ(read(dir_ + "/decode1.json"), read(dir_ + "/decode2.json")) << contract;
    const nlohmann::json solved = nlohmann::json::parse(read(dir_ + "/decode1.json"));
    const nlohmann::json& record = solved["solve"];
    EXPECT_EQ(record["entry"], "decode");
    EXPECT_TRUE(record["gap"]["in_sample"]["inside"].get<bool>()) << record["gap"];
    ASSERT_FALSE(record["gap"]["held_out"].is_null());
    EXPECT_TRUE(record["gap"]["held_out"]["inside"].get<bool>()) << record["gap"];
    // Both caches decided, at least one kept narrower than computed, and each decision's term is
    // the gap measured with that cache alone at its keep: positive where narrowed.
    ASSERT_EQ(solved["caches"].size(), 2u) << solved;
    int narrow = 0;
    for (const auto& [site, keep] : solved["caches"].items()) narrow += keep != "as_computed";
    EXPECT_GT(narrow, 0) << solved["caches"];
    for (const nlohmann::json& v : record["values"]) {
      if (v["op"] != "cache_write") continue;
      EXPECT_EQ(v["final"] == "as_computed", v["term"].get<double>() == 0) << v;
    }
    // The solved contract runs: check --measure reads it.
    const auto checked = run_command(presk() + " check --json --precision " + dir_ + "/gpt-decode.json " +
                                         source("examples/gpt.psk") + " --realize f32 --measure --contract " + dir_ +
                                         "/decode1.json", false);
    EXPECT_EQ(checked.status, 0) << checked.output;
    const auto explained = run_command(presk() + " explain " + dir_ + "/decode1.json");
    ASSERT_EQ(explained.status, 0) << explained.output;
    EXPECT_NE(explained.output.find("SelfAttention.decode/%2 (cache_write)"), std::string::npos) << explained.output;
  }
  // A budget too tight for any int8 row: the int8 keeps are refused, and the gap is still inside.
  const auto tight = solve(kv_int8, "1e-6", "tight.json", 2);
  ASSERT_NE(tight.status, 2) << tight.output;
  const nlohmann::json caches = nlohmann::json::parse(read(dir_ + "/tight.json"))["caches"];
  for (const auto& [site, keep] : caches.items()) EXPECT_NE(keep, "int8_rows") << site;
}

// kv_int8.json on the corpus GPT's decode entry at 1e-3: its attention takes keys and values as
// int8 rows, which no keep of the caches undid, so the solve used to exit 4 (outside even with
// both caches as computed). Now each attention's forms are a decision beside the caches' keeps —
// proposed by its measured term, priced by its operands' bytes, widened a rung at a time — and
// the solved contract is inside its budget in and out of sample, the same bytes at 1 and 2 threads.
TEST_F(ChipMeasure, AttentionFormsSolvedOnDecodeRunsInsideTheBudget) {
  decode_envelope("gpt-kv");
  ASSERT_FALSE(HasFailure());
  for (const std::string contract : {"kv_int8.json", "kv_int8_rotated.json"}) {
    for (int threads : {1, 2}) {
      const auto solved = run_command(presk() + " solve " + source("examples/gpt.psk") + " --precision " + dir_ +
                                      "/gpt-kv.json --contract " + source("examples/contracts/" + contract) +
                                      " --realize f32 --budget 1e-3 --heldout 2 --quiet --threads " +
                                      std::to_string(threads) + " --out " + dir_ + "/kv" + std::to_string(threads) + ".json");
      ASSERT_EQ(solved.status, 0) << contract << solved.output;
    }
    EXPECT_EQ(read(dir_ + "/kv1.json"), read(dir_ + "/kv2.json")) << contract;
    const nlohmann::json solved = nlohmann::json::parse(read(dir_ + "/kv1.json"));
    const nlohmann::json& gap = solved["solve"]["gap"];
    EXPECT_TRUE(gap["in_sample"]["inside"].get<bool>()) << gap;
    ASSERT_FALSE(gap["held_out"].is_null());
    EXPECT_TRUE(gap["held_out"]["inside"].get<bool>()) << gap;
    // The decode step's attention decided (the full-sequence one, which decode runs never reach, not offered).
    ASSERT_TRUE(solved["attentions"].contains("SelfAttention.decode/%8")) << solved;
    EXPECT_FALSE(solved["attentions"].contains("SelfAttention.apply/%7")) << solved;
    int attentions = 0;
    for (const nlohmann::json& v : solved["solve"]["values"]) {
      if (v["op"] != "attention") continue;
      ++attentions;
      EXPECT_EQ(v["final"] == "as_kept", v["term"].get<double>() == 0) << v;
      EXPECT_EQ(v["final"] == "as_kept", solved["attentions"]["SelfAttention.decode/%8"].is_null()) << v;
    }
    EXPECT_EQ(attentions, 1);
    const auto explained = run_command(presk() + " explain " + dir_ + "/kv1.json");
    ASSERT_EQ(explained.status, 0) << explained.output;
    EXPECT_NE(explained.output.find("site SelfAttention.decode/%8 (attention)"), std::string::npos) << explained.output;
    EXPECT_NE(explained.output.find("the attention at "), std::string::npos) << explained.output;
    // The solved contract runs as solved: check --measure reads its attentions.
    const auto checked = run_command(presk() + " check --json --precision " + dir_ + "/gpt-kv.json " +
                                         source("examples/gpt.psk") + " --realize f32 --measure --contract " + dir_ +
                                         "/kv1.json", false);
    EXPECT_EQ(checked.status, 0) << checked.output;
  }
}

// `solve --contract --profile P`: a chip's time profile prices the decisions instead of bytes. A
// profile whose quantizes are slow (a millisecond a value) makes every narrowing cost more time
// than its bytes save, so the solve keeps the caches as computed and the attention as kept where
// the bytes narrow them; the example profile solves too, its record priced by time and naming the
// profile as an example; and a bad profile is a coded error.
TEST_F(ChipMeasure, AProfileChangesWhatTheBytesDecide) {
  decode_envelope("gpt-priced");
  ASSERT_FALSE(HasFailure());
  std::ofstream(dir_ + "/slow-quantize.json") << R"({"format": 1, "chip": "a chip whose quantizes are slow",
    "source": "example", "int8_mac_seconds": 2e-14, "float_mac_seconds": 1.6e-13, "quantize_seconds": 1e-3,
    "bytes_per_second": 1e11})";
  std::ofstream(dir_ + "/bad-profile.json") << R"({"format": 1, "chip": "bad", "source": "example",
    "int8_mac_seconds": 0, "float_mac_seconds": 1e-13, "quantize_seconds": 1e-11, "bytes_per_second": 1e11})";
  auto solve = [&](const std::string& profile, const std::string& out) {
    return run_command(presk() + " solve " + source("examples/gpt.psk") + " --precision " + dir_ +
                       "/gpt-priced.json --contract " + source("examples/contracts/kv_int8.json") +
                       " --realize f32 --budget 1e-2 --heldout 2 --quiet" + (profile.empty() ? "" : " --profile " + profile) +
                       " --out " + dir_ + "/" + out);
  };
  const auto record = [&](const std::string& name) { return nlohmann::json::parse(read(dir_ + "/" + name)); };
  ASSERT_EQ(solve("", "by-bytes.json").status, 0);
  ASSERT_EQ(solve(dir_ + "/slow-quantize.json", "by-time.json").status, 0);
  const nlohmann::json bytes = record("by-bytes.json"), time = record("by-time.json");
  EXPECT_EQ(bytes["solve"]["priced_by"], "bytes");
  EXPECT_EQ(time["solve"]["priced_by"], "time");
  EXPECT_EQ(bytes["caches"]["SelfAttention.decode/%2"], "int8_rows") << bytes;
  EXPECT_EQ(time["caches"]["SelfAttention.decode/%2"], "as_computed") << time;
  EXPECT_FALSE(bytes["attentions"]["SelfAttention.decode/%8"].is_null()) << bytes;
  EXPECT_TRUE(time["attentions"]["SelfAttention.decode/%8"].is_null()) << time;
  EXPECT_TRUE(time["solve"]["gap"]["in_sample"]["inside"].get<bool>()) << time["solve"]["gap"];
  const auto explained = run_command(presk() + " explain " + dir_ + "/by-time.json");
  EXPECT_NE(explained.output.find("predicted"), std::string::npos) << explained.output;
  // The time model by hand at the widest rungs: a cache of 2 layers × R[2, 8, 32] f32 values moved
  // at 1e11 bytes/s; the attention (kept as is here: its bytes as recorded, its four operands in
  // f32) moved, and its 2 layers × (scores R[2, 1, 8]·32 + weighted sum R[2, 1, 32]·8) float MACs.
  for (const nlohmann::json& v : time["solve"]["values"]) {
    if (v["op"] == "cache_write") {
      EXPECT_DOUBLE_EQ(v["seconds_widest"].get<double>(), 2 * 512 * 4 / 1e11) << v;
    }
    if (v["op"] == "attention") {
      EXPECT_DOUBLE_EQ(v["seconds_widest"].get<double>(), v["bytes"].get<double>() / 1e11 + 2 * (16 * 32 + 64 * 8) * 1.6e-13) << v;
    }
  }
  const std::string example = source("examples/chip_profiles/example_npu.json");
  const auto priced = solve(example, "example.json");
  ASSERT_EQ(priced.status, 0) << priced.output;
  EXPECT_EQ(record("example.json")["solve"]["profile"]["source"], "example");
  EXPECT_GT(record("example.json")["solve"]["predicted"]["widest"].get<double>(), 0);
  const auto bad = solve(dir_ + "/bad-profile.json", "bad.json");
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_NE(bad.output.find("E1732"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("int8_mac_seconds"), std::string::npos) << bad.output;
}

// A contract whose attention takes its operands in their forms (int8 queries, keys and values by
// rows, the weights times the value rows' scales in unsigned bytes), on the corpus GPT's logits:
// `check --measure` sees the forms (the chip's program differs from the same contract without
// them), the same bytes at any thread count; and `solve --contract` decides the products around
// them, its solved contract keeping them and inside its budget in and out of sample.
TEST_F(ChipMeasure, AttentionFormsMeasuredAndSolvedOnTheCorpusGpt) {
  write_weights("examples/gpt.psk", "T=8", dir_ + "/gpt-logits");
  Tensor tokens(ElementType::i32, {4, 9});  // windows of T + 1 tokens: two calibrated, two held out
  for (uint64_t i = 0; i < 36; ++i) tokens.set_integer(i, static_cast<int64_t>((i * 5 + i / 9) % 63));
  write_safetensors(dir_ + "/gpt-data.safetensors", {{"tokens", tokens}});
  const auto calibrate = run_command(presk() + " calibrate --precision " + source("examples/gpt.psk") +
                                     " --entry logits --dim T=8 --data " + dir_ + "/gpt-data.safetensors --samples 2 "
                                     "--bits 128 --quiet --weights " + dir_ + "/gpt-logits --out " + dir_ + "/gpt-env.json");
  ASSERT_EQ(calibrate.status, 0) << calibrate.output;
  const std::string forms = R"("attention": {"queries": {"scheme": {"block": "row", "scale": "absmax", "words": "one"}},
      "keys": {"scheme": {"block": "row", "scale": "absmax", "words": "one"}},
      "values": {"scheme": {"block": "row", "scale": "absmax", "words": "one"}},
      "weights": {"scheme": {"block": "row", "scale": "unsigned", "words": "one"}}},)";
  std::ofstream(dir_ + "/attention.json") << R"({"format": 1, "chip": "W8A8, int8 attention",
    "activation": {"block": "row", "scale": "absmax", "words": "one"}, )" << forms << R"(
    "accumulator": {"bits": 32, "overflow": "wrap"}})";
  std::ofstream(dir_ + "/no-attention.json") << R"({"format": 1, "chip": "W8A8",
    "activation": {"block": "row", "scale": "absmax", "words": "one"}, "accumulator": {"bits": 32, "overflow": "wrap"}})";
  auto check = [&](const std::string& contract, int threads) {
    const auto r = run_command(presk() + " check --json --precision " + dir_ + "/gpt-env.json " + source("examples/gpt.psk") +
                                   " --realize f32 --measure --threads " + std::to_string(threads) + " --contract " + contract,
                               false);
    EXPECT_EQ(r.status, 0) << r.output;
    return r.output;
  };
  const std::string one = check(dir_ + "/attention.json", 1);
  EXPECT_EQ(one, check(dir_ + "/attention.json", 2));
  const nlohmann::json with = nlohmann::json::parse(one)["entry_gap"];
  const nlohmann::json without = nlohmann::json::parse(check(dir_ + "/no-attention.json", 1))["entry_gap"];
  EXPECT_NE(with["representation"]["absolute"], without["representation"]["absolute"]) << with << without;
  EXPECT_LT(with["arithmetic"]["relative"].get<double>(), with["representation"]["relative"].get<double>() / 10) << with;
  const auto solved = run_command(presk() + " solve " + source("examples/gpt.psk") + " --precision " + dir_ +
                                  "/gpt-env.json --contract " + dir_ + "/attention.json --realize f32 --budget 3e-2 "
                                  "--heldout 2 --quiet --out " + dir_ + "/attention-solved.json");
  ASSERT_EQ(solved.status, 0) << solved.output;
  std::ifstream in(dir_ + "/attention-solved.json");
  const nlohmann::json contract = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  EXPECT_EQ(contract["attention"]["weights"]["scheme"]["scale"], "unsigned") << contract;
  const nlohmann::json& gap = contract["solve"]["gap"];
  EXPECT_TRUE(gap["in_sample"]["inside"].get<bool>()) << gap;
  EXPECT_TRUE(gap["held_out"]["inside"].get<bool>()) << gap;
  // The solve measured the chip's program with the forms: check --measure on its contract agrees.
  const nlohmann::json checked = nlohmann::json::parse(check(dir_ + "/attention-solved.json", 2))["entry_gap"];
  EXPECT_EQ(checked["total"]["absolute"], gap["in_sample"]["absolute"]) << checked << gap;
}

// `presk generate --contract C --compare exact`: the chip's program generates, its caches kept as
// the contract says, against the exact reference fed the same tokens. Weights as `presk train`
// writes them (stacked, with a vocabulary), synthesized, the head not zero.
TEST_F(ChipMeasure, GenerateRunsTheChipsCachesAgainstTheExactReference) {
  lang::FrontendOptions options;
  options.dims = {{"T", 8}};
  const ir::Program program = lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/gpt.psk"), options);
  const reference::ParameterStore store = reference::synthesize_parameters(program, 0, 1);
  std::vector<Tensor> tensors;  // NamedTensor refers to them
  for (const ir::Param& param : program.params) {
    Tensor& t = tensors.emplace_back(ElementType::f32, param.type.shape);
    const std::vector<double>& values = *store.find(param.path);
    for (uint64_t k = 0; k < t.element_count(); ++k) t.set(k, param.path == "head" ? 0.3 * std::sin(1.0 + 0.7 * k) : values[k]);
  }
  std::vector<NamedTensor> named;
  for (size_t i = 0; i < tensors.size(); ++i) named.push_back({program.params[i].path, tensors[i]});
  std::string characters;
  for (char c = ' '; c < ' ' + 63; ++c) characters += c;
  write_safetensors(dir_ + "/gpt-vocab.safetensors", named, {{"vocabulary", nlohmann::json(characters).dump()}});
  auto generate = [&](const std::string& extra) {
    return run_command(presk() + " generate " + source("examples/gpt.psk") + " --dim T=8 --weights " + dir_ +
                           "/gpt-vocab.safetensors --prompt AB --tokens 6 --realize f32 --compare exact --json" + extra,
                       false);
  };
  const auto plain = generate(""), chip = generate(" --contract " + source("examples/contracts/kv_int8.json"));
  ASSERT_EQ(plain.status, 0) << plain.output;
  ASSERT_EQ(chip.status, 0) << chip.output;
  const nlohmann::json p = nlohmann::json::parse(plain.output), c = nlohmann::json::parse(chip.output);
  EXPECT_NE(c["first"].get<std::string>().find("+int8 KV cache"), std::string::npos) << c["first"];
  // int8 rows move the logits far more than the f32 run's own rounding does.
  EXPECT_GT(c["largest_gap"].get<double>(), 10 * p["largest_gap"].get<double>()) << c << p;
  const auto exact = run_command(presk() + " generate " + source("examples/gpt.psk") + " --dim T=8 --weights " + dir_ +
                                 "/gpt-vocab.safetensors --prompt AB --tokens 2 --exact --contract " +
                                 source("examples/contracts/kv_int8.json"));
  EXPECT_EQ(exact.status, 2) << exact.output;
  EXPECT_NE(exact.output.find("E1725"), std::string::npos) << exact.output;
}

TEST_F(ChipMeasure, ContractNeedsMeasure) {
  const auto r = run_command(presk() + " check --precision " + dir_ + "/env.json " + source("examples/gpt_tiny.psk") +
                             " --realize f32 --contract " + source("examples/contracts/npu_w8a8.json"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("E1721"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace presk
