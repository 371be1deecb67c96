// Input files without end: /dev/zero given as a program, a realization, an envelope, a text for
// `data prepare` and a `presk explain` file. Each read stops at its kind's cap (E0016) instead of
// growing without bound: the command ends by itself with the coded error, where an endless read
// would be killed (60 s, or 4 GiB of memory) and fail the check. No wall-clock assertion: a
// loaded machine must not fail the suite.
#include "hostile/hostile.h"

namespace presk::hostile {
namespace {

class InputSize : public HostileTest {
 protected:
  // The command's result under the bounds an endless read would hit (killed after 60 s or at
  // 4 GiB: then it has no E0016 and expect_refused fails).
  presk::testing::CommandResult timed(const std::string& arguments) const {
    return bounded_presk(arguments, 60, 4L << 20);
  }
};

TEST_F(InputSize, EndlessProgramIsRefused) {
  expect_refused(timed("run /dev/zero --entry loss --exact"), 1, "E0016", "source file `/dev/zero`");
  expect_refused(timed("dump --stage ast /dev/zero"), 1, "E0016", "/dev/zero");
}

TEST_F(InputSize, EndlessRealizationIsRefused) {
  expect_refused(timed("run '" + example("mse.psk") + "' --entry mse --dim N=4 --realize @/dev/zero"), 1, "E0016",
                 "realization file `/dev/zero`");
}

TEST_F(InputSize, EndlessEnvelopeIsRefused) {
  expect_refused(timed("check --precision /dev/zero '" + example("mse.psk") + "' --realize f32"), 1, "E0016",
                 "envelope file `/dev/zero`");
}

TEST_F(InputSize, EndlessTextIsRefused) {
  expect_refused(timed("data prepare --text /dev/zero --window 8 --out-dir out"), 1, "E0016", "text file `/dev/zero`");
  EXPECT_FALSE(std::filesystem::exists(path("out/train.safetensors")));
}

TEST_F(InputSize, EndlessExplainFileIsRefused) {
  expect_refused(timed("explain /dev/zero"), 1, "E0016", "/dev/zero");
}

TEST_F(InputSize, FileOverTheCapIsRefusedBeforeReading) {
  write("big.psk", std::string((16 << 20) + 1, '#'));
  expect_refused(timed("run big.psk --entry loss --exact"), 1, "E0016", "16 MiB");
}

}  // namespace
}  // namespace presk::hostile
