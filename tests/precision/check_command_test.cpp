// `presk check --precision ENVELOPE PROGRAM --realize R [--measure] [--json]` end to end: an
// envelope from `presk calibrate --precision`, the bound under every model at least the gap it
// measures, the sources ranked, the envelope quoted; and the envelopes it refuses (a program
// whose hash differs: E0930; an entry the program lacks: E0931).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/run_command.h"
#include "precision/envelope.h"
#include "support/temp_folder.h"

namespace presk::precision {
namespace {

const std::string kMlp = std::string(PRESK_SOURCE_DIR) + "/examples/mlp.psk";

// An envelope of mlp.psk's logits at B = 4 over three samples, written into `folder`.
std::string calibrate_mlp(testing_support::TempFolder& folder) {
  const std::string out = folder.file("mlp_logits.json");
  const testing::CommandResult result = testing::run_command(
      testing::presk() + " calibrate --precision " + kMlp +
          " --entry logits --dim B=4 --samples 3 --bits 256 --quiet --out " + out,
      false);
  EXPECT_EQ(result.status, 0) << result.output;
  return out;
}

std::string read_file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

double number(const nlohmann::json& value) {
  return value.is_string() ? std::stod(value.get<std::string>()) : value.get<double>();
}

TEST(CheckCommand, MeasureJsonEveryModel) {
  testing_support::TempFolder folder;
  const std::string envelope = calibrate_mlp(folder);
  for (const std::string realize : {"f32", "bf16"}) {
    const testing::CommandResult result = testing::run_command(
        testing::presk() + " check --precision " + envelope + " " + kMlp + " --realize " + realize +
            " --model all --measure --json --sites 3",
        false);
    ASSERT_EQ(result.status, 0) << result.output;
    const nlohmann::json json = nlohmann::json::parse(result.output);
    EXPECT_EQ(json["entry"], "logits");
    EXPECT_EQ(json["realize"], realize);
    EXPECT_EQ(json["envelope"]["path"], envelope);
    EXPECT_EQ(json["envelope"]["samples"], 3);
    EXPECT_EQ(json["envelope"]["bits"], 256);
    EXPECT_EQ(json["measured"]["bits"], 256);
    const double measured = number(json["measured"]["absolute"]);
    EXPECT_GT(measured, 0);
    EXPECT_DOUBLE_EQ(number(json["measured"]["relative"]),
                     measured / number(json["measured"]["magnitude"]));
    ASSERT_EQ(json["bounds"].size(), 4u);
    const char* models[] = {"k", "normwise", "cond", "rss"};
    for (size_t m = 0; m < 4; ++m) {
      const nlohmann::json& bound = json["bounds"][m];
      EXPECT_EQ(bound["model"], models[m]);
      EXPECT_GE(number(bound["absolute"]), measured) << realize << " " << models[m];
      EXPECT_DOUBLE_EQ(number(bound["ratio"]), number(bound["absolute"]) / measured);
      EXPECT_DOUBLE_EQ(number(bound["relative"]),
                       number(bound["absolute"]) / number(json["output_max_abs"]));
      ASSERT_EQ(bound["sites"].size(), 3u);
      for (size_t i = 1; i < 3; ++i) {
        EXPECT_GE(number(bound["sites"][i - 1]["error"]), number(bound["sites"][i]["error"]));
      }
    }
    // The worst case is the largest, the statistical estimate the smallest.
    EXPECT_GE(number(json["bounds"][0]["absolute"]), number(json["bounds"][1]["absolute"]));
    EXPECT_GE(number(json["bounds"][2]["absolute"]), number(json["bounds"][3]["absolute"]));
  }
}

TEST(CheckCommand, OneModelIsThatModelOfAll) {
  testing_support::TempFolder folder;
  const std::string envelope = calibrate_mlp(folder);
  const std::string base =
      testing::presk() + " check --precision " + envelope + " " + kMlp + " --realize f64 --json";
  const testing::CommandResult all = testing::run_command(base + " --model all", false);
  const testing::CommandResult rss = testing::run_command(base + " --model rss", false);
  ASSERT_EQ(all.status, 0) << all.output;
  ASSERT_EQ(rss.status, 0) << rss.output;
  const nlohmann::json one = nlohmann::json::parse(rss.output);
  ASSERT_EQ(one["bounds"].size(), 1u);
  EXPECT_FALSE(one.contains("measured"));
  EXPECT_EQ(one["bounds"][0]["absolute"],
            nlohmann::json::parse(all.output)["bounds"][3]["absolute"]);
}

TEST(CheckCommand, TableQuotesTheEnvelope) {
  testing_support::TempFolder folder;
  const std::string envelope = calibrate_mlp(folder);
  std::ofstream(folder.file("r.json"))
      << R"({"format": 1, "default": "f32", "order": {"kind": "interleaved", "partials": 8}})";
  const testing::CommandResult result =
      testing::run_command(testing::presk() + " check --precision " + envelope + " " + kMlp +
                               " --realize @" + folder.file("r.json") + " --measure --sites 2",
                           false);
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_EQ(result.output.rfind("presk check: `logits` of " + kMlp, 0), 0u) << result.output;
  EXPECT_NE(result.output.find("bound/measured"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("cond: the 2 largest of"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("conditional on the envelope " + envelope +
                               ": 3 samples (0…2 synthesized from seed 0)"),
            std::string::npos)
      << result.output;
}

TEST(CheckCommand, RefusesAnotherProgram) {
  testing_support::TempFolder folder;
  const std::string envelope = calibrate_mlp(folder);
  const Envelope read = read_envelope(envelope);
  // Another binding than the envelope's: named as such (E1103).
  testing::CommandResult result = testing::run_command(
      testing::presk() + " check --precision " + envelope + " " + kMlp + " --dim B=5 --realize f32");
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.output.find("E1103"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("B=4, not B=5"), std::string::npos) << result.output;
  // Another program: its hash differs (E0930).
  const std::string edited = folder.file("mlp_edited.psk");
  std::string text = read_file_text(kMlp);
  text.replace(text.find("relu("), 5, "tanh(");
  std::ofstream(edited) << text;
  result = testing::run_command(testing::presk() + " check --precision " + envelope + " " + edited + " --realize f32");
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.output.find("E0930"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find(read.program_hash), std::string::npos) << result.output;
}

TEST(CheckCommand, RefusesAnEntryTheProgramLacks) {
  testing_support::TempFolder folder;
  Envelope envelope = read_envelope(calibrate_mlp(folder));
  envelope.entry = "logit";
  write_envelope(envelope, folder.file("renamed.json"));
  const testing::CommandResult result =
      testing::run_command(testing::presk() + " check --precision " + folder.file("renamed.json") +
                           " " + kMlp + " --realize f32");
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.output.find("E0931"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("loss, logits"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace presk::precision
