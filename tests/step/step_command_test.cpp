// `presk calibrate --step` as a user runs it on examples/gpt_tiny.psk: the table and JSON, the
// warm-up equal to presk train's, --envelope re-measuring bit for bit, and the coded refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/run_command.h"
#include "step/synthetic_profile.h"
#include "support/atomic_file.h"
#include "support/input_file.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"

namespace presk::step {
namespace {

using presk::testing::presk;
using presk::testing::run_command;
using testing_support::TempFolder;

class StepCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string text;
    for (int i = 0; i < 200; ++i) text += i % 2 ? "the cat sat on a mat. " : "a mat on the cat. ";
    write_file_atomically(folder_.file("text.txt"), text);
    auto prepared = run(presk() + " data prepare --text text.txt --window 8 --out-dir data");
    ASSERT_EQ(prepared.status, 0) << prepared.output;
    auto trained = run(presk() + " train " + program_ + " --data data/train.safetensors --batch 2 --steps 2 --realize f64 "
                       "--out c.safetensors --weights-out w.safetensors");
    ASSERT_EQ(trained.status, 0) << trained.output;
  }

  presk::testing::CommandResult run(const std::string& command, bool merge = true) const {
    return run_command("cd '" + folder_.path() + "' && " + command, merge);
  }
  // calibrate --step on the weights and data with `arguments`.
  presk::testing::CommandResult step(const std::string& arguments, bool merge = true) const {
    return run(presk() + " calibrate --step " + program_ + " --entry loss --threads 2 " + arguments, merge);
  }

  TempFolder folder_;
  std::string program_ = "'" + std::string(PRESK_SOURCE_DIR) + "/examples/gpt_tiny.psk' --dim T=8";
  std::string state_ = "--weights w.safetensors --data data/train.safetensors --batch 2 --steps 10 --lr 1e-2 --warmup 3";
};

TEST_F(StepCommand, TableProgressAndEnvelope) {
  auto table = step(state_ + " --realize f64 --realize f32 --out s.json");
  ASSERT_EQ(table.status, 0) << table.output;
  for (const char* expected : {"presk calibrate --step: step 4 of 10 of `loss`", "warm-up step 3  loss",
                               "exact step: window 2/2 at 128 bits", "sampling noise", "realization  master  update gap",
                               "\nf32          f32 ", "# step envelope s.json (+ s.safetensors)"}) {
    EXPECT_NE(table.output.find(expected), std::string::npos) << expected << " in\n" << table.output;
  }
  auto json_text = step(state_ + " --realize f64 --realize f32 --json --quiet", false);
  ASSERT_EQ(json_text.status, 0) << json_text.output;
  const nlohmann::json json = nlohmann::json::parse(json_text.output);
  ASSERT_EQ(json["realizations"].size(), 2u);
  const double f64 = json["realizations"][0]["update_gap"], f32 = json["realizations"][1]["update_gap"];
  EXPECT_LE(f64, 1e-10);
  EXPECT_GT(f32, f64);
  // The native step's seconds: the median of --rounds (5) rounds in alternation, with its spread.
  for (const nlohmann::json& row : json["realizations"]) {
    EXPECT_EQ(row["rounds"].get<int>(), 5) << row.dump();
    EXPECT_LE(row["seconds_least"].get<double>(), row["seconds"].get<double>()) << row.dump();
    EXPECT_LE(row["seconds"].get<double>(), row["seconds_greatest"].get<double>()) << row.dump();
    EXPECT_GT(row["seconds_least"].get<double>(), 0) << row.dump();
  }
  // Against the saved envelope, without the exact run: the same numbers.
  auto again = step("--envelope s.json --realize f32 --json --quiet", false);
  ASSERT_EQ(again.status, 0) << again.output;
  const nlohmann::json measured = nlohmann::json::parse(again.output)["realizations"][0];
  EXPECT_EQ(measured["update_gap"].get<double>(), f32);
  EXPECT_EQ(measured["gradient_gap"], json["realizations"][1]["gradient_gap"]);
  EXPECT_EQ(measured["storage_floor"], json["realizations"][1]["storage_floor"]);
  // The envelope records --dim T=8: without it the same numbers; another T is E1103.
  const std::string unbound = presk() + " calibrate --step '" + std::string(PRESK_SOURCE_DIR) +
                              "/examples/gpt_tiny.psk' --entry loss --threads 2 --envelope s.json --realize f32 ";
  auto recorded = run(unbound + "--json --quiet", false);
  ASSERT_EQ(recorded.status, 0) << recorded.output;
  EXPECT_EQ(nlohmann::json::parse(recorded.output)["realizations"][0]["update_gap"].get<double>(), f32);
  auto other = run(unbound + "--dim T=4 --quiet");
  EXPECT_EQ(other.status, 1) << other.output;
  EXPECT_NE(other.output.find("E1103"), std::string::npos) << other.output;
  // --dropout is recorded: the envelope re-measures without repeating it (its hash includes the rates).
  ASSERT_EQ(step(state_ + " --dropout 0.25 --out d.json --quiet").status, 0);
  auto dropped = step("--envelope d.json --realize f32 --quiet");
  EXPECT_EQ(dropped.status, 0) << dropped.output;
}

