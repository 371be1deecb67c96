// The training loop on examples/gpt_tiny.psk: determinism (byte-identical checkpoints, for any
// thread count), a resumed run equal to the uninterrupted one, the loss going down under f32
// and f64, and the refusals of run_training.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/error_code.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"
#include "support/temp_folder.h"
#include "train/corpus.h"
#include "train/trainer.h"

namespace presk::train {
namespace {

using testing_support::TempFolder;

using testing::error_code;

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

ir::Program compile_tiny(bool training) {
  lang::FrontendOptions options;
  options.dims = {{"T", 8}};
  options.entry = "loss";
  options.training = training;
  return lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/gpt_tiny.psk"),
                       options);
}

// A corpus of 11 characters (gpt_tiny's V) with a pattern to learn, as windows of 8 tokens.
class TinyTraining : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string text;
    for (int i = 0; i < 300; ++i)
      text += i % 3 == 0 ? "the cat sat on a mat. " : "a cat on the mat sat. ";
    PrepareOptions prepare;
    prepare.window = 8;
    prepare.out_dir = folder_.path();
    prepare.command = "test";
    prepare_corpus(CorpusText{text, "test"}, prepare);
  }

  TrainOptions options(const std::string& out, const std::string& realization = "f32") const {
    TrainOptions o;
    o.program = compile_tiny(true);
    o.evaluation = compile_tiny(false);
    o.realization_argument = realization;
    o.data = folder_.file("train.safetensors");
    o.validation = folder_.file("val.safetensors");
    o.validation_windows = 16;
    o.steps = 20;
    o.batch = 4;
    o.schedule = Schedule{ScheduleKind::cosine, 1e-2, 1e-3, 4, 20};
    o.seed = 1;
    o.out = folder_.file(out);
    o.threads = 1;
    return o;
  }

  TempFolder folder_;
};

TEST_F(TinyTraining, SameRunTwiceGivesByteIdenticalCheckpoints) {
  run_training(options("a.safetensors"));
  run_training(options("b.safetensors"));
  TrainOptions threaded = options("c.safetensors");
  threaded.threads = 3;
  run_training(threaded);
  const std::string a = bytes_of(folder_.file("a.safetensors"));
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, bytes_of(folder_.file("b.safetensors")));
  EXPECT_EQ(a, bytes_of(folder_.file("c.safetensors")));
}

TEST_F(TinyTraining, ResumedRunEqualsTheUninterruptedOne) {
  const TrainResult whole = run_training(options("whole.safetensors"));
  TrainOptions first = options("part.safetensors");
  first.until = 10;
  const TrainResult head = run_training(first);
  EXPECT_EQ(head.last_step, 10);
  TrainOptions second = options("part.safetensors");
  second.resume = folder_.file("part.safetensors");
  const TrainResult tail = run_training(second);
  EXPECT_EQ(tail.first_step, 10);
  EXPECT_EQ(tail.last_step, 20);
  EXPECT_EQ(bytes_of(folder_.file("whole.safetensors")),
            bytes_of(folder_.file("part.safetensors")));
  ASSERT_EQ(whole.steps.size(), 20u);
  ASSERT_EQ(tail.steps.size(), 10u);
  EXPECT_EQ(whole.steps[15].loss, tail.steps[5].loss);
}

// --remat store (E.fwd, E.bwd) gives the bits of recompute (E.vjp), dropout masks included.
TEST_F(TinyTraining, StoreAndRecomputeGiveTheSameCheckpoint) {
  run_training(options("recompute.safetensors"));
  TrainOptions store = options("store.safetensors");
  store.remat = ad::Remat::Store;
  run_training(store);
  EXPECT_EQ(bytes_of(folder_.file("recompute.safetensors")),
            bytes_of(folder_.file("store.safetensors")));
}

TEST_F(TinyTraining, LossGoesDownUnderF32AndF64) {
  for (const char* realization : {"f32", "f64"}) {
    TrainOptions o = options(std::string(realization) + ".safetensors", realization);
    o.every = 10;
    const TrainResult result = run_training(o);
    ASSERT_EQ(result.validations.size(), 3u) << realization;  // steps 0, 10, 20
    EXPECT_LT(result.validations.back().loss, result.validations.front().loss - 0.3) << realization;
    EXPECT_LT(result.steps.back().loss, result.steps.front().loss) << realization;
  }
}

TEST_F(TinyTraining, RefusesWhatItCannotTrain) {
  TrainOptions typed = options("x.safetensors", "@" + folder_.file("r.json"));
  std::ofstream(folder_.file("r.json"))
      << R"({"format": 1, "default": "f32", "params": {"head": "bf16"}})";
  EXPECT_EQ(error_code([&] { run_training(typed); }), "E1001");
  std::ofstream(folder_.file("s.json"))
      << R"({"format": 1, "default": "f32", "sites": {"LayerNorm.apply/%0": "f64"}})";
  TrainOptions store = options("x.safetensors", "@" + folder_.file("s.json"));
  store.remat = ad::Remat::Store;
  EXPECT_EQ(error_code([&] { run_training(store); }), "E1002");
  TrainOptions beyond = options("x.safetensors");
  beyond.until = 30;
  EXPECT_EQ(error_code([&] { run_training(beyond); }), "E1008");
  // A checkpoint of the program with other dropout rates is another program's.
  TrainOptions first = options("d.safetensors");
  first.until = 2;
  run_training(first);
  TrainOptions other = options("d.safetensors");
  set_dropout_rates(other.program, 0.3);
  other.resume = folder_.file("d.safetensors");
  EXPECT_EQ(error_code([&] { run_training(other); }), "E1005");
  TrainOptions seed = options("d.safetensors");
  seed.seed = 2;
  seed.resume = folder_.file("d.safetensors");
  EXPECT_EQ(error_code([&] { run_training(seed); }), "E1007");
}

}  // namespace
}  // namespace presk::train
