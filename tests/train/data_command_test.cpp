// `presk data prepare` as a user runs it: a small text's vocabulary, split, metadata and
// exact bytes; determinism; the error codes; the real King James Bible; and a sample read
// back by `presk run --data`.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/run_command.h"
#include "support/atomic_file.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"
#include "train/corpus.h"
#include "support/sha256.h"

namespace presk::train {
namespace {

using presk::testing::presk;
using presk::testing::run_command;
using testing_support::TempFolder;

// 120 bytes, 29 distinct: train is bytes [0, 108), val [108, 120).
constexpr std::string_view kSmallText =
    "In the beginning God created the heaven and the earth.\n"
    "And God said, Let there be light: and there was light.\n"
    "Amen!\n\"x\"\n";

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

// Runs `presk data prepare ARGUMENTS --json` inside `folder`; stdout only.
presk::testing::CommandResult prepare(const TempFolder& folder, const std::string& arguments) {
  return run_command(
      "cd '" + folder.path() + "' && " + presk() + " data prepare " + arguments + " --json",
      /*merge_stderr=*/false);
}

TEST(DataPrepare, SmallTextVocabularySplitAndMetadata) {
  TempFolder folder;
  write_file_atomically(folder.file("small.txt"), kSmallText);
  auto result = prepare(folder, "--text small.txt --window 8 --out-dir out");
  ASSERT_EQ(result.status, 0) << result.output;
  nlohmann::json report = nlohmann::json::parse(result.output);
  EXPECT_EQ(report["vocabulary"], "\n !\",.:AGILabcdeghilmnorstvwx");
  EXPECT_EQ(report["vocabulary_size"], 29);
  EXPECT_EQ(report["source_bytes"], kSmallText.size());
  EXPECT_EQ(report["source_sha256"], sha256_hex(kSmallText));

  SafetensorsFile train = SafetensorsFile::open(folder.file("out/train.safetensors"));
  const auto& metadata = train.metadata();
  EXPECT_EQ(metadata.at("part"), "train");
  EXPECT_EQ(metadata.at("part_begin"), "0");
  EXPECT_EQ(metadata.at("part_end"), "108");  // floor(120 x 0.9)
  EXPECT_EQ(metadata.at("vocabulary"), "\"\\n !\\\",.:AGILabcdeghilmnorstvwx\"");
  EXPECT_EQ(metadata.at("vocabulary_size"), "29");
  EXPECT_EQ(metadata.at("source_sha256"), sha256_hex(kSmallText));
  EXPECT_EQ(metadata.at("window"), "8");
  EXPECT_EQ(metadata.at("split"), "0.9");
  EXPECT_EQ(metadata.at("windows"), "13");  // (108 - 1) / 8
  EXPECT_EQ(metadata.at("command"), "presk data prepare --text small.txt --window 8 --split 0.9");
  const SafetensorsEntry& tokens = train.entry(kTokensTensorName);
  EXPECT_EQ(tokens.file_dtype, "I32");
  EXPECT_EQ(tokens.shape, (std::vector<int64_t>{13, 9}));

  // Sample 2 is bytes [16, 25) of the text, as tokens.
  Vocabulary vocabulary = build_vocabulary(kSmallText);
  for (uint64_t position = 0; position < 9; ++position) {
    auto byte = static_cast<uint8_t>(kSmallText[16 + position]);
    EXPECT_EQ(train.value(tokens, 2 * 9 + position), vocabulary.token_of[byte]);
  }
  SafetensorsFile val = SafetensorsFile::open(folder.file("out/val.safetensors"));
  EXPECT_EQ(val.metadata().at("part_begin"), "108");
  EXPECT_EQ(val.entry(kTokensTensorName).shape, (std::vector<int64_t>{1, 9}));
}

// The exact bytes, computed once: a change here changes every prepared corpus.
TEST(DataPrepare, GoldenOutputHashes) {
  TempFolder folder;
  write_file_atomically(folder.file("small.txt"), kSmallText);
  auto result = prepare(folder, "--text small.txt --window 8 --out-dir out");
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_EQ(sha256_hex(file_bytes(folder.file("out/train.safetensors"))),
            "299df63035fdce2b87af55b990a94b4123c28f399c514e22cce3b8620326c1b9");
  EXPECT_EQ(sha256_hex(file_bytes(folder.file("out/val.safetensors"))),
            "4302e68489e4be735255fe362c81971cc8012c82ca47779b5fab3f0278ca410e");
}

// The same command gives the same bytes, wherever the files go.
TEST(DataPrepare, SameRunTwiceIsByteIdentical) {
  TempFolder folder;
  write_file_atomically(folder.file("small.txt"), kSmallText);
  ASSERT_EQ(prepare(folder, "--text small.txt --window 5 --split 0.75 --out-dir a").status, 0);
  ASSERT_EQ(prepare(folder, "--text small.txt --window 5 --split 0.75 --out-dir b/c").status, 0);
  for (const char* name : {"train.safetensors", "val.safetensors"}) {
    std::string first = file_bytes(folder.file(std::string("a/") + name));
    EXPECT_FALSE(first.empty());
    EXPECT_EQ(first, file_bytes(folder.file(std::string("b/c/") + name))) << name;
  }
}

// Runs a failing command and expects exit status 1 and `code` in its message.
void expect_error(const std::string& command, const std::string& code) {
  auto result = run_command(command);
  EXPECT_EQ(result.status, 1) << command << "\n" << result.output;
  EXPECT_NE(result.output.find("error[" + code + "]"), std::string::npos) << result.output;
}

TEST(DataPrepare, ErrorsCarryTheirCodes) {
  TempFolder folder;
  std::string base = presk() + " data prepare --out-dir '" + folder.file("out") + "'";
  expect_error("PATH=/nonexistent-presk-test " + base + " --window 8", "E0700");
  // A `bible` that fails stands in for a broken installation.
  std::filesystem::create_directories(folder.file("bin"));
  write_file_atomically(folder.file("bin/bible"), "#!/bin/sh\nexit 3\n");
  ASSERT_EQ(run_command("chmod +x '" + folder.file("bin/bible") + "'").status, 0);
  expect_error("PATH='" + folder.file("bin") + "':/usr/bin:/bin " + base + " --window 8", "E0701");
  expect_error(base + " --window 8 --text '" + folder.file("missing.txt") + "'", "E0702");
  write_file_atomically(folder.file("empty.txt"), "");
  expect_error(base + " --window 8 --text '" + folder.file("empty.txt") + "'", "E0703");
  write_file_atomically(folder.file("small.txt"), kSmallText);
  std::string small = " --text '" + folder.file("small.txt") + "'";
  expect_error(base + small + " --window 12", "E0704");  // val holds 12 bytes
  expect_error(base + small + " --window 8 --split 1", "E0704");
  std::string into_file =
      presk() + " data prepare --out-dir '" + folder.file("small.txt") + "/out'";
  expect_error(into_file + small + " --window 8", "E0705");
  // Usage errors exit with 2.
  EXPECT_EQ(run_command(base + small + " --source kjv --window 8").status, 2);
  EXPECT_EQ(run_command(base + small).status, 2);  // no --window
}

TEST(DataPrepare, HelpDescribesTheCommand) {
  auto result = run_command(presk() + " data prepare --help");
  EXPECT_EQ(result.status, 0);
  for (const char* option : {"--source", "--text", "--window", "--out-dir", "--split", "--json"}) {
    EXPECT_NE(result.output.find(option), std::string::npos) << option;
  }
}

// A prepared sample is what `presk run --data F --offset K` feeds an entry's `tokens`.
TEST(DataPrepare, RunReadsASampleAsAWindow) {
  TempFolder folder;
  write_file_atomically(folder.file("small.txt"), kSmallText);
  ASSERT_EQ(prepare(folder, "--text small.txt --window 4 --out-dir out").status, 0);
  auto result = run_command(presk() + " run '" + PRESK_SOURCE_DIR +
                            "/examples/gpt_tiny.psk' --entry loss --exact --dim T=4 --const V=29"
                            " --data '" +
                            folder.file("out/train.safetensors") + "' --offset 5");
  ASSERT_EQ(result.status, 0) << result.output;
  // The head starts at zero: every prediction is uniform, the loss ln 29 = 3.3672958...
  EXPECT_NE(result.output.find("loss : R = 3.3672958"), std::string::npos) << result.output;
}

TEST(DataPrepare, KingJamesBible) {
  // scripts/install-deps installs bible-kjv: its absence is a set-up error, not a skip.
  ASSERT_EQ(run_command("command -v bible").status, 0)
      << "bible-kjv is not installed; run scripts/install-deps";
  TempFolder folder;
  auto result = prepare(folder, "--source kjv --window 256 --out-dir out");
  ASSERT_EQ(result.status, 0) << result.output;
  nlohmann::json report = nlohmann::json::parse(result.output);
  EXPECT_EQ(report["source_bytes"], 4137850);
  EXPECT_EQ(report["source_sha256"], kKjvSha256);
  // 63 distinct bytes once the references are gone (the unstripped dump has 73: its
  // references add the ten digits).
  EXPECT_EQ(report["vocabulary_size"], 63);
  EXPECT_EQ(report["files"][0]["end"], 3724065);
  EXPECT_EQ(report["files"][0]["windows"], 14547);
  EXPECT_EQ(report["files"][1]["windows"], 1616);
}

}  // namespace
}  // namespace presk::train
