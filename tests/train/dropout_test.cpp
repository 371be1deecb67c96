// Dropout's training mode: the mask's definition, the reference and the native executor
// drawing the same masks (through calls and the layers of a fold), the vjp's adjoint applying
// the forward's mask (against central differences at 512 bits), and the identity outside
// training.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <map>
#include <memory>

#include "ad/vjp.h"
#include "exec/native/executor.h"
#include "exec/native/realization.h"
#include "exec/reference/interpreter.h"
#include "lang/frontend.h"
#include "support/dropout_mask.h"
#include "support/random.h"

namespace presk {
namespace {

using reference::MpfrArith;
using MpfrValue = reference::Value<MpfrArith>;

// A stack of layers, each with a dropout, and one more dropout around the fold: the masks
// depend on the site, the module path and the layer index.
constexpr const char* kProgram = R"(
const D = 4
dim T
module Layer {
  param w : R[D, D] = normal(0.5)
  fn apply(x : R[T, D]) -> R[T, D] = x + dropout(tanh(x @ w), 0.3)
}
module Net {
  param layers : stack{3} Layer
  param out : R[D] = normal(1)
  fn apply(x : R[T, D]) -> R[T, D] = dropout(fold layers over x, 0.25) * out
}
entry f(p : Net, x : R[T, D]) -> R[T, D] = p.apply(x)
entry loss(p : Net, x : R[T, D]) -> R {
  let y = p.apply(x)
  sum(y * y)
}
)";

ir::Program compile(bool training, const std::string& entry) {
  lang::FrontendOptions options;
  options.dims = {{"T", 6}};
  options.entry = entry;
  options.training = training;
  return lang::compile(std::make_shared<SourceFile>(SourceFile{"dropout.psk", kProgram}), options);
}

struct Inputs {
  reference::ParameterStore parameters;
  std::vector<reference::HostTensor> arguments;
};

Inputs inputs_of(const ir::Program& program, const std::string& entry) {
  Inputs inputs{reference::synthesize_parameters(program, 11, 1), {}};
  inputs.arguments = reference::synthesize_inputs(*program.find_function(entry), 11, 0);
  return inputs;
}

std::vector<double> run_reference(const ir::Program& program, const std::string& entry,
                                  const Inputs& in, std::optional<random::DropoutKey> key,
                                  long bits = 256) {
  MpfrArith arith(bits);
  std::vector<MpfrValue> arguments;
  for (const reference::HostTensor& host : in.arguments)
    arguments.push_back(reference::to_value(arith, host));
  reference::RunOptions options;
  options.bits = bits;
  options.training = key;
  std::vector<MpfrValue> results = reference::run_function<MpfrArith>(
      program, *program.find_function(entry), in.parameters, arguments, options);
  std::vector<double> out;
  for (int64_t i = 0; i < results.at(0).size(); ++i)
    out.push_back(mpfr_get_d(results[0].real(i), MPFR_RNDN));
  return out;
}

std::vector<double> run_native(const ir::Program& program, const std::string& entry, const Inputs& in,
                               std::optional<random::DropoutKey> key,
                               const exec::native::Realization& realization =
                                   exec::native::uniform_realization(exec::native::RealType::f64)) {
  using namespace exec::native;
  PreparedParameters parameters = prepare_parameters(
      program, realization, [&](const std::string& path) { return in.parameters.find(path); });
  std::vector<Tensor> inputs;
  for (const reference::HostTensor& host : in.arguments) {
    Tensor tensor(ElementType::f64, host.type.shape);
    for (size_t i = 0; i < host.reals.size(); ++i) tensor.set(i, host.reals[i]);
    inputs.push_back(std::move(tensor));
  }
  ExecuteOptions options;
  options.training = key;
  std::vector<Tensor> results = execute(program, entry, realization, inputs, parameters, options);
  std::vector<double> out;
  for (uint64_t i = 0; i < results.at(0).element_count(); ++i) out.push_back(results[0].get(i));
  return out;
}

TEST(DropoutMask, IsTheDocumentedFunctionOfItsKey) {
  const random::DropoutKey key{7, 3, 2};
  const std::vector<int64_t> layers = {1};
  const random::DropoutMask mask(key, "Layer.apply/%4", "layers", layers, 0.3);
  EXPECT_EQ(random::dropout_stream_name("Layer.apply/%4", "layers", layers),
            "Layer.apply/%4@layers[1]");
  const uint64_t step_key = random::word(7, random::stream_of("dropout.step"), 3);
  const uint64_t window_key = random::word(step_key, random::stream_of("dropout.window"), 2);
  const uint64_t stream = random::stream_of("Layer.apply/%4@layers[1]");
  int kept = 0;
  for (uint64_t i = 0; i < 4000; ++i) {
    const bool expected = random::uniform01(random::word(window_key, stream, i)) >= 0.3;
    ASSERT_EQ(mask.keep(i), expected) << i;
    kept += expected;
  }
  EXPECT_NEAR(kept / 4000.0, 0.7, 0.03);
  EXPECT_TRUE(random::DropoutMask(key, "x", "", {}, 0.0).keep(5));  // rate 0 keeps everything
}

// keep_run (the native executor's) is keep over a run, at rates where the integer threshold
// meets rounding edges: 0, the smallest, just below 1, 1, a rate between two multiples of
// 2⁻⁵³, and NaN (keep nothing, as uniform01 ≥ NaN is false).
// keep_run (vectorized where the CPU allows) and keep against the definition of
// support/dropout_mask.h, term by term: uniform01(word(k_window, stream, i)) ≥ rate.
TEST(DropoutMask, RunsAgreeWithKeep) {
  const random::DropoutKey key{11, 5, 1};
  const uint64_t step_key = random::word(key.seed, random::stream_of("dropout.step"), key.step);
  const uint64_t window_key = random::word(step_key, random::stream_of("dropout.window"), key.window);
  const uint64_t stream = random::stream_of(random::dropout_stream_name("Layer.apply/%4", "", {}));
  for (double rate : {0.0, 0x1p-60, 0.1, 0.3, 0.5, 1 - 0x1p-53, 1.0, 0.1 + 0x1p-56, -0.5, 1.5, std::nan("")}) {
    const random::DropoutMask mask(key, "Layer.apply/%4", "", {}, rate);
    std::vector<uint8_t> kept(5003);
    mask.keep_run(37, kept.size(), kept.data());
    for (size_t j = 0; j < kept.size(); ++j) {
      const bool defined = random::uniform01(random::word(window_key, stream, 37 + j)) >= rate;
      ASSERT_EQ(kept[j] != 0, defined) << "rate " << rate << " element " << 37 + j;
      ASSERT_EQ(mask.keep(37 + j), defined) << "rate " << rate << " element " << 37 + j;
    }
  }
}

// A dropout's id is its function and let index in the training compile (not its site name,
// which does not count dropouts); the vjp's forward copy and its adjoint carry the same id.
TEST(Dropout, LoweringGivesEachDropoutItsLetIndexAsId) {
  const ir::Program program = compile(true, "f");
  const ir::Function* layer = program.find_function("Layer.apply");
  ASSERT_NE(layer, nullptr);
  int found = 0;
  for (uint32_t i = 0; i < layer->lets.size(); ++i) {
    if (layer->lets[i].op != ir::Op::dropout) continue;
    EXPECT_EQ(layer->lets[i].attrs.path, "Layer.apply/%" + std::to_string(i));
    EXPECT_EQ(layer->site_name(i), "Layer.apply/dropout0");
    ++found;
  }
  EXPECT_EQ(found, 1);
  const ir::Program with_vjps = ad::add_vjps(compile(true, "loss"));
  std::vector<std::string> ids;
  for (const ir::Let& let : with_vjps.find_function("Layer.apply.vjp")->lets) {
    if (let.op == ir::Op::dropout) ids.push_back(let.attrs.path);
  }
  const std::string id = "Layer.apply/%" + std::to_string(layer->lets.size() - 2);  // x + dropout(…)
  EXPECT_EQ(ids, (std::vector<std::string>{id, id}));
}

// Every site of the inference compile names, in the training compile, a let of the same
// primitive and type (dropouts, which only training emits, are named apart), for the entry's
// functions and for their vjps alike.
TEST(Dropout, SiteNamesAreTheSameInInferenceAndTraining) {
  for (const char* entry : {"f", "loss"}) {
    const ir::Program inference = ad::add_vjps(compile(false, entry));
    const ir::Program training = ad::add_vjps(compile(true, entry));
    std::map<std::string, const ir::Let*> trained;
    int dropouts = 0;
    for (const ir::Function& function : training.functions) {
      for (uint32_t i = 0; i < function.lets.size(); ++i) {
        trained[function.site_name(i)] = &function.lets[i];
        if (function.lets[i].op == ir::Op::dropout) {
          ++dropouts;
          EXPECT_NE(function.site_name(i).find("/dropout"), std::string::npos) << function.site_name(i);
        }
      }
    }
    EXPECT_GE(dropouts, 2) << entry;
    size_t sites = 0;
    for (const ir::Function& function : inference.functions) {
      ASSERT_NE(training.find_function(function.name), nullptr) << function.name;
      for (uint32_t i = 0; i < function.lets.size(); ++i) {
        auto found = trained.find(function.site_name(i));
        ASSERT_NE(found, trained.end()) << function.site_name(i);
        EXPECT_EQ(found->second->op, function.lets[i].op) << function.site_name(i);
        EXPECT_EQ(found->second->type, function.lets[i].type) << function.site_name(i);
        ++sites;
      }
    }
    EXPECT_EQ(sites + static_cast<size_t>(dropouts), trained.size()) << entry;
  }
}

// A realization that types every site of the inference compile loads in the training compile
// and, with dropout the identity there (no key), gives the inference run's bits: a dropout the
// realization does not name takes its operand's type.
TEST(Dropout, AnInferenceRealizationRunsTheSameInTraining) {
  using namespace exec::native;
  const ir::Program inference = compile(false, "f");
  const ir::Program training = compile(true, "f");
  Realization mixed = uniform_realization(RealType::f64);
  int k = 0;
  for (const ir::Function& function : inference.functions) {
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      if (!is_typable(function.lets[i])) continue;
      mixed.sites[function.site_name(i)] = (++k % 3 == 0) ? RealType::bf16 : (k % 3 == 1 ? RealType::f32 : RealType::f64);
    }
  }
  ASSERT_GE(k, 4);
  EXPECT_NO_THROW(validate_realization(mixed, training));
  const Inputs in = inputs_of(inference, "f");
  EXPECT_EQ(run_native(inference, "f", in, std::nullopt, mixed), run_native(training, "f", in, std::nullopt, mixed));
}

