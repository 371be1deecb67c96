// Weights files that change under presk: a memory-mapped file truncated after it was opened
// and validated (the mechanism, and a training run whose --data is cut under it). Every read
// past the new end is E0101 naming the file, never SIGBUS; a read within what is left still
// works, and a second fault is caught like the first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "hostile/hostile.h"
#include "support/diagnostics.h"
#include "support/guarded_read.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"
#include "support/tensor.h"

namespace presk::hostile {
namespace {

// The code `read` raises, or "none".
template <class Read>
std::string code_of(Read read) {
  try {
    read();
  } catch (const UserError& error) {
    return error.code() + (std::string(error.what()).find("shrank") != std::string::npos ? "" : " (no `shrank`)");
  }
  return "none";
}

class ShrunkWeights : public ::testing::Test {
 protected:
  // A 4 MiB `w` and a small `b` after it, mapped, then the file cut to one page.
  void SetUp() override {
    Tensor small(ElementType::f32, {4});
    for (int i = 0; i < 4; ++i) small.set(i, i + 0.5);
    Tensor big(ElementType::f32, {1024, 1024});
    big.set(big.element_count() - 1, -1.0);
    write_safetensors(path_, {{"a", small}, {"w", big}});
    file_.emplace(SafetensorsFile::open(path_));
    ASSERT_TRUE(file_->is_memory_mapped());
    ASSERT_EQ(::truncate(path_.c_str(), 4096), 0);
  }

  testing_support::TempFolder folder_;
  std::string path_ = folder_.file("w.safetensors");
  std::optional<SafetensorsFile> file_;
};

TEST_F(ShrunkWeights, ReadPastTheNewEndIsE0101) {
  EXPECT_EQ(code_of([&] { file_->read("w"); }), "E0101");
  EXPECT_EQ(code_of([&] { file_->read("w"); }), "E0101") << "the second fault";
  EXPECT_EQ(file_->read("a").get(3), 3.5) << "the bytes still in the file read as before";
}

TEST_F(ShrunkWeights, ElementPastTheNewEndIsE0101) {
  const SafetensorsEntry& w = file_->entry("w");
  EXPECT_EQ(code_of([&] { file_->value(w, w.element_count - 1); }), "E0101");
  EXPECT_EQ(file_->value(w, 0), 0.0);
}

TEST_F(ShrunkWeights, CopyPastTheNewEndIsE0101) {
  const SafetensorsEntry& w = file_->entry("w");
  std::vector<std::byte> bytes(w.end - w.begin);
  EXPECT_EQ(code_of([&] { file_->copy_bytes(w, 0, bytes.data(), bytes.size()); }), "E0101");
}

TEST(GuardedCopy, CopiesWhatIsMapped) {
  const std::string text = "bytes in memory";
  std::string copy(text.size(), '\0');
  EXPECT_TRUE(guarded_copy(copy.data(), text.data(), text.size()));
  EXPECT_EQ(copy, text);
}

// A SIGBUS that no guarded copy expects keeps its usual effect (the process dies of it).
TEST(GuardedCopy, OtherBusErrorsStillKill) {
  std::string copy(4, '\0');
  ASSERT_TRUE(guarded_copy(copy.data(), "abcd", 4));  // the handler is installed
  EXPECT_EXIT(std::raise(SIGBUS), ::testing::KilledBySignal(SIGBUS), "");
}

// A training run whose mapped --data (2 MiB of windows) is cut to one page while it steps.
class ShrunkData : public HostileTest {};

TEST_F(ShrunkData, TrainingOnDataCutUnderItIsE0101) {
  Tensor tokens(ElementType::i32, {60000, 9});
  for (uint64_t i = 0; i < tokens.element_count(); ++i) tokens.set_integer(i, int64_t(i % 11));
  write_safetensors(path("d.safetensors"), {{"tokens", tokens}});
  const std::string train = "timeout 300 " + presk::testing::presk() + " train '" + example("gpt_tiny.psk") +
                            "' --dim T=8 --data d.safetensors --batch 1 --steps 100000000 --threads 1 --out c.safetensors";
  auto result = presk::testing::run_command("cd '" + folder_.path() + "' && { " + train +
                                            " & sleep 2; truncate -s 4096 d.safetensors; wait $!; }");
  EXPECT_EQ(result.status, 1) << result.output.substr(0, 2000);
  EXPECT_EQ(error_code_in(result.output), "E0101") << result.output.substr(0, 2000);
  EXPECT_NE(result.output.find("d.safetensors"), std::string::npos) << result.output.substr(0, 2000);
}

}  // namespace
}  // namespace presk::hostile
