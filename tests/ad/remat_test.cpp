// The fwd/bwd split (src/ad/split.h): on layernorm, mlp and gpt_tiny with non-zero
// parameters, E.fwd then E.bwd gives exactly E.vjp's values, under --remat store and
// --remat recompute, on the exact reference (every bit of every MPFR number) and on the
// native executor in f64 (every bit); store keeps the activations and recomputes nothing;
// the printed form round-trips; the user errors E0810–E0813.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstring>
#include <random>

#include "ad/gradient_check.h"
#include "ad/split.h"
#include "ad/vjp.h"
#include "common/error_code.h"
#include "common/run_command.h"
#include "exec/native/executor.h"
#include "exec/reference/interpreter.h"
#include "ir/equality.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "lang/frontend.h"

namespace presk::testing {
namespace {

using reference::MpfrArith;
using Value = reference::Value<MpfrArith>;
constexpr long kBits = 200;
constexpr uint64_t kSeed = 11;

struct Example {
  const char* file;
  const char* entry;
  std::vector<lang::Binding> dims;
};

const std::vector<Example>& examples() {
  static const std::vector<Example> all = {
      {"layernorm.psk", "normalize", {{"T", 4}}},
      {"mlp.psk", "loss", {{"B", 3}}},
      {"gpt_tiny.psk", "loss", {{"T", 4}}},
      {"gpt_tiny.psk", "logits", {{"T", 4}}},
  };
  return all;
}

std::string name_of(const Example& example) {
  return std::string(example.file) + " " + example.entry;
}

ir::Program compile(const Example& example) {
  lang::FrontendOptions options;
  options.dims = example.dims;
  options.entry = example.entry;
  return lang::compile(
      lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + example.file), options);
}

ir::Program split(const Example& example, ad::Remat remat) {
  return ad::add_fwd_bwd(ad::add_vjps(compile(example)), example.entry, remat);
}

// The seeded parameters moved off their initial values (zero heads and biases included).
reference::ParameterStore nonzero_parameters(const ir::Program& program) {
  reference::ParameterStore synthesized = reference::synthesize_parameters(program, kSeed, 1);
  reference::ParameterStore params;
  std::mt19937_64 random(kSeed);
  for (const ir::Param& param : program.params) {
    std::vector<double> values = *synthesized.find(param.path);
    for (double& x : values) x += static_cast<double>(static_cast<int64_t>(random() % 17) - 8) / 64;
    params.set(param.path, std::move(values));
  }
  return params;
}

// The entry's arguments, then its cotangent (1 for a scalar, seeded values otherwise).
std::vector<reference::HostTensor> inputs_and_cotangent(const ir::Program& program,
                                                        const std::string& entry) {
  const ir::Function& function = *program.find_function(entry);
  int64_t range = 0;
  for (const ir::Type& type : function.argument_types)
    if (type.kind == ir::ElemKind::Int) range = reference::default_token_range(program);
  std::vector<reference::HostTensor> hosts = reference::synthesize_inputs(function, kSeed, range);
  ir::Type type = function.type_of(function.results.at(0));
  reference::HostTensor cotangent{type, {}, {}};
  std::mt19937_64 random(kSeed + 1);
  for (int64_t i = 0; i < type.element_count(); ++i)
    cotangent.reals.push_back(
        type.rank() == 0 ? 1.0
                         : static_cast<double>(static_cast<int64_t>(random() % 33) - 16) / 16);
  hosts.push_back(std::move(cotangent));
  return hosts;
}

std::vector<Value> run(const ir::Program& program, const std::string& function,
                       const reference::ParameterStore& params,
                       const std::vector<const Value*>& arguments) {
  MpfrArith arith(kBits);
  std::vector<Value> copies;
  for (const Value* argument : arguments) copies.push_back(reference::copy_value(arith, *argument));
  reference::RunOptions options;
  options.bits = kBits;
  return reference::run_function<MpfrArith>(program, *program.find_function(function), params,
                                            copies, options);
}

// "" when a and b hold the same numbers bit for bit (sign of zero included); else where not.
std::string difference(const Value& a, const Value& b) {
  if (a.kind != b.kind || a.shape != b.shape) return "types differ";
  if (!a.is_real()) return a.integers == b.integers ? "" : "integers differ";
  for (int64_t i = 0; i < a.size(); ++i) {
    bool same =
        (mpfr_nan_p(a.real(i)) && mpfr_nan_p(b.real(i))) ||
        (mpfr_equal_p(a.real(i), b.real(i)) && mpfr_signbit(a.real(i)) == mpfr_signbit(b.real(i)));
    if (!same) return "element " + std::to_string(i) + " differs";
  }
  return "";
}

// E.vjp's results, and E.bwd's on everything E.fwd returned, on the reference.
struct ReferenceRun {
  std::vector<Value> vjp;
  std::vector<Value> fwd;
  std::vector<Value> bwd;
};

ReferenceRun run_reference(const ir::Program& program, const std::string& entry) {
  reference::ParameterStore params = nonzero_parameters(program);
  MpfrArith arith(kBits);
  std::vector<Value> inputs;
  for (const reference::HostTensor& host : inputs_and_cotangent(program, entry))
    inputs.push_back(reference::to_value(arith, host));
  std::vector<const Value*> vjp_arguments, fwd_arguments;
  for (const Value& input : inputs) vjp_arguments.push_back(&input);
  fwd_arguments.assign(vjp_arguments.begin(), vjp_arguments.end() - 1);
  ReferenceRun out;
  out.vjp = run(program, ad::vjp_name(entry), params, vjp_arguments);
  out.fwd = run(program, ad::fwd_name(entry), params, fwd_arguments);
  std::vector<const Value*> bwd_arguments;
  for (const Value& value : out.fwd) bwd_arguments.push_back(&value);
  bwd_arguments.push_back(&inputs.back());
  out.bwd = run(program, ad::bwd_name(entry), params, bwd_arguments);
  return out;
}

void expect_same(const std::vector<Value>& a, const std::vector<Value>& b,
                 const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  ASSERT_FALSE(a.empty()) << what;
  bool nonzero = false;  // (the check is not vacuous: the gradients are not all 0)
  for (const Value& value : a)
    for (int64_t i = 0; i < value.size() && value.is_real(); ++i)
      nonzero |= !mpfr_zero_p(value.real(i));
  EXPECT_TRUE(nonzero) << what;
  for (size_t k = 0; k < a.size(); ++k)
    EXPECT_EQ(difference(a[k], b[k]), "") << what << ", result " << k;
}

TEST(Remat, FwdThenBwdIsTheVjpOnTheReferenceInBothModes) {
  for (const Example& example : examples()) {
    std::vector<std::vector<Value>> gradients;
    for (ad::Remat remat : {ad::Remat::Store, ad::Remat::Recompute}) {
      std::string what = name_of(example) + " --remat " + ad::remat_name(remat);
      ir::Program program = split(example, remat);
      ReferenceRun result = run_reference(program, example.entry);
      expect_same(result.vjp, result.bwd, what + ": bwd against vjp");
      gradients.push_back(std::move(result.bwd));
    }
    expect_same(gradients[0], gradients[1], name_of(example) + ": store against recompute");
  }
}

TEST(Remat, TheValueOfFwdIsTheEntrysValue) {
  for (const Example& example : examples()) {
    ir::Program program = split(example, ad::Remat::Store);
    reference::ParameterStore params = nonzero_parameters(program);
    MpfrArith arith(kBits);
    std::vector<Value> inputs;
    std::vector<reference::HostTensor> hosts = inputs_and_cotangent(program, example.entry);
    hosts.pop_back();
    for (const reference::HostTensor& host : hosts)
      inputs.push_back(reference::to_value(arith, host));
    std::vector<const Value*> arguments;
    for (const Value& input : inputs) arguments.push_back(&input);
    std::vector<Value> forward = run(program, example.entry, params, arguments);
    std::vector<Value> fwd = run(program, ad::fwd_name(example.entry), params, arguments);
    EXPECT_EQ(difference(forward.at(0), fwd.at(0)), "") << name_of(example);
  }
}

bool is_forward_work(const ir::Let& let) {
  return let.op == ir::Op::fold || let.op == ir::Op::fold_trace ||
         (ir::is_calling(let.op) && let.attrs.callee.ends_with(".vjp"));
}

TEST(Remat, StoreKeepsTheActivationsAndTheBackwardRecomputesNothing) {
  Example gpt{"gpt_tiny.psk", "loss", {{"T", 4}}};
  ir::Program program = split(gpt, ad::Remat::Store);
  ASSERT_NE(program.find_function("Block.apply.fwd_layer"), nullptr);
  ASSERT_NE(program.find_function("Block.apply.bwd_layer"), nullptr);
  for (const ir::Function& function : program.functions) {
    bool backward = function.name.ends_with(".bwd") || function.name.ends_with(".bwd_layer");
    bool forward = function.name.ends_with(".fwd") || function.name.ends_with(".fwd_layer");
    for (uint32_t j = 0; j < function.lets.size(); ++j) {
      const ir::Let& let = function.lets[j];
      if (backward) {
        EXPECT_FALSE(is_forward_work(let)) << function.site_name(j) << " recomputes";
      }
      if (forward) {
        EXPECT_NE(let.op, ir::Op::fold_vjp) << function.site_name(j);
      }
      if (forward && ir::is_calling(let.op)) {
        bool split = let.attrs.callee.ends_with(".fwd") || let.attrs.callee.ends_with(".fwd_layer");
        EXPECT_TRUE(split) << function.site_name(j) << " calls " << let.attrs.callee;
      }
    }
  }
  // The fold keeps one row per layer: [L, n] with n the layer's output and residuals.
  const ir::Function& fwd = *program.find_function("loss.fwd");
  EXPECT_GT(fwd.results.size(), 3u);
  EXPECT_EQ(fwd.result_names.at(0), "value");
}

TEST(Remat, RecomputeKeepsOnlyTheArguments) {
  Example gpt{"gpt_tiny.psk", "loss", {{"T", 4}}};
  ir::Program program = split(gpt, ad::Remat::Recompute);
  const ir::Function& entry = *program.find_function("loss");
  const ir::Function& fwd = *program.find_function("loss.fwd");
  const ir::Function& bwd = *program.find_function("loss.bwd");
  const ir::Function& vjp = *program.find_function("loss.vjp");
  ASSERT_EQ(fwd.results.size(), 1 + entry.argument_types.size());
  for (uint32_t i = 0; i < entry.argument_types.size(); ++i)
    EXPECT_EQ(fwd.results[1 + i], ir::ValueRef::argument(i));
  EXPECT_EQ(bwd.argument_types.size(), 2 + entry.argument_types.size());
  EXPECT_EQ(bwd.result_names, vjp.result_names);
  EXPECT_EQ(program.find_function("Block.apply.fwd"), nullptr);
  EXPECT_TRUE(fwd.is_entry && bwd.is_entry);
}

TEST(Remat, ThePrintedFormRoundTrips) {
  for (const Example& example : examples()) {
    for (ad::Remat remat : {ad::Remat::Store, ad::Remat::Recompute}) {
      ir::Program program = split(example, remat);
      std::string text = ir::print_program(program);
      ir::Program parsed = parse_ir(text);
      EXPECT_EQ(ir::program_difference(parsed, program), "")
          << name_of(example) << " " << ad::remat_name(remat);
      EXPECT_EQ(ir::print_program(parsed), text)
          << name_of(example) << " " << ad::remat_name(remat);
    }
  }
}

using testing::error_code;

TEST(Remat, UserErrors) {
  ir::Program integer =
      parse_ir("entry f ($0 : Z[3]) -> R[3] {\n  %0 = convert($0) : R[3]\n  return %0\n}\n");
  EXPECT_EQ(error_code([&] { ad::add_fwd_bwd(ad::add_vjps(integer), "f", ad::Remat::Store); }),
            "E0810");
  ir::Program program = ad::add_vjps(compile(examples()[0]));
  EXPECT_EQ(error_code([&] { ad::add_fwd_bwd(program, "nope", ad::Remat::Store); }), "E0811");
  EXPECT_EQ(error_code([&] { ad::add_fwd_bwd(program, "LayerNorm.apply", ad::Remat::Store); }),
            "E0811");
  EXPECT_EQ(error_code([] { ad::parse_remat("keep"); }), "E0812");
  EXPECT_EQ(ad::parse_remat("store"), ad::Remat::Store);
  EXPECT_EQ(ad::parse_remat("recompute"), ad::Remat::Recompute);
  ir::Program once = ad::add_fwd_bwd(program, "normalize", ad::Remat::Recompute);
  EXPECT_EQ(error_code([&] { ad::add_fwd_bwd(once, "normalize", ad::Remat::Store); }), "E0813");
}

// The native executor in f64 (one realization for every site): E.vjp, E.fwd, E.bwd.
struct NativeRun {
  std::vector<Tensor> vjp;
  std::vector<Tensor> bwd;
};

NativeRun run_native(const ir::Program& program, const std::string& entry) {
  namespace native = exec::native;
  reference::ParameterStore store = nonzero_parameters(program);
  native::Realization realization = native::uniform_realization(native::RealType::f64);
  native::PreparedParameters params = native::prepare_parameters(
      program, realization, [&](const std::string& path) { return store.find(path); });
  std::vector<Tensor> inputs;
  for (const reference::HostTensor& host : inputs_and_cotangent(program, entry)) {
    bool real = host.type.kind == ir::ElemKind::Real;
    Tensor tensor(real ? ElementType::f64 : ElementType::i64, host.type.shape);
    for (size_t i = 0; i < host.reals.size(); ++i) tensor.set(i, host.reals[i]);
    for (size_t i = 0; i < host.integers.size(); ++i) tensor.set_integer(i, host.integers[i]);
    inputs.push_back(std::move(tensor));
  }
  NativeRun out;
  out.vjp = native::execute(program, ad::vjp_name(entry), realization, inputs, params);
  Tensor cotangent = inputs.back();
  inputs.pop_back();
  std::vector<Tensor> saved =
      native::execute(program, ad::fwd_name(entry), realization, inputs, params);
  saved.push_back(std::move(cotangent));
  out.bwd = native::execute(program, ad::bwd_name(entry), realization, saved, params);
  return out;
}

void expect_same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b,
                      const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  ASSERT_FALSE(a.empty()) << what;
  double magnitude = 0;  // (the check is not vacuous: the gradients are not all 0)
  for (const Tensor& tensor : a)
    for (uint64_t i = 0; i < tensor.element_count(); ++i) magnitude += std::fabs(tensor.get(i));
  EXPECT_GT(magnitude, 0) << what;
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].type(), b[k].type()) << what << ", result " << k;
    ASSERT_EQ(a[k].shape(), b[k].shape()) << what << ", result " << k;
    EXPECT_EQ(std::memcmp(a[k].data(), b[k].data(), a[k].byte_size()), 0)
        << what << ", result " << k;
  }
}

