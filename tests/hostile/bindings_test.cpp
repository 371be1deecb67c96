// `--const`/`--dim` bindings: a name bound twice to different values is refused (the last one
// used to win silently), the same value twice is one binding, and a malformed binding is a
// usage error (exit status 2) in every command, as under `presk dump`.
#include <nlohmann/json.hpp>

#include "hostile/hostile.h"

namespace presk::hostile {
namespace {

class Bindings : public HostileTest {
 protected:
  void SetUp() override {
    write("mse.psk", file_bytes(example("mse.psk")));
    write("mlp.psk", file_bytes(example("mlp.psk")));
  }
};

TEST_F(Bindings, NameBoundTwiceToDifferentValuesIsRefused) {
  expect_refused(presk("dump --stage ir mlp.psk --dim B=2 --const W=8 --const W=16"), 2, "E0015", "`W`");
  expect_refused(presk("run mse.psk --entry mse --dim N=4 --dim N=5 --exact"), 2, "E0015", "`N`");
  expect_refused(presk("calibrate --precision mse.psk --entry mse --dim N=4 --dim N=3 --samples 1 --bits 64 --out e.json"),
                 2, "E0015");
  EXPECT_FALSE(std::filesystem::exists(path("e.json")));
}

TEST_F(Bindings, SameValueTwiceIsOneBinding) {
  auto once = presk("run mse.psk --entry mse --dim N=4 --exact --json");
  auto twice = presk("run mse.psk --entry mse --dim N=4 --dim N=04 --exact --json");
  ASSERT_EQ(twice.status, 0) << twice.output;
  nlohmann::json first = nlohmann::json::parse(once.output), second = nlohmann::json::parse(twice.output);
  EXPECT_EQ(second["outputs"], first["outputs"]);
}

TEST_F(Bindings, MalformedBindingIsAUsageErrorInEveryCommand) {
  expect_refused(presk("dump --stage ir mse.psk --dim N=x"), 2, "E0005");
  expect_refused(presk("run mse.psk --entry mse --dim N=x --exact"), 2, "E0005");
  expect_refused(presk("run mse.psk --entry mse --dim N=4 --const =3 --realize f32"), 2, "E0004");
  expect_refused(presk("bench mse.psk --entry mse --dim N=99999999999999999999 --realize f32"), 2, "E0005");
  expect_refused(presk("calibrate --precision mlp.psk --entry loss --dim B=2 --const W --samples 1 --bits 64 --out e.json"), 2,
                 "E0004");
  expect_refused(presk("train mse.psk --entry mse --dim N=x --data d.safetensors --steps 1 --out c.safetensors"), 2,
                 "E0005");
}

}  // namespace
}  // namespace presk::hostile