// The state is presk train's: --init W --realize f64, stopped after K steps.
TEST_F(StepCommand, WarmUpIsPresksTrainsRun) {
  ASSERT_EQ(step(state_ + " --out s.json --quiet").status, 0);
  auto trained = run(presk() + " train " + program_ + " --data data/train.safetensors --batch 2 --steps 10 --lr 1e-2 "
                     "--realize f64 --init w.safetensors --until 3 --out k.safetensors");
  ASSERT_EQ(trained.status, 0) << trained.output;
  const SafetensorsFile checkpoint = SafetensorsFile::open(folder_.file("k.safetensors"));
  const SafetensorsFile companion = SafetensorsFile::open(folder_.file("s.safetensors"));
  int compared = 0;
  for (const SafetensorsEntry& entry : checkpoint.entries()) {
    const bool moment = entry.name.rfind("adam.", 0) == 0;
    const std::string name = moment ? entry.name.substr(5, 1) + "/" + entry.name.substr(7) : "theta/" + entry.name;
    const Tensor a = checkpoint.read(entry), b = companion.read(name);
    ASSERT_EQ(a.element_count(), b.element_count()) << name;
    for (uint64_t i = 0; i < a.element_count(); ++i) ASSERT_EQ(a.get(i), b.get(i)) << name << "[" << i << "]";
    ++compared;
  }
  EXPECT_GT(compared, 30);
}

// solve --step writes a realization presk train runs, and presk explain explains.
TEST_F(StepCommand, SolveStepTrainAndExplain) {
  ASSERT_EQ(step(state_ + " --out s.json --quiet").status, 0);
  auto solved = run(presk() + " solve " + program_ + " --step s.json --budget 1e-3 --out r.json --threads 2");
  ASSERT_EQ(solved.status, 0) << solved.output;
  for (const char* expected : {"presk solve --step: budget 0.001", "adamw.step", "SelfAttention.apply.vjp", ": inside",
                               "solve --step: measure all-f64"}) {
    EXPECT_NE(solved.output.find(expected), std::string::npos) << expected << " in\n" << solved.output;
  }
  auto trained = run(presk() + " train " + program_ + " --data data/train.safetensors --batch 2 --steps 2 "
                     "--realize @r.json --init w.safetensors --out t.safetensors");
  EXPECT_EQ(trained.status, 0) << trained.output;
  auto explained = run(presk() + " explain r.json");
  EXPECT_EQ(explained.status, 0) << explained.output;
  EXPECT_NE(explained.output.find("a training step solved by function"), std::string::npos) << explained.output;
  auto both = run(presk() + " solve " + program_ + " --step s.json --precision e.json --budget 1e-3 --out q.json");
  EXPECT_EQ(both.status, 2) << both.output;
  EXPECT_NE(both.output.find("E1258"), std::string::npos) << both.output;
  auto by_value = run(presk() + " solve " + program_ + " --step s.json --grain value --budget 1e-3 --out v.json --quiet");
  EXPECT_EQ(by_value.status, 0) << by_value.output;
  EXPECT_NE(by_value.output.find("by stored value"), std::string::npos) << by_value.output;
  EXPECT_NE(by_value.output.find("SelfAttention.apply.vjp/%"), std::string::npos) << by_value.output;
  EXPECT_EQ(run(presk() + " train " + program_ + " --data data/train.safetensors --batch 2 --steps 1 --realize @v.json "
                "--init w.safetensors --out tv.safetensors").status, 0);
}