TEST(Remat, StoreAndRecomputeGiveIdenticalBitsNativeF64) {
  for (const Example& example : examples()) {
    std::vector<std::vector<Tensor>> gradients;
    for (ad::Remat remat : {ad::Remat::Store, ad::Remat::Recompute}) {
      std::string what = name_of(example) + " --remat " + ad::remat_name(remat);
      NativeRun result = run_native(split(example, remat), example.entry);
      expect_same_bits(result.vjp, result.bwd, what + ": bwd against vjp");
      gradients.push_back(std::move(result.bwd));
    }
    expect_same_bits(gradients[0], gradients[1], name_of(example) + ": store against recompute");
  }
}

TEST(Remat, DumpShowsTheSplit) {
  const std::string gpt = " dump --stage vjp " + std::string(PRESK_SOURCE_DIR) +
                          "/examples/gpt_tiny.psk --dim T=4 --entry loss";
  CommandResult store = run_command(presk() + gpt + " --remat store", false);
  ASSERT_EQ(store.status, 0) << store.output;
  for (const char* expected : {"entry loss.fwd ", "entry loss.bwd ", "fn Block.apply.fwd_layer ",
                               "fn Block.apply.bwd_layer ", "fold_trace @Block.apply.fwd_layer"})
    EXPECT_NE(store.output.find(expected), std::string::npos) << expected;
  CommandResult recompute = run_command(presk() + gpt + " --remat recompute", false);
  ASSERT_EQ(recompute.status, 0) << recompute.output;
  EXPECT_NE(recompute.output.find("entry loss.bwd "), std::string::npos);
  EXPECT_EQ(recompute.output.find("fn Block.apply.fwd "), std::string::npos);
  EXPECT_NE(run_command(presk() + gpt + " --remat keep").output.find("E0812"), std::string::npos);
  std::string ir =
      " dump --stage ir " + std::string(PRESK_SOURCE_DIR) + "/examples/gpt_tiny.psk --dim T=4";
  EXPECT_NE(run_command(presk() + ir + " --remat store").output.find("E0814"), std::string::npos);
}

}  // namespace
}  // namespace presk::testing
