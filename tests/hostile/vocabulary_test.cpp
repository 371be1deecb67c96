// Token data whose vocabulary the program cannot read: a token file recording more characters
// than the program's `const V`, a token outside [0, V) in a file without that record (in --data
// or --val), weights trained on another vocabulary (--init, --resume), and weights whose shapes
// say another V. `train` refuses each before step 0, naming the file, the window and the const.
#include <vector>

#include "hostile/hostile.h"
#include "support/safetensors.h"
#include "support/tensor.h"

namespace presk::hostile {
namespace {

class Vocabulary : public HostileTest {
 protected:
  // Token windows of 8 + 1 characters of `text` repeated, in `folder`/.
  void prepare(const std::string& folder, const std::string& text) {
    std::string repeated;
    for (int i = 0; i < 40; ++i) repeated += text;
    write(folder + ".txt", repeated);
    auto prepared = presk("data prepare --text " + folder + ".txt --window 8 --out-dir " + folder);
    ASSERT_EQ(prepared.status, 0) << prepared.output;
    watch(folder + "/train.safetensors");
    watch(folder + "/val.safetensors");
  }

  // A token file of windows 8 + 1 without metadata, each token 1, but `token` at window 2, position 5.
  void write_windows(const std::string& name, int32_t token) {
    Tensor tokens(ElementType::i32, {4, 9});
    for (uint64_t i = 0; i < tokens.element_count(); ++i) tokens.set_integer(i, i == 2 * 9 + 5 ? token : 1);
    write_safetensors(path(name), {{"tokens", tokens}});
    watch(name);
  }

  std::string train(const std::string& data, const std::string& arguments) const {
    return "train '" + example("gpt_tiny.psk") + "' --dim T=8 --data " + data +
           " --batch 1 --steps 1 --threads 1 " + arguments;
  }
};

// gpt_tiny.psk reads V = 11 tokens; this text has 20 distinct characters.
TEST_F(Vocabulary, RecordedVocabularyLargerThanTheConstIsRefused) {
  prepare("wide", "the quick brown fox jumps. ");
  auto result = presk(train("wide/train.safetensors", "--out c.safetensors"));
  expect_refused(result, 1, "E1032", "wide/train.safetensors");
  EXPECT_NE(result.output.find("V = 11"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("--const V="), std::string::npos) << result.output;
  EXPECT_FALSE(std::filesystem::exists(path("c.safetensors")));
}

TEST_F(Vocabulary, TokenOutsideTheConstIsRefusedNamingItsWindow) {
  write_windows("w.safetensors", 11);
  auto result = presk(train("w.safetensors", "--out c.safetensors"));
  expect_refused(result, 1, "E1032", "window 2 holds token 11 at position 5");
  EXPECT_NE(result.output.find("--const V=12"), std::string::npos) << result.output;
  write_windows("negative.safetensors", -3);
  expect_refused(presk(train("negative.safetensors", "--out c.safetensors")), 1, "E1032", "token -3");
  EXPECT_FALSE(std::filesystem::exists(path("c.safetensors")));
}

TEST_F(Vocabulary, TokenOutsideTheConstInValidationIsRefused) {
  prepare("data", "the cat sat. a mat. ");
  write_windows("v.safetensors", 40);
  expect_refused(presk(train("data/train.safetensors", "--val v.safetensors --out c.safetensors")), 1, "E1032",
                 "--val `v.safetensors`: window 2");
}

TEST_F(Vocabulary, CheckpointsAndWeightsRecordTheVocabulary) {
  prepare("data", "the cat sat. a mat. ");
  ASSERT_EQ(presk(train("data/train.safetensors", "--out c.safetensors --weights-out w.safetensors")).status, 0);
  const SafetensorsFile data = SafetensorsFile::open(path("data/train.safetensors"));
  for (const char* name : {"c.safetensors", "w.safetensors"}) {
    const SafetensorsFile file = SafetensorsFile::open(path(name));
    EXPECT_EQ(file.metadata().at("vocabulary"), data.metadata().at("vocabulary")) << name;
    EXPECT_EQ(file.metadata().at("vocabulary_size"), data.metadata().at("vocabulary_size")) << name;
  }
}

TEST_F(Vocabulary, WeightsOfAnotherVocabularyAreRefused) {
  prepare("data", "the cat sat. a mat. ");
  prepare("other", "a dog ran. ");  // 9 characters: fits V = 11, other tokens
  ASSERT_EQ(presk(train("data/train.safetensors", "--out c.safetensors --weights-out w.safetensors")).status, 0);
  watch("c.safetensors");
  watch("w.safetensors");
  expect_refused(presk(train("other/train.safetensors", "--init w.safetensors --out d.safetensors")), 1, "E1033",
                 "w.safetensors");
  expect_refused(presk(train("other/train.safetensors", "--resume c.safetensors --out d.safetensors")), 1, "E1033",
                 "c.safetensors");
  EXPECT_FALSE(std::filesystem::exists(path("d.safetensors")));
}

TEST_F(Vocabulary, WeightsOfAnotherConstSayWhichValueFits) {
  prepare("data", "the cat sat. a mat. ");
  ASSERT_EQ(presk(train("data/train.safetensors", "--const V=12 --weights-out w.safetensors --out c.safetensors")).status, 0);
  watch("w.safetensors");
  expect_refused(presk(train("data/train.safetensors", "--init w.safetensors --out d.safetensors")), 1, "E1006",
                 "the file fits const V = 12");
  expect_refused(presk("run '" + example("gpt_tiny.psk") + "' --entry loss --dim T=8 --weights w.safetensors --exact"),
                 1, "E0512", "--const V=12");
}

}  // namespace
}  // namespace presk::hostile