// --profile: calibrate --step's predicted column, solve --step's savings and predicted times;
// a profile with a missing class refused (E1202) before anything is measured.
TEST_F(StepCommand, Profile) {
  ASSERT_EQ(step(state_ + " --out s.json --quiet").status, 0);
  price_testing::Speeds speeds;
  speeds.bf16 = 0.5e9;
  speeds.bf16_bandwidth = 1e9;
  nlohmann::json profile = profile::profile_to_json(price_testing::synthetic_profile(speeds));
  write_file_atomically(folder_.file("p.json"), profile.dump());
  auto table = step("--envelope s.json --realize f64 --realize f32 --realize recipe --profile p.json --quiet");
  ASSERT_EQ(table.status, 0) << table.output;
  for (const char* expected : {"predicted  vs f64", "\nf64          f64 ", "  1.000\n", "# predicted: seconds per step"}) {
    EXPECT_NE(table.output.find(expected), std::string::npos) << expected << " in\n" << table.output;
  }
  auto json_text = step("--envelope s.json --realize f64 --realize f32 --profile p.json --json --quiet", false);
  ASSERT_EQ(json_text.status, 0) << json_text.output;
  const nlohmann::json json = nlohmann::json::parse(json_text.output);
  EXPECT_EQ(json["realizations"][0]["predicted_seconds"], json["predicted_all_f64_seconds"]);
  EXPECT_GT(json["realizations"][1]["predicted_speedup"].get<double>(), 1);
  auto solved = run(presk() + " solve " + program_ + " --step s.json --budget 1e-2 --out r.json --profile p.json --quiet");
  ASSERT_EQ(solved.status, 0) << solved.output;
  for (const char* expected : {"saved f32   saved bf16", "predicted   ", "s per step all-f64"}) {
    EXPECT_NE(solved.output.find(expected), std::string::npos) << expected << " in\n" << solved.output;
  }
  EXPECT_EQ(solved.output.find("  bf16\n"), std::string::npos) << solved.output;
  const nlohmann::json record = nlohmann::json::parse(read_input_file(folder_.file("r.json"), {"test", "E0100", "", 1 << 24}));
  EXPECT_TRUE(record["solve"].contains("predicted_seconds"));
  profile["rooflines"].erase("reduction");
  write_file_atomically(folder_.file("bad.json"), profile.dump());
  auto bad = run(presk() + " solve " + program_ + " --step s.json --budget 1e-2 --out q.json --profile bad.json");
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_NE(bad.output.find("E1202"), std::string::npos) << bad.output;
  EXPECT_EQ(bad.output.find("measure all-f64"), std::string::npos) << bad.output;
  auto bad_calibrate = step("--envelope s.json --realize f32 --profile bad.json");
  EXPECT_NE(bad_calibrate.output.find("E1202"), std::string::npos) << bad_calibrate.output;
  EXPECT_EQ(bad_calibrate.output.find("native step under"), std::string::npos) << bad_calibrate.output;
  auto other_mode = run(presk() + " calibrate --precision " + program_ + " --entry loss --samples 1 --bits 64 --out e.json --profile p.json");
  EXPECT_NE(other_mode.output.find("E1257"), std::string::npos) << other_mode.output;
}

// solve --step measures the solved step on a held-out batch too (the envelope's next rows, never
// solved on) and reports both, as the float solve does; explain says it.
TEST_F(StepCommand, SolveMeasuresAHeldOutBatch) {
  ASSERT_EQ(step(state_ + " --out s.json --quiet").status, 0);
  auto solved = run(presk() + " solve " + program_ + " --step s.json --budget 1e-2 --out r.json --quiet");
  ASSERT_EQ(solved.status, 0) << solved.output;
  EXPECT_NE(solved.output.find("held out (the next step's batch, never solved on): update gap"), std::string::npos)
      << solved.output;
  const nlohmann::json record = nlohmann::json::parse(read_input_file(folder_.file("r.json"), {"test", "E0100", "", 1 << 24}));
  ASSERT_TRUE(record["solve"]["held_out"].is_object()) << record["solve"].dump();
  const double held = record["solve"]["held_out"]["update_gap"], batch = record["solve"]["update_gap"];
  EXPECT_TRUE(std::isfinite(held));
  EXPECT_GT(held, 0);
  EXPECT_NE(held, batch);  // another batch, another exact step
  EXPECT_LE(record["solve"]["held_out"]["baseline"].get<double>(), 1e-10);  // all-f64 against the exact step there
  auto explained = run(presk() + " explain r.json");
  EXPECT_NE(explained.output.find("held out (the next step's batch"), std::string::npos) << explained.output;
  // Without its data file, nothing is held out, and the report says why.
  ASSERT_EQ(std::rename(folder_.file("data/train.safetensors").c_str(), folder_.file("moved.safetensors").c_str()), 0);
  auto moved = run(presk() + " solve " + program_ + " --step s.json --budget 1e-2 --out q.json --quiet");
  ASSERT_EQ(moved.status, 0) << moved.output;
  EXPECT_NE(moved.output.find("nothing held out: its data file"), std::string::npos) << moved.output;
}

