// The bundled examples through the front end and the reference interpreter at small dims,
// and parameters read from safetensors files of the right and of wrong layouts.
#include <arb.h>

#include <cmath>
#include <filesystem>

#include "exec/reference/weights.h"
#include "lang/frontend.h"
#include "reference/support.h"
#include "support/safetensors.h"

namespace presk::testing {
namespace {

using reference::MpfrArith;

ir::Program compile_example(const std::string& name, std::vector<lang::Binding> dims,
                            const std::string& entry) {
  lang::FrontendOptions options;
  options.dims = std::move(dims);
  options.entry = entry;
  return lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + name), options);
}

template <class A = MpfrArith>
std::vector<reference::Value<A>> run_example(const ir::Program& program, const std::string& entry,
                                             const reference::ParameterStore& params, int threads = 1,
                                             long bits = 256, int64_t token_range = 0) {
  const ir::Function& function = reference::find_entry(program, entry);
  int64_t range = token_range;
  for (const ir::Type& type : function.argument_types) {
    if (type.kind == ir::ElemKind::Int && range == 0) range = reference::default_token_range(program);
  }
  reference::RunOptions options;
  options.threads = threads;
  options.bits = bits;
  return run<A>(program, reference::synthesize_inputs(function, 3, range), options, params, entry);
}

// Every entry of every example (examples/ and examples/solver/) in ball mode at 128 bits: each
// ball contains the MPFR value at 512 bits (within 2⁻⁴⁰⁰ of the exact one), and its radius is a
// useful bound (below 2⁻⁶⁰ of max(|value|, 1)).
TEST(ReferenceExamples, EveryExampleEntryInBallModeContainsTheMpfrValue) {
  struct Case { const char* file; const char* entry; std::vector<lang::Binding> dims; int64_t token_range = 0; };
  const std::vector<Case> cases = {
      {"mse.psk", "mse", {{"N", 5}}},
      {"layernorm.psk", "normalize", {{"T", 3}}},
      {"rmsnorm.psk", "normalize", {{"T", 3}}},
      {"softmax.psk", "probabilities", {{"T", 2}}},
      {"softmax.psk", "log_probabilities", {{"T", 2}}},
      {"softmax.psk", "by_hand", {{"T", 2}}},
      {"mlp.psk", "loss", {{"B", 3}}},
      {"mlp.psk", "logits", {{"B", 3}}},
      {"gpt_tiny.psk", "loss", {{"T", 4}}},
      {"gpt_tiny.psk", "logits", {{"T", 4}}},
      {"gpt.psk", "loss", {{"T", 3}}},
      {"gpt.psk", "logits", {{"T", 2}}},
      {"solver/equal_terms.psk", "total", {{"T", 2}}},
      {"solver/offset_deviation.psk", "deviation", {{"T", 2}}, 16},
      {"solver/unshifted_softmax.psk", "expected", {{"T", 2}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.file) + " " + c.entry);
    ir::Program program = compile_example(c.file, c.dims, c.entry);
    const reference::ParameterStore params = reference::synthesize_parameters(program, 1, 1);
    std::vector<MpfrValue> exact = run_example<MpfrArith>(program, c.entry, params, 2, 512, c.token_range);
    std::vector<reference::Value<reference::BallArith>> balls =
        run_example<reference::BallArith>(program, c.entry, params, 2, 128, c.token_range);
    ASSERT_EQ(exact.size(), 1u);
    ASSERT_EQ(balls[0].size(), exact[0].size());
    for (int64_t i = 0; i < exact[0].size(); ++i) {
      const arb_struct* ball = balls[0].real(i);
      EXPECT_TRUE(mpfr_number_p(exact[0].real(i)) && arb_contains_mpfr(ball, exact[0].real(i))) << "element " << i;
      const double scale = std::max(1.0, std::fabs(mpfr_get_d(exact[0].real(i), MPFR_RNDN)));
      EXPECT_LT(mag_get_d(arb_radref(ball)), 0x1p-60 * scale) << "element " << i;
    }
  }
}