// In a training run, a dropout the realization does not name divides in its operand's type: the
// same bits as naming that type, other bits than naming another.
TEST(Dropout, AnUnnamedDropoutTakesItsOperandsType) {
  using namespace exec::native;
  const ir::Program training = compile(true, "f");
  const ir::Function& layer = *training.find_function("Layer.apply");
  std::string tanh_site;
  for (uint32_t i = 0; i < layer.lets.size(); ++i) {
    if (layer.lets[i].op == ir::Op::tanh) tanh_site = layer.site_name(i);
  }
  ASSERT_FALSE(tanh_site.empty());
  Realization unnamed = uniform_realization(RealType::f64);
  unnamed.sites[tanh_site] = RealType::f32;
  Realization as_f32 = unnamed, as_f64 = unnamed;
  as_f32.sites["Layer.apply/dropout0"] = RealType::f32;
  as_f64.sites["Layer.apply/dropout0"] = RealType::f64;
  const Inputs in = inputs_of(training, "f");
  const random::DropoutKey key{3, 1, 0};
  const std::vector<double> y = run_native(training, "f", in, key, unnamed);
  EXPECT_EQ(y, run_native(training, "f", in, key, as_f32));
  EXPECT_NE(y, run_native(training, "f", in, key, as_f64));
}