// --yardstick f64: the native all-f64 step as θ′ (for models the exact step cannot hold), labelled;
// its gaps agree with the exact step's to the f64 step's own distance from it, and solve refuses it.
TEST_F(StepCommand, NativeF64Yardstick) {
  auto exact_text = step(state_ + " --realize f32 --json --quiet", false);
  ASSERT_EQ(exact_text.status, 0) << exact_text.output;
  const nlohmann::json exact = nlohmann::json::parse(exact_text.output);
  auto table = step(state_ + " --yardstick f64 --realize f64 --realize f32 --out y.json");
  ASSERT_EQ(table.status, 0) << table.output;
  for (const char* expected : {"against the native f64 step (an estimate: not the exact step)", "yardstick: the native f64 step"}) {
    EXPECT_NE(table.output.find(expected), std::string::npos) << expected << " in\n" << table.output;
  }
  EXPECT_EQ(table.output.find("exact step: window"), std::string::npos) << table.output;
  auto json_text = step("--envelope y.json --realize f64 --realize f32 --json --quiet", false);
  ASSERT_EQ(json_text.status, 0) << json_text.output;
  const nlohmann::json json = nlohmann::json::parse(json_text.output);
  EXPECT_EQ(json["yardstick"], "native f64");
  EXPECT_EQ(json["bits"], 53);
  EXPECT_LE(json["realizations"][0]["update_gap"].get<double>(), 1e-15);
  EXPECT_EQ(json["storage_floors"]["f64"].get<double>(), 0.0);
  const double f32 = json["realizations"][1]["update_gap"], f32_exact = exact["realizations"][0]["update_gap"];
  EXPECT_GT(f32, 1e-9);
  EXPECT_NEAR(f32, f32_exact, 1e-6 * f32_exact);
  EXPECT_NEAR(json["storage_floors"]["f32"].get<double>(), exact["storage_floors"]["f32"].get<double>(),
              1e-6 * exact["storage_floors"]["f32"].get<double>());
  EXPECT_NEAR(json["realizations"][1]["gradient_gap"].get<double>(), exact["realizations"][0]["gradient_gap"].get<double>(),
              1e-6 * exact["realizations"][0]["gradient_gap"].get<double>());
  auto solved = run(presk() + " solve " + program_ + " --step y.json --budget 1e-3 --out r.json");
  EXPECT_EQ(solved.status, 1) << solved.output;
  EXPECT_NE(solved.output.find("E1261"), std::string::npos) << solved.output;
  auto again = step("--envelope y.json --yardstick f64 --realize f32");
  EXPECT_EQ(again.status, 2) << again.output;
  EXPECT_NE(again.output.find("E1260"), std::string::npos) << again.output;
}

TEST_F(StepCommand, CodedRefusals) {
  auto unweighted = step("--data data/train.safetensors --warmup 2");
  EXPECT_EQ(unweighted.status, 2) << unweighted.output;
  EXPECT_NE(unweighted.output.find("E1256"), std::string::npos) << unweighted.output;
  auto none = step(state_.substr(0, state_.find(" --warmup")) + " --warmup 0");
  EXPECT_EQ(none.status, 2) << none.output;
  EXPECT_NE(none.output.find("E1250"), std::string::npos) << none.output;
  auto both = step(state_ + " --precision");
  EXPECT_EQ(both.status, 2) << both.output;
  EXPECT_NE(both.output.find("E1257"), std::string::npos) << both.output;
  // A realization typing the optimizer's state is refused before the warm-up and the exact step.
  write_file_atomically(folder_.file("typed.json"), R"({"format": 1, "default": "f32", "params": {"tok": "bf16"}})");
  auto typed = step(state_ + " --realize f32 --realize @typed.json");
  EXPECT_EQ(typed.status, 1) << typed.output;
  EXPECT_NE(typed.output.find("E1252"), std::string::npos) << typed.output;
  EXPECT_EQ(typed.output.find("warm-up step"), std::string::npos) << typed.output;
  auto samples = step(state_ + " --samples 2");
  EXPECT_NE(samples.output.find("E1257"), std::string::npos) << samples.output;
  ASSERT_EQ(step(state_ + " --out s.json --quiet").status, 0);
  auto other = run(presk() + " calibrate --step '" + std::string(PRESK_SOURCE_DIR) +
                   "/examples/gpt_tiny.psk' --dim T=4 --entry loss --envelope s.json --realize f32");
  EXPECT_EQ(other.status, 1) << other.output;
  // A --dim that contradicts the envelope's recorded bindings is refused before the program is compiled (E1103).
  EXPECT_NE(other.output.find("E1103"), std::string::npos) << other.output;
  // solve --step --report is refused (E1263), before the envelope is read: a step solve writes no HTML report.
  auto report = run(presk() + " solve " + program_ + " --step s.json --budget 1e-2 --out r.json --report r.html");
  EXPECT_EQ(report.status, 2) << report.output;
  EXPECT_NE(report.output.find("E1263"), std::string::npos) << report.output;
  EXPECT_FALSE(std::ifstream(folder_.file("r.json")).good());
  auto help = run(presk() + " calibrate --help");
  EXPECT_NE(help.output.find("--envelope"), std::string::npos) << help.output;
}

}  // namespace
}  // namespace presk::step
