// Checkpoints with hostile metadata: a `step` of "abc", "-1" or 20 digits (a count presk cannot
// hold), and a generator state that disagrees with the step or the seed. `train --resume`
// refuses each with a coded error and leaves the checkpoint as it was.
#include <vector>

#include "hostile/hostile.h"
#include "support/safetensors.h"

namespace presk::hostile {
namespace {

class Checkpoint : public HostileTest {
 protected:
  void SetUp() override {
    std::string text;
    for (int i = 0; i < 40; ++i) text += i % 2 ? "the cat sat. " : "a mat. ";
    write("text.txt", text);
    ASSERT_EQ(presk("data prepare --text text.txt --window 8 --out-dir data").status, 0);
    auto trained = presk(train("--out good.safetensors"));
    ASSERT_EQ(trained.status, 0) << trained.output;
  }

  std::string train(const std::string& arguments) const {
    return "train '" + example("gpt_tiny.psk") +
           "' --dim T=8 --data data/train.safetensors --batch 1 --steps 1 --threads 1 " + arguments;
  }

  // good.safetensors with metadata `key` set to `value`, written as bad.safetensors.
  void write_with(const std::map<std::string, std::string>& changes) {
    SafetensorsFile good = SafetensorsFile::open(path("good.safetensors"));
    std::vector<Tensor> tensors;
    for (const SafetensorsEntry& entry : good.entries()) tensors.push_back(good.read(entry));
    std::vector<NamedTensor> named;
    for (size_t i = 0; i < tensors.size(); ++i) named.push_back({good.entries()[i].name, tensors[i]});
    std::map<std::string, std::string> metadata = good.metadata();
    for (const auto& [key, value] : changes) metadata[key] = value;
    write_safetensors(path("bad.safetensors"), named, metadata);
    watch("bad.safetensors");
  }

  void expect_resume_refused(const std::string& code, const std::string& named) {
    expect_refused(presk(train("--resume bad.safetensors --out next.safetensors")), 1, code, named);
    EXPECT_FALSE(std::filesystem::exists(path("next.safetensors")));
  }
};

TEST_F(Checkpoint, StepThatIsNotACountIsRefused) {
  for (const char* step : {"abc", "-1", "12345678901234567890", "", "1e3"}) {
    SCOPED_TRACE(step);
    write_with({{"step", step}});
    expect_resume_refused("E1030", "`step`");
  }
}

TEST_F(Checkpoint, GeneratorThatIsNotTheCounterIsRefused) {
  for (const char* generator : {"[]", "{\"kind\": \"counter\"}", "{\"kind\": \"counter\", \"kind\": 1}", "not json"}) {
    SCOPED_TRACE(generator);
    write_with({{"generator", generator}});
    expect_resume_refused(std::string(generator).find("\"kind\": 1") != std::string::npos ? "E0011" : "E1030",
                          "generator");
  }
}

TEST_F(Checkpoint, StepThatDisagreesWithTheGeneratorIsRefused) {
  write_with({{"step", "0"}});  // the generator says next_step 1
  expect_resume_refused("E1031", "step 0");
  write_with({{"generator", R"({"kind": "counter", "seed": 0, "next_step": 7})"}});
  expect_resume_refused("E1031", "next step 7");
  write_with({{"generator", R"({"kind": "counter", "seed": 5, "next_step": 1})"}});
  expect_resume_refused("E1031", "seed 5");
}

}  // namespace
}  // namespace presk::hostile