TEST(ReferenceExamples, EveryExampleEntryRunsAtSmallDims) {
  struct Case { const char* file; const char* entry; std::vector<lang::Binding> dims; };
  std::vector<Case> cases = {
      {"mse.psk", "mse", {{"N", 5}}},
      {"layernorm.psk", "normalize", {{"T", 3}}},
      {"rmsnorm.psk", "normalize", {{"T", 3}}},
      {"softmax.psk", "by_hand", {{"T", 2}}},
      {"mlp.psk", "loss", {{"B", 3}}},
      {"gpt_tiny.psk", "logits", {{"T", 4}}},
  };
  for (const Case& c : cases) {
    ir::Program program = compile_example(c.file, c.dims, c.entry);
    std::vector<MpfrValue> out = run_example(program, c.entry, reference::synthesize_parameters(program, 1, 1));
    ASSERT_EQ(out.size(), 1u) << c.file;
    for (int64_t i = 0; i < out[0].size(); ++i) {
      EXPECT_TRUE(mpfr_number_p(out[0].real(i))) << c.file << " element " << i;
    }
  }
}

TEST(ReferenceExamples, TinyGptWithAZeroHeadHasLossLogV) {
  ir::Program program = compile_example("gpt_tiny.psk", {{"T", 4}}, "loss");
  auto params = reference::synthesize_parameters(program, 5, 2);
  std::vector<MpfrValue> one = run_example(program, "loss", params, 1);
  std::vector<MpfrValue> two = run_example(program, "loss", params, 2);
  EXPECT_TRUE(mpfr_equal_p(one[0].real(0), two[0].real(0)));
  Exact log_v;
  mpfr_set_ui(log_v, 11, MPFR_RNDN);
  mpfr_log(log_v, log_v, MPFR_RNDN);
  EXPECT_LE(relative_error_log2(one[0].real(0), log_v), -250);
}

// The mlp's parameters as a safetensors file, with one tensor changed by `edit`.
std::string write_mlp_weights(const ir::Program& program, const std::string& name,
                              const std::function<void(std::vector<Tensor>&, std::vector<std::string>&)>& edit) {
  std::vector<Tensor> tensors;
  std::vector<std::string> names;
  for (const ir::Param& param : program.params) {
    Tensor tensor(ElementType::f32, param.type.shape);
    for (int64_t i = 0; i < param.type.element_count(); ++i) tensor.set(i, 0.001 * static_cast<double>(i % 17));
    tensors.push_back(std::move(tensor));
    names.push_back(param.path);
  }
  edit(tensors, names);
  std::vector<NamedTensor> named;
  for (size_t i = 0; i < tensors.size(); ++i) named.push_back({names[i], tensors[i]});
  std::string path = (std::filesystem::temp_directory_path() / ("presk_ref_" + name + ".safetensors")).string();
  write_safetensors(path, named);
  return path;
}

std::string load_code(const ir::Program& program, const std::string& path) {
  try {
    reference::load_weights(program, path);
  } catch (const UserError& e) {
    return e.code();
  }
  return "none";
}

TEST(ReferenceWeights, ALayoutOtherThanTheProgramsIsRefused) {
  ir::Program program = compile_example("mlp.psk", {{"B", 2}}, "logits");
  auto same = [](std::vector<Tensor>&, std::vector<std::string>&) {};
  std::string good = write_mlp_weights(program, "good", same);
  reference::ParameterStore params = reference::load_weights(program, good);
  EXPECT_EQ((*params.find("out"))[3], static_cast<double>(0.003f));
  EXPECT_EQ(run_example(program, "logits", params).size(), 1u);

  EXPECT_EQ(load_code(program, write_mlp_weights(program, "missing", [](auto& t, auto& n) {
              t.pop_back();
              n.pop_back();
            })), "E0510");
  EXPECT_EQ(load_code(program, write_mlp_weights(program, "extra", [](auto& t, auto& n) {
              t.emplace_back(ElementType::f32, std::vector<int64_t>{2});
              n.push_back("hidden.extra");
            })), "E0511");
  EXPECT_EQ(load_code(program, write_mlp_weights(program, "transposed", [&](auto& t, auto& n) {
              for (size_t i = 0; i < n.size(); ++i) {
                if (n[i] == "hidden.w") t[i] = Tensor(ElementType::f32, {32, 16});
              }
            })), "E0512");
  EXPECT_EQ(load_code(program, write_mlp_weights(program, "dtype", [&](auto& t, auto& n) {
              for (size_t i = 0; i < n.size(); ++i) {
                if (n[i] == "out") t[i] = Tensor(ElementType::i32, t[i].shape());
              }
            })), "E0513");
}

}  // namespace
}  // namespace presk::testing
