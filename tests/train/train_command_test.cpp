// `presk train` as a user runs it: progress on stderr, the summary (or JSON) on stdout, the
// checkpoint, --resume, --dropout, and the coded refusals with exit status 1.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/run_command.h"
#include "support/atomic_file.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"

namespace presk::train {
namespace {

using presk::testing::presk;
using presk::testing::run_command;
using testing_support::TempFolder;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

class TrainCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string text;
    for (int i = 0; i < 200; ++i) text += i % 2 ? "the cat sat on a mat. " : "a mat on the cat. ";
    write_file_atomically(folder_.file("text.txt"), text);
    auto prepared = run_command("cd '" + folder_.path() + "' && " + presk() +
                                " data prepare --text text.txt --window 8 --out-dir data");
    ASSERT_EQ(prepared.status, 0) << prepared.output;
  }

  // `presk train` on gpt_tiny (T = 8) with `arguments`; stdout, and stderr too when `merge`.
  presk::testing::CommandResult train(const std::string& arguments, bool merge = true) const {
    return run_command(
        "cd '" + folder_.path() + "' && " + presk() + " train '" + PRESK_SOURCE_DIR +
            "/examples/gpt_tiny.psk' --dim T=8 --data data/train.safetensors "
            "--val data/val.safetensors --val-windows 8 --batch 2 --lr 1e-2 --warmup 2 "
            "--threads 1 " +
            arguments,
        merge);
  }

  TempFolder folder_;
};

TEST_F(TrainCommand, ProgressSummaryAndCheckpoint) {
  auto result = train("--steps 4 --every 2 --out c.safetensors");
  ASSERT_EQ(result.status, 0) << result.output;
  for (const char* expected : {"step 0  val ", "step 1/4  loss ", " tok/s  ETA ", "step 2  val ",
                               "checkpoint c.safetensors", "val loss    ", "wall time   "}) {
    EXPECT_NE(result.output.find(expected), std::string::npos) << expected << " in\n"
                                                               << result.output;
  }
  SafetensorsFile checkpoint = SafetensorsFile::open(folder_.file("c.safetensors"));
  EXPECT_EQ(checkpoint.metadata().at("step"), "4");
  EXPECT_EQ(checkpoint.entry("adam.v.blocks.attn.wq.w").file_dtype, "F32");
  EXPECT_EQ(checkpoint.entry("blocks.attn.wq.w").shape, (std::vector<int64_t>{2, 8, 8}));
}

TEST_F(TrainCommand, JsonAndResumeAndDropout) {
  auto whole = train("--steps 4 --json --out whole.safetensors", false);
  ASSERT_EQ(whole.status, 0) << whole.output;
  nlohmann::json report = nlohmann::json::parse(whole.output);
  EXPECT_EQ(report["last_step"], 4);
  EXPECT_EQ(report["steps"].size(), 4u);
  EXPECT_EQ(report["validations"].size(), 2u);  // before the first step, at the end
  EXPECT_EQ(report["remat"], "store");  // auto under a uniform realization
  // recompute (what auto picks under a @file realization) writes the same bytes.
  auto recompute = train("--steps 4 --remat recompute --json --out recompute.safetensors", false);
  ASSERT_EQ(recompute.status, 0) << recompute.output;
  EXPECT_EQ(nlohmann::json::parse(recompute.output)["remat"], "recompute");
  EXPECT_EQ(file_bytes(folder_.file("whole.safetensors")), file_bytes(folder_.file("recompute.safetensors")));
  // A file that types no sites (what solve --step writes when every function takes the master
  // type) stores too; one that types a site recomputes.
  {
    std::ofstream(folder_.file("uniform.json")) << R"({"format": 1, "default": "f32"})";
    auto uniform = train("--steps 2 --json --realize @uniform.json --out u.safetensors", false);
    ASSERT_EQ(uniform.status, 0) << uniform.output;
    EXPECT_EQ(nlohmann::json::parse(uniform.output)["remat"], "store");
    std::ofstream(folder_.file("typed.json")) << R"({"format": 1, "default": "f32", "sites": {"FeedForward.apply/%1": "f64"}})";
    auto typed = train("--steps 2 --json --realize @typed.json --out t.safetensors", false);
    ASSERT_EQ(typed.status, 0) << typed.output;
    EXPECT_EQ(nlohmann::json::parse(typed.output)["remat"], "recompute");
  }
  ASSERT_EQ(train("--steps 4 --until 2 --out part.safetensors").status, 0);
  ASSERT_EQ(train("--steps 4 --resume part.safetensors --out part.safetensors").status, 0);
  EXPECT_EQ(file_bytes(folder_.file("whole.safetensors")),
            file_bytes(folder_.file("part.safetensors")));
  // --dropout 0 is another program: its checkpoint cannot continue this run.
  auto other = train("--steps 4 --dropout 0 --resume part.safetensors --out x.safetensors");
  EXPECT_EQ(other.status, 1);
  EXPECT_NE(other.output.find("error[E1005]"), std::string::npos) << other.output;
}

