// The decode step (docs/language.md, "State"): examples/gpt.psk's `decode` entry, run token by
// token with its caches handed back, gives row t of the full-sequence `logits` entry bit for
// bit under every realization below, writes its caches in place (no copy per token), and the
// exact reference's decode equals its full-sequence logits.
#include <gtest/gtest.h>

#include <cstring>

#include "common/nonzero_parameters.h"
#include "ad/vjp.h"
#include "exec/native/executor.h"
#include "exec/native/realization.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/parameters.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"
#include "support/random.h"

namespace presk {
namespace {

constexpr int64_t kT = 7, kV = 11;

// examples/gpt.psk with V = 11 and D = 8, or examples/llama.psk as it is, at T = 7.
ir::Program tiny(const std::string& file) {
  auto source = lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + file);
  lang::FrontendOptions options;
  if (file == "gpt.psk") options.consts = {{"V", kV}, {"D", 8}};
  options.dims = {{"T", kT}};
  return lang::compile(source, options);
}

std::vector<int64_t> tokens() { return {3, 1, 4, 1, 5, 9, 2}; }

Tensor integers(std::vector<int64_t> values, std::vector<int64_t> shape) {
  Tensor t(ElementType::i64, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.set_integer(i, values[i]);
  return t;
}

struct Fixture {
  explicit Fixture(const std::string& file) : program(tiny(file)), store(testing::nonzero_parameters(program)) {}
  ir::Program program;
  reference::ParameterStore store;
};

const Fixture& fixture(const std::string& file = "gpt.psk") {
  static const Fixture gpt("gpt.psk"), llama("llama.psk");
  return file == "gpt.psk" ? gpt : llama;
}

// The bytes of row t of a [T, V] output.
std::vector<uint8_t> row_bytes(const Tensor& full, int64_t t) {
  const size_t width = full.byte_size() / static_cast<size_t>(kT);
  const auto* data = reinterpret_cast<const uint8_t*>(full.data());
  return std::vector<uint8_t>(data + static_cast<size_t>(t) * width, data + static_cast<size_t>(t + 1) * width);
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const auto* data = reinterpret_cast<const uint8_t*>(t.data());
  return std::vector<uint8_t>(data, data + t.byte_size());
}

void expect_decode_is_full(const std::string& realize, const std::string& file = "gpt.psk") {
  const Fixture& f = fixture(file);
  using namespace exec::native;
  const Realization realization = load_realization(realize, f.program);
  const PreparedParameters parameters =
      prepare_parameters(f.program, realization, [&](const std::string& path) { return f.store.find(path); });
  const Tensor full = execute(f.program, "logits", realization, {integers(tokens(), {kT})}, parameters).at(0);
  const ir::Function& decode = *f.program.find_function("decode");
  const std::vector<int64_t> cache_shape = decode.argument_types[0].shape;
  Value kc = argument_value(f.program, "decode", 0, Tensor(ElementType::f64, cache_shape), realization);
  Value vc = argument_value(f.program, "decode", 1, Tensor(ElementType::f64, cache_shape), realization);
  const Storage* k_storage = kc.storage.get();
  const uint64_t copies = cache_write_copies();
  for (int64_t t = 0; t < kT; ++t) {
    std::vector<Value> arguments;
    arguments.push_back(std::move(kc));
    arguments.push_back(std::move(vc));
    arguments.push_back(argument_value(f.program, "decode", 2, integers({t}, {}), realization));
    arguments.push_back(argument_value(f.program, "decode", 3, integers({tokens()[static_cast<size_t>(t)]}, {1}), realization));
    std::vector<Value> results = execute_values(f.program, "decode", realization, std::move(arguments), parameters);
    ASSERT_EQ(results.size(), 3u);
    EXPECT_EQ(bytes_of(output_tensor(results[0])), row_bytes(full, t)) << realize << ": position " << t;
    kc = std::move(results[1]);
    vc = std::move(results[2]);
    EXPECT_EQ(kc.storage.get(), k_storage) << "the key cache moved at position " << t;
  }
  EXPECT_EQ(cache_write_copies(), copies) << "a cache_write copied its cache";
}

TEST(Decode, F64RowsAreTheFullLogitsBitForBit) { expect_decode_is_full("f64"); }
TEST(Decode, F32RowsAreTheFullLogitsBitForBit) { expect_decode_is_full("f32"); }
TEST(Decode, Bf16RowsAreTheFullLogitsBitForBit) { expect_decode_is_full("bf16"); }
TEST(Decode, LlamaRowsAreTheFullLogitsBitForBit) {
  for (const char* type : {"f64", "f32", "bf16"}) expect_decode_is_full(type, "llama.psk");
}

// A realization of the kind presk solve writes: parameters in their own types, a default, an
// interleaved sum order, and int8 weights (decode reads them as the full sequence does).
TEST(Decode, MixedRealizationRowsAreTheFullLogitsBitForBit) {
  const std::string path = ::testing::TempDir() + "/decode_mixed.json";
  {
    std::FILE* file = std::fopen(path.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs(R"({"format": 1, "default": "f32", "order": {"kind": "interleaved", "partials": 4},
      "params": {"tok": "bf16", "blocks.attn.wq.w": "bf16", "ln_f.g": "f64"},
      "sites": {"LayerNorm.apply/%4": "f64", "LayerNorm.row/%4": "f64"}})", file);
    std::fclose(file);
  }
  expect_decode_is_full("@" + path);
}

TEST(Decode, Int8WeightsRowsAreTheFullLogitsBitForBit) {
  const std::string path = ::testing::TempDir() + "/decode_int8.json";
  {
    std::FILE* file = std::fopen(path.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs(R"({"format": 1, "default": "f32", "quant": {"head": {"bits": 8, "over": -2},
      "blocks.ff.up.w": {"bits": 8, "over": -2}, "blocks.attn.wv.w": {"bits": 4, "over": -2, "group": 4}}})", file);
    std::fclose(file);
  }
  expect_decode_is_full("@" + path);
}

// A copy of the cache when the caller keeps it: the caller's values stay as they were.
TEST(Decode, AKeptCacheIsNotWritten) {
  const Fixture& f = fixture();
  using namespace exec::native;
  const Realization realization = uniform_realization(RealType::f64);
  const PreparedParameters parameters =
      prepare_parameters(f.program, realization, [&](const std::string& path) { return f.store.find(path); });
  const std::vector<int64_t> cache_shape = f.program.find_function("decode")->argument_types[0].shape;
  const Value kept = argument_value(f.program, "decode", 0, Tensor(ElementType::f64, cache_shape), realization);
  std::vector<Value> arguments{kept, kept, argument_value(f.program, "decode", 2, integers({0}, {}), realization),
                               argument_value(f.program, "decode", 3, integers({3}, {1}), realization)};
  const uint64_t copies = cache_write_copies();
  std::vector<Value> results = execute_values(f.program, "decode", realization, std::move(arguments), parameters);
  EXPECT_EQ(cache_write_copies(), copies + 4) << "each layer's two caches copied once";
  const Tensor kept_tensor = output_tensor(kept);
  for (size_t i = 0; i < kept_tensor.element_count(); ++i) ASSERT_EQ(kept_tensor.get(i), 0.0);
  EXPECT_NE(bytes_of(output_tensor(results[1])), bytes_of(kept_tensor));
}

// cache_write's rows must fit: positions 0 … 2 of a 4-row cache take 2 rows, 3 does not.
TEST(Decode, RowsPastTheCacheAreE1501InBothExecutors) {
  const std::string path = ::testing::TempDir() + "/cache_write.psk";
  {
    std::FILE* file = std::fopen(path.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("entry w(c : R[4, 2], r : R[2, 2], at : Z) -> R[4, 2] = cache_write(c, r, at)\n", file);
    std::fclose(file);
  }
  const ir::Program program = lang::compile(lang::read_source(path), {});
  using namespace exec::native;
  const Realization realization = uniform_realization(RealType::f64);
  const PreparedParameters parameters = prepare_parameters(program, realization, [](const std::string&) { return nullptr; });
  Tensor cache(ElementType::f64, {4, 2}), rows(ElementType::f64, {2, 2});
  for (size_t i = 0; i < 4; ++i) rows.set(i, static_cast<double>(i + 1));
  const Tensor written = execute(program, "w", realization, {cache, rows, integers({2}, {})}, parameters).at(0);
  EXPECT_EQ((std::vector<double>{written.get(4), written.get(7), written.get(3)}), (std::vector<double>{1, 4, 0}));
  for (int64_t at : {3, -1}) {
    try {
      execute(program, "w", realization, {cache, rows, integers({at}, {})}, parameters);
      ADD_FAILURE() << "no error at " << at;
    } catch (const UserError& error) {
      EXPECT_NE(std::string(error.what()).find("E1501"), std::string::npos) << error.what();
    }
  }
  using A = reference::MpfrArith;
  const A arith(64);
  std::vector<reference::Value<A>> arguments;
  arguments.push_back(reference::to_value(arith, reference::HostTensor{ir::Type{ir::ElemKind::Real, {4, 2}, {}, {}}, std::vector<double>(8, 0.0), {}}));
  arguments.push_back(reference::to_value(arith, reference::HostTensor{ir::Type{ir::ElemKind::Real, {2, 2}, {}, {}}, {1, 2, 3, 4}, {}}));
  arguments.push_back(reference::to_value(arith, reference::HostTensor{ir::Type{ir::ElemKind::Int, {}, {}, {}}, {}, {3}}));
  reference::RunOptions options;
  options.bits = 64;
  try {
    reference::run_function<A>(program, *program.find_function("w"), reference::ParameterStore{}, arguments, options);
    ADD_FAILURE() << "no error in the reference";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("E1501"), std::string::npos) << error.what();
  }
}

// A decode step is not differentiable: a coded error, not a crash.
TEST(Decode, AGradientOfDecodeIsE1500) {
  const Fixture& f = fixture();
  try {
    ad::require_differentiable(f.program, "decode");
    FAIL() << "no error";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("E1500"), std::string::npos) << error.what();
  }
  EXPECT_NO_THROW(ad::require_differentiable(f.program, "loss"));
  const ir::Program with_vjps = ad::add_vjps(f.program);
  EXPECT_NE(with_vjps.find_function("loss.vjp"), nullptr);
  EXPECT_EQ(with_vjps.find_function("decode.vjp"), nullptr);
  EXPECT_EQ(with_vjps.find_function("Block.decode.vjp"), nullptr);
}

