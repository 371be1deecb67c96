// Outputs that would destroy an input or replace what is not a file: `train --out X
// --weights-out X`, `--out` equal to `--data` (also through another spelling or a hard link),
// `calibrate --out` equal to the program, `data prepare` over its own text, `--out` onto a FIFO,
// a symlink or a device node, and a symlink planted at the temporary's name. Each is refused
// before any work and leaves every file as it was.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>

#include "hostile/hostile.h"
#include "support/safetensors.h"
#include "support/tensor.h"

namespace presk::hostile {
namespace {

class Outputs : public HostileTest {
 protected:
  // Data for mse.psk at N = 4: `prediction` and `target`, F64.
  void write_mse_data(const std::string& name) {
    Tensor prediction(ElementType::f64, {4}), target(ElementType::f64, {4});
    for (int i = 0; i < 4; ++i) {
      prediction.set(i, 0.5 * i);
      target.set(i, 1.0 - i);
    }
    write_safetensors(path(name), {{"prediction", prediction}, {"target", target}});
    watch(name);
  }

  std::string run_mse(const std::string& arguments) const {
    return "run '" + example("mse.psk") + "' --entry mse --dim N=4 --exact " + arguments;
  }

  // Token windows of 8 + 1 characters in data/ (train.safetensors, val.safetensors).
  void prepare_windows() {
    std::string text;
    for (int i = 0; i < 40; ++i) text += i % 2 ? "the cat sat. " : "a mat. ";
    write("text.txt", text);
    auto prepared = presk("data prepare --text text.txt --window 8 --out-dir data");
    ASSERT_EQ(prepared.status, 0) << prepared.output;
    watch("data/train.safetensors");
    watch("data/val.safetensors");
  }

  std::string train(const std::string& arguments) const {
    return "train '" + example("gpt_tiny.psk") +
           "' --dim T=8 --data data/train.safetensors --batch 1 --steps 1 --threads 1 " + arguments;
  }
};

TEST_F(Outputs, TrainOutEqualToWeightsOutIsRefused) {
  prepare_windows();
  write("c.safetensors", "an earlier file");
  expect_refused(presk(train("--out c.safetensors --weights-out c.safetensors")), 1, "E0140", "--weights-out");
}

TEST_F(Outputs, TrainOutEqualToDataIsRefused) {
  prepare_windows();
  expect_refused(presk(train("--out ./data/train.safetensors")), 1, "E0140", "--data");
  expect_refused(presk(train("--out c.safetensors --val data/val.safetensors --weights-out data/val.safetensors")),
                 1, "E0140", "--val");
}

TEST_F(Outputs, TrainWeightsOutEqualToResumeIsRefused) {
  prepare_windows();
  ASSERT_EQ(presk(train("--out c.safetensors")).status, 0);
  watch("c.safetensors");
  expect_refused(presk(train("--resume c.safetensors --out d.safetensors --weights-out c.safetensors")), 1,
                 "E0140", "--resume");
  // The run continuing in place is no alias: --out may be the --resume checkpoint.
  auto in_place = presk(train("--resume c.safetensors --out c.safetensors"));
  EXPECT_EQ(in_place.status, 0) << in_place.output;
}

TEST_F(Outputs, CalibrateOutEqualToProgramIsRefused) {
  write("mse.psk", file_bytes(example("mse.psk")));
  expect_refused(presk("calibrate --precision mse.psk --entry mse --dim N=4 --samples 1 --bits 64 --out mse.psk"),
                 1, "E0140", "the program");
}

TEST_F(Outputs, RunOutEqualToDataIsRefusedThroughAnyName) {
  write_mse_data("d.safetensors");
  expect_refused(presk(run_mse("--data d.safetensors --out d.safetensors")), 1, "E0140", "--data");
  expect_refused(presk(run_mse("--data d.safetensors --out ../" + std::filesystem::path(folder_.path()).filename().string() +
                               "/d.safetensors")),
                 1, "E0140");
  ASSERT_EQ(::link(path("d.safetensors").c_str(), path("hard.safetensors").c_str()), 0);
  expect_refused(presk(run_mse("--data d.safetensors --out hard.safetensors")), 1, "E0140");
  expect_refused(presk("run '" + example("mse.psk") + "' --entry mse --dim N=4 --realize f32 --grad "
                       "--data d.safetensors --out d.safetensors"),
                 1, "E0140");
}

TEST_F(Outputs, RunOutOntoRealizationIsRefused) {
  write("r.json", R"({"format": 1, "default": "f32"})");
  expect_refused(presk("run '" + example("mse.psk") + "' --entry mse --dim N=4 --realize @r.json --out r.json"), 1,
                 "E0140", "--realize");
}

TEST_F(Outputs, DataPrepareOverItsTextIsRefused) {
  std::filesystem::create_directory(path("out"));
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the cat sat. ";
  write("out/val.safetensors", text);
  expect_refused(presk("data prepare --text out/val.safetensors --window 8 --out-dir out"), 1, "E0140", "--text");
}

TEST_F(Outputs, OutOntoAFifoIsRefused) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  expect_refused(presk(run_mse("--out fifo")), 1, "E0141", "FIFO");
  EXPECT_TRUE(std::filesystem::is_fifo(path("fifo")));
}

TEST_F(Outputs, OutOntoASymlinkIsRefused) {
  write("target.safetensors", "the link's target");
  std::filesystem::create_symlink("target.safetensors", path("link"));
  expect_refused(presk(run_mse("--out link")), 1, "E0141", "symbolic link");
  EXPECT_TRUE(std::filesystem::is_symlink(path("link")));
}

TEST_F(Outputs, TemporaryThatIsASymlinkIsNotWrittenThrough) {
  write("victim.txt", "a file the command never names");
  std::filesystem::create_symlink("victim.txt", path("out.safetensors.presk-tmp"));
  expect_refused(presk(run_mse("--out out.safetensors")), 1, "E0141", "the temporary");
  EXPECT_FALSE(std::filesystem::exists(path("out.safetensors")));
}

TEST_F(Outputs, OutOntoADeviceIsRefused) {
  if (::mknod(path("null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "cannot make a device node here";
  expect_refused(presk(run_mse("--out null")), 1, "E0141", "device");
  struct stat status {};
  ASSERT_EQ(::lstat(path("null").c_str(), &status), 0);
  EXPECT_TRUE(S_ISCHR(status.st_mode));
}

}  // namespace
}  // namespace presk::hostile
