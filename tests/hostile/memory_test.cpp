// Runs that cannot fit in memory: a dim that makes the GPT's attention scores hundreds of
// gigabytes (run, bench, calibrate, the sensitivity dump and train), and more samples than memory can hold the results of. Each is
// refused before anything is allocated (E0017, saying how much it needs and how much there
// is), in seconds, instead of being killed by the kernel; runs of normal size are not.
#include <chrono>

#include "hostile/hostile.h"

namespace presk::hostile {
namespace {

class Memory : public HostileTest {
 protected:
  // The command's result, killed after 60 s or at 8 GiB (a run the estimate lets through fails
  // the test with E0002 or status 124 instead of exhausting the machine).
  presk::testing::CommandResult timed(const std::string& arguments) const {
    const auto start = std::chrono::steady_clock::now();
    auto result = bounded_presk(arguments, 60, 8L << 20);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30.0) << arguments;
    return result;
  }

  void expect_memory_refused(const presk::testing::CommandResult& result) const {
    expect_refused(result, 1, "E0017", "available");
    EXPECT_NE(result.output.find("needs about"), std::string::npos) << result.output;
  }
};

TEST_F(Memory, DimBeyondMemoryIsRefused) {
  const std::string gpt = "'" + example("gpt.psk") + "' --entry loss --dim T=40000";
  expect_memory_refused(timed("run " + gpt + " --exact"));
  expect_memory_refused(timed("run " + gpt + " --realize f32"));
  expect_memory_refused(timed("bench " + gpt + " --realize f32"));
  expect_memory_refused(timed("dump --stage sensitivity " + gpt));
  expect_memory_refused(timed("calibrate --precision " + gpt + " --samples 2 --bits 64 --out e.json"));
  EXPECT_FALSE(std::filesystem::exists(path("e.json")));
}

TEST_F(Memory, SamplesBeyondMemoryAreRefused) {
  const std::string mse = "run '" + example("mse.psk") + "' --entry mse --dim N=4 ";
  expect_memory_refused(timed(mse + "--exact --samples 3000000000"));
  expect_memory_refused(timed(mse + "--realize f32 --samples 1099511627776"));
  auto normal = timed(mse + "--exact --samples 1000");
  EXPECT_EQ(normal.status, 0) << normal.output.substr(0, 2000);
}

TEST_F(Memory, TrainingDimBeyondMemoryIsRefused) {
  std::string text;
  while (text.size() < 500000) text += "In the beginning God created the heaven and the earth. ";
  write("text.txt", text);
  auto prepared = presk("data prepare --text text.txt --window 40000 --split 0.5 --out-dir data");
  ASSERT_EQ(prepared.status, 0) << prepared.output;
  watch("data/train.safetensors");
  auto result = timed("train '" + example("gpt.psk") +
                      "' --dim T=40000 --data data/train.safetensors --batch 1 --steps 1 --threads 1 --out c.safetensors");
  expect_memory_refused(result);
  EXPECT_FALSE(std::filesystem::exists(path("c.safetensors")));
}

}  // namespace
}  // namespace presk::hostile