// The exact reference: decode at every position equals the full-sequence logits' row.
TEST(Decode, ExactDecodeIsTheExactFullLogits) {
  const Fixture& f = fixture();
  using A = reference::MpfrArith;
  const A arith(256);
  reference::RunOptions options;
  auto host_tokens = reference::HostTensor{ir::Type{ir::ElemKind::Int, {kT}, {}, {}}, {}, tokens()};
  std::vector<reference::Value<A>> full_arguments;
  full_arguments.push_back(reference::to_value(arith, host_tokens));
  const auto full = reference::run_function<A>(f.program, *f.program.find_function("logits"), f.store, full_arguments, options);
  const ir::Function& decode = *f.program.find_function("decode");
  const ir::Type cache_type = decode.argument_types[0];
  reference::HostTensor zeros{cache_type, std::vector<double>(static_cast<size_t>(cache_type.element_count()), 0.0), {}};
  std::vector<reference::Value<A>> caches;
  caches.push_back(reference::to_value(arith, zeros));
  caches.push_back(reference::to_value(arith, zeros));
  for (int64_t t = 0; t < kT; ++t) {
    std::vector<reference::Value<A>> arguments;
    arguments.push_back(std::move(caches[0]));
    arguments.push_back(std::move(caches[1]));
    arguments.push_back(reference::to_value(arith, reference::HostTensor{ir::Type{ir::ElemKind::Int, {}, {}, {}}, {}, {t}}));
    arguments.push_back(reference::to_value(
        arith, reference::HostTensor{ir::Type{ir::ElemKind::Int, {1}, {}, {}}, {}, {tokens()[static_cast<size_t>(t)]}}));
    auto results = reference::run_function<A>(f.program, decode, f.store, arguments, options);
    for (int64_t j = 0; j < kV; ++j) {
      ASSERT_EQ(mpfr_cmp(results[0].real(j), full[0].real(t * kV + j)), 0) << "position " << t << ", logit " << j;
    }
    caches.clear();
    caches.push_back(std::move(results[1]));
    caches.push_back(std::move(results[2]));
  }
}

}  // namespace
}  // namespace presk