// The reference (256 bits, rounded to binary64) and the native executor in f64 drop the same
// elements; the kept values agree to rounding.
TEST(Dropout, NativeF64AndReferenceDrawTheSameMasks) {
  const ir::Program program = compile(true, "f");
  const Inputs in = inputs_of(program, "f");
  for (const random::DropoutKey key : {random::DropoutKey{1, 0, 0}, random::DropoutKey{1, 5, 3}}) {
    const std::vector<double> exact = run_reference(program, "f", in, key);
    const std::vector<double> native = run_native(program, "f", in, key);
    ASSERT_EQ(exact.size(), native.size());
    int zeros = 0;
    for (size_t i = 0; i < exact.size(); ++i) {
      ASSERT_EQ(exact[i] == 0, native[i] == 0) << "element " << i;
      zeros += exact[i] == 0;
      EXPECT_NEAR(native[i], exact[i], 1e-13 * (1 + std::fabs(exact[i]))) << "element " << i;
    }
    EXPECT_GT(zeros, 0);
  }
  // Another window or step draws other masks; without a key dropout is the identity.
  const std::vector<double> a = run_reference(program, "f", in, random::DropoutKey{1, 0, 0});
  EXPECT_NE(a, run_reference(program, "f", in, random::DropoutKey{1, 0, 1}));
  EXPECT_NE(a, run_reference(program, "f", in, random::DropoutKey{1, 1, 0}));
  EXPECT_EQ(run_reference(program, "f", in, std::nullopt),
            run_reference(compile(false, "f"), "f", in, std::nullopt));
  const std::vector<double> identity = run_native(program, "f", in, std::nullopt);
  const std::vector<double> inference = run_native(compile(false, "f"), "f", in, std::nullopt);
  EXPECT_EQ(identity, inference);
}

// A kept element is x / (1 − rate), a dropped one +0, with the mask of the let's id.
TEST(Dropout, KeptElementsAreScaled) {
  const char* text = "dim T\nentry g(x : R[T]) -> R[T] = dropout(x, 0.375)\n";
  lang::FrontendOptions options;
  options.dims = {{"T", 64}};
  options.training = true;
  const ir::Program program =
      lang::compile(std::make_shared<SourceFile>(SourceFile{"g.psk", text}), options);
  const ir::Let& let = program.find_function("g")->lets.back();
  ASSERT_EQ(let.op, ir::Op::dropout);
  const Inputs in = inputs_of(program, "g");
  const random::DropoutKey key{4, 9, 1};
  const random::DropoutMask mask(key, let.attrs.path, "", {}, 0.375);
  const std::vector<double> native = run_native(program, "g", in, key);
  const std::vector<double> exact = run_reference(program, "g", in, key, 53);
  for (size_t i = 0; i < native.size(); ++i) {
    const double x = in.arguments[0].reals[i];
    const double expected = mask.keep(i) ? x / 0.625 : 0.0;
    EXPECT_EQ(native[i], expected) << i;
    EXPECT_EQ(exact[i], expected) << i;
  }
}

}  // namespace
}  // namespace presk
