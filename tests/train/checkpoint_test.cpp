// Checkpoints: the tensors and metadata they hold, their round trip, and each refusal
// (E1004 not a checkpoint, E1005 another program, E1006 another layout, E1007 other settings).
#include "train/checkpoint.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/error_code.h"
#include "support/diagnostics.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"

namespace presk::train {
namespace {

using testing_support::TempFolder;

using testing::error_code;

std::vector<ParameterState> layout() {
  return {{"blocks.w", {2, 3}, 1, {}, {}, {}}, {"head", {3}, 0, {}, {}, {}}};
}

TrainState state_at(int64_t step) {
  TrainState state{step, layout()};
  double x = 0.125;
  for (ParameterState& p : state.parameters) {
    const size_t n = p.path == "head" ? 3 : 6;
    for (size_t i = 0; i < n; ++i) {
      p.theta.push_back(x);
      p.m.push_back(-x / 4);
      p.v.push_back(x * x);
      x += 0.375;
    }
  }
  return state;
}

RunIdentity identity(const std::string& hash = "ab12") {
  return {{"program_hash", hash},
          {"entry", "loss"},
          {"seed", "3"},
          {"hyperparameters", "{\"lr\":0.001}"}};
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(Checkpoint, RoundTripsStateAndRecordsTheRun) {
  TempFolder folder;
  const std::string path = folder.file("c.safetensors");
  write_checkpoint(path, state_at(7), RealType::f32, identity());
  SafetensorsFile file = SafetensorsFile::open(path);
  EXPECT_EQ(file.entries().size(), 6u);
  EXPECT_EQ(file.entry("adam.m.head").file_dtype, "F32");
  EXPECT_EQ(file.entry("blocks.w").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(file.metadata().at("step"), "7");
  EXPECT_EQ(file.metadata().at("program_hash"), "ab12");
  EXPECT_EQ(file.metadata().at("generator"),
            "{\"kind\": \"counter\", \"seed\": 3, \"next_step\": 7}");
  TrainState back = read_checkpoint(path, layout(), RealType::f32, identity());
  const TrainState original = state_at(7);
  EXPECT_EQ(back.step, 7);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(back.parameters[k].theta, original.parameters[k].theta);
    EXPECT_EQ(back.parameters[k].m, original.parameters[k].m);
    EXPECT_EQ(back.parameters[k].v, original.parameters[k].v);
  }
  // The bytes depend only on the state and the identity.
  write_checkpoint(folder.file("d.safetensors"), state_at(7), RealType::f32, identity());
  EXPECT_EQ(bytes_of(path), bytes_of(folder.file("d.safetensors")));
}

TEST(Checkpoint, RefusesAnotherProgramLayoutOrRun) {
  TempFolder folder;
  const std::string path = folder.file("c.safetensors");
  write_checkpoint(path, state_at(2), RealType::f64, identity());
  EXPECT_EQ(error_code([&] { read_checkpoint(path, layout(), RealType::f64, identity("ffff")); }),
            "E1005");
  std::vector<ParameterState> other = layout();
  other[1].shape = {4};
  EXPECT_EQ(error_code([&] { read_checkpoint(path, other, RealType::f64, identity()); }), "E1006");
  other = layout();
  other.pop_back();  // the file holds a tensor the program has not
  EXPECT_EQ(error_code([&] { read_checkpoint(path, other, RealType::f64, identity()); }), "E1006");
  EXPECT_EQ(error_code([&] { read_checkpoint(path, layout(), RealType::f32, identity()); }),
            "E1006");  // F64 ≠ F32
  RunIdentity changed = identity();
  changed["hyperparameters"] = "{\"lr\":0.002}";
  EXPECT_EQ(error_code([&] { read_checkpoint(path, layout(), RealType::f64, changed); }), "E1007");
  Tensor weights(ElementType::f32, {3});
  write_safetensors(folder.file("w.safetensors"), {{"head", weights}});
  EXPECT_EQ(error_code([&] {
              read_checkpoint(folder.file("w.safetensors"), layout(), RealType::f64, identity());
            }),
            "E1004");
}

TEST(Checkpoint, InitialParametersFromAnyWeightsFile) {
  TempFolder folder;
  const std::string path = folder.file("c.safetensors");
  write_checkpoint(path, state_at(4), RealType::f64, identity());
  TrainState fresh = read_initial_parameters(path, layout(), RealType::bf16);  // moments ignored
  EXPECT_EQ(fresh.step, 0);
  EXPECT_EQ(fresh.parameters[1].theta[0],
            round_to(state_at(4).parameters[1].theta[0], ElementType::bf16));
  EXPECT_EQ(fresh.parameters[1].m, std::vector<double>(3, 0.0));
  Tensor head(ElementType::f64, {3});
  write_safetensors(folder.file("w.safetensors"), {{"head", head}});
  EXPECT_EQ(error_code([&] {
              read_initial_parameters(folder.file("w.safetensors"), layout(), RealType::f32);
            }),
            "E1006");
}

}  // namespace
}  // namespace presk::train