// --profile: the gradient's op kinds per step (the table, or "profile" in --json), most time
// first, with the same checkpoint as without it.
TEST_F(TrainCommand, ProfileTimesTheOpsWithoutChangingTheRun) {
  auto plain = train("--steps 2 --out plain.safetensors");
  ASSERT_EQ(plain.status, 0) << plain.output;
  auto table = train("--steps 2 --profile --out table.safetensors", false);
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_NE(table.output.find("per op kind (ms per step"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("contract f32 [8, 8] @ "), std::string::npos) << table.output;
  auto json = train("--steps 2 --profile --json --out json.safetensors", false);
  ASSERT_EQ(json.status, 0) << json.output;
  const nlohmann::json profile = nlohmann::json::parse(json.output)["profile"];
  ASSERT_GT(profile.size(), 5u);
  for (size_t i = 1; i < profile.size(); ++i) EXPECT_GE(profile[i - 1]["ms_per_run"], profile[i]["ms_per_run"]);
  EXPECT_GT(profile[0]["calls_per_run"], 0);
  EXPECT_EQ(file_bytes(folder_.file("plain.safetensors")), file_bytes(folder_.file("table.safetensors")));
  EXPECT_EQ(file_bytes(folder_.file("plain.safetensors")), file_bytes(folder_.file("json.safetensors")));
}

// --weights-out writes what `presk run --weights` reads; a finished checkpoint exports it again.
TEST_F(TrainCommand, WeightsForTheOtherTools) {
  ASSERT_EQ(train("--steps 2 --out c.safetensors --weights-out w.safetensors").status, 0);
  const std::string weights = file_bytes(folder_.file("w.safetensors"));
  const std::string checkpoint = file_bytes(folder_.file("c.safetensors"));
  auto run = run_command("cd '" + folder_.path() + "' && " + presk() + " run '" + PRESK_SOURCE_DIR +
                         "/examples/gpt_tiny.psk' --entry loss --dim T=8 --realize f32 "
                         "--weights w.safetensors --data data/val.safetensors");
  EXPECT_EQ(run.status, 0) << run.output;
  auto export_again =
      train("--steps 2 --resume c.safetensors --out c.safetensors --weights-out v.safetensors");
  ASSERT_EQ(export_again.status, 0) << export_again.output;
  EXPECT_EQ(file_bytes(folder_.file("v.safetensors")), weights);
  EXPECT_EQ(file_bytes(folder_.file("c.safetensors")), checkpoint);
}

TEST_F(TrainCommand, CodedRefusals) {
  write_file_atomically(folder_.file("r.json"),
                        R"({"format": 1, "default": "f32", "params": {"head": "bf16"}})");
  auto typed = train("--steps 2 --realize @r.json --out x.safetensors");
  EXPECT_EQ(typed.status, 1);
  EXPECT_NE(typed.output.find("error[E1001]"), std::string::npos) << typed.output;
  auto window =
      run_command("cd '" + folder_.path() + "' && " + presk() + " train '" + PRESK_SOURCE_DIR +
                  "/examples/gpt_tiny.psk' --dim T=4 --data data/train.safetensors --steps 1 --out "
                  "x.safetensors");
  EXPECT_EQ(window.status, 1);
  EXPECT_NE(window.output.find("error[E1000]"), std::string::npos) << window.output;
  auto logits = train("--steps 1 --entry logits --out x.safetensors");
  EXPECT_EQ(logits.status, 1);
  EXPECT_NE(logits.output.find("error[E1003]"), std::string::npos) << logits.output;
}

}  // namespace
}  // namespace presk::train
