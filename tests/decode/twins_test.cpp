// A realization solved on the full-sequence entries, mapped onto the decode entry
// (generate/twins.h): every decode site finds its twin, the twins' types carry over, and the
// decode step under the mapped realization gives row t of `logits` under the original bit for
// bit, for realizations that type every full-sequence site and parameter at random.
#include <gtest/gtest.h>

#include <cstring>

#include "exec/native/executor.h"
#include "exec/native/realization.h"
#include "exec/reference/parameters.h"
#include "generate/twins.h"
#include "lang/frontend.h"
#include "support/random.h"

namespace presk {
namespace {

constexpr int64_t kT = 6;
using exec::native::RealType;

ir::Program tiny(const std::string& file) {
  auto source = lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + file);
  lang::FrontendOptions options;
  options.consts = file == "gpt.psk" ? std::vector<lang::Binding>{{"V", 11}, {"D", 8}}
                                      : std::vector<lang::Binding>{{"V", 32}, {"D", 16}, {"F", 24}};
  options.dims = {{"T", kT}};
  return lang::compile(source, options);
}

// Every typable site of the functions `entry` does not reach through `decode`, and every real
// parameter, typed f64, f32 or bf16 by (seed, name); a quantized matrix or two when asked.
exec::native::Realization random_realization(const ir::Program& program, uint64_t seed, bool quantize) {
  const RealType menu[] = {RealType::f64, RealType::f32, RealType::bf16};
  auto draw = [&](const std::string& name) {
    return menu[random::stream_of(name + std::to_string(seed)) % 3];
  };
  exec::native::Realization r;
  r.origin = "random " + std::to_string(seed);
  r.default_type = draw("default");
  if (seed % 2) r.order = {exec::native::OrderKind::interleaved, 0, 4};
  for (const ir::Function& f : program.functions) {
    const bool decode_side = f.name == "decode" || f.name.find(".row") != std::string::npos ||
                             f.name.find(".decode") != std::string::npos || f.name.find("_at") != std::string::npos;
    for (uint32_t i = 0; i < f.lets.size() && !decode_side; ++i) {
      if (exec::native::is_typable(f.lets[i])) r.sites[f.site_name(i)] = draw(f.site_name(i));
    }
  }
  for (const ir::Param& p : program.params) {
    if (p.type.kind == ir::ElemKind::Real) r.params[p.path] = draw(p.path);
  }
  if (quantize) {
    for (const char* path : {"head", "blocks.ff.up.w", "pos"}) {
      if (program.find_param(path)) r.params.erase(path), r.quant[path] = {8, -2};
    }
  }
  return r;
}

Tensor integers(std::vector<int64_t> values, std::vector<int64_t> shape) {
  Tensor t(ElementType::i64, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.set_integer(i, values[i]);
  return t;
}

std::vector<uint8_t> bytes(const Tensor& t, size_t begin, size_t size) {
  const auto* data = reinterpret_cast<const uint8_t*>(t.data()) + begin;
  return std::vector<uint8_t>(data, data + size);
}

// Decode under the mapped realization (or the original one), row t against `logits` under the
// original: the first position that differs, or -1.
int64_t first_differing_row(const ir::Program& program, const exec::native::Realization& solved, bool map = true) {
  using namespace exec::native;
  const ir::Function& decode = *program.find_function("decode");
  const Realization mapped = map ? generate::realization_for_decode(solved, program, decode) : solved;
  validate_realization(mapped, program);
  const reference::ParameterStore store = reference::synthesize_parameters(program, 3, 1);
  reference::ParameterStore weights;
  for (const ir::Param& p : program.params) {  // nonzero everywhere, so every path counts
    std::vector<double> values = *store.find(p.path);
    for (size_t i = 0; i < values.size(); ++i) values[i] += random::normal(3, random::stream_of(p.path), i, 0.3);
    weights.set(p.path, std::move(values));
  }
  auto find = [&](const std::string& path) { return weights.find(path); };
  const std::vector<int64_t> tokens{3, 1, 4, 1, 5, 9};
  const Tensor full = execute(program, "logits", solved, {integers(tokens, {kT})}, prepare_parameters(program, solved, find)).at(0);
  const PreparedParameters parameters = prepare_parameters(program, mapped, find);
  std::vector<Value> caches;
  for (size_t i = 0; i < 2; ++i) {
    caches.push_back(argument_value(program, "decode", i, Tensor(ElementType::f64, decode.argument_types[i].shape), mapped));
  }
  const size_t width = full.byte_size() / static_cast<size_t>(kT);
  for (int64_t t = 0; t < kT; ++t) {
    std::vector<Value> arguments = std::move(caches);
    arguments.push_back(argument_value(program, "decode", 2, integers({t}, {}), mapped));
    arguments.push_back(argument_value(program, "decode", 3, integers({tokens[static_cast<size_t>(t)]}, {1}), mapped));
    std::vector<Value> results = execute_values(program, "decode", mapped, std::move(arguments), parameters);
    const Tensor row = output_tensor(results[0]);
    if (bytes(row, 0, row.byte_size()) != bytes(full, static_cast<size_t>(t) * width, width)) return t;
    caches.assign(std::make_move_iterator(results.begin() + 1), std::make_move_iterator(results.end()));
  }
  return -1;
}

TEST(DecodeTwins, EveryDecodeSiteOfTheExamplesHasATwin) {
  for (const char* file : {"gpt.psk", "llama.psk"}) {
    const ir::Program program = tiny(file);
    const generate::DecodeTwins twins = generate::find_decode_twins(program, *program.find_function("decode"));
    EXPECT_TRUE(twins.unmatched.empty()) << file << ": " << (twins.unmatched.empty() ? "" : twins.unmatched[0]);
    EXPECT_GT(twins.twins.size(), 20u) << file;
  }
}

TEST(DecodeTwins, GptTwinsAreTheFullSequenceSitesTheyComputeARowOf) {
  const ir::Program program = tiny("gpt.psk");
  const generate::DecodeTwins twins = generate::find_decode_twins(program, *program.find_function("decode"));
  auto sites = [&](const std::string& site) { return twins.twins.at(site).sites; };
  using V = std::vector<std::string>;
  EXPECT_EQ(sites("LayerNorm.row/%4"), V{"LayerNorm.apply/%4"});
  EXPECT_EQ(sites("Linear.row/%1"), V{"Linear.apply/%1"});
  EXPECT_EQ(sites("GPT.decode/%11"), V{"GPT.apply/%7"});  // the logits
  EXPECT_EQ(twins.twins.at("GPT.decode/%3").params, V{"pos"});  // embed(pos, at)
  // The key cache: the rows written (heads' transpose), then the transpose `q @ transpose(k)` reads.
  EXPECT_EQ(sites("SelfAttention.decode/%2"), V{"SelfAttention.heads/%1"});
  EXPECT_EQ(twins.twins.at("SelfAttention.decode/%2").rounded_by, V{"SelfAttention.apply/%6"});
  EXPECT_TRUE(twins.twins.at("SelfAttention.decode/%5").rounded_by.empty());  // the values: read as written
  EXPECT_EQ(sites("SelfAttention.decode/%8"), V{"SelfAttention.apply/%7"});    // q·kᵀ
  EXPECT_EQ(sites("SelfAttention.decode/%14"), V{"SelfAttention.apply/%13"});  // causal_mask_at
}

TEST(DecodeTwins, TheMappedTypesAreTheTwinsTypes) {
  const ir::Program program = tiny("gpt.psk");
  exec::native::Realization solved = exec::native::uniform_realization(RealType::f32);
  solved.sites = {{"LayerNorm.apply/%4", RealType::bf16}, {"SelfAttention.heads/%1", RealType::f64},
                  {"SelfAttention.apply/%6", RealType::bf16}, {"GPT.apply/%7", RealType::f64},
                  {"LayerNorm.row/%6", RealType::bf16}};  // a decode site named: kept
  solved.params = {{"pos", RealType::f64}};
  const auto mapped = generate::realization_for_decode(solved, program, *program.find_function("decode"));
  EXPECT_EQ(mapped.site_type("LayerNorm.row/%4"), RealType::bf16);
  EXPECT_EQ(mapped.site_type("LayerNorm.row/%6"), RealType::bf16);
  EXPECT_EQ(mapped.site_type("LayerNorm.row/%5"), RealType::f32);
  EXPECT_EQ(mapped.site_type("SelfAttention.row_heads/%1"), RealType::f64);
  EXPECT_EQ(mapped.site_type("SelfAttention.decode/%2"), RealType::bf16);  // narrower of f64 rows, bf16 transpose
  EXPECT_EQ(mapped.site_type("SelfAttention.decode/%5"), RealType::f64);
  EXPECT_EQ(mapped.site_type("GPT.decode/%11"), RealType::f64);
  EXPECT_EQ(mapped.site_type("GPT.decode/%3"), RealType::f64);  // the row of pos
  EXPECT_EQ(mapped.site_type("LayerNorm.apply/%4"), RealType::bf16);
}

TEST(DecodeTwins, GptDecodeUnderAMappedRandomRealizationIsTheFullLogits) {
  const ir::Program program = tiny("gpt.psk");
  for (uint64_t seed = 0; seed < 6; ++seed) {
    EXPECT_EQ(first_differing_row(program, random_realization(program, seed, seed >= 4)), -1) << "seed " << seed;
  }
}

TEST(DecodeTwins, LlamaDecodeUnderAMappedRandomRealizationIsTheFullLogits) {
  const ir::Program program = tiny("llama.psk");
  for (uint64_t seed = 0; seed < 4; ++seed) {
    EXPECT_EQ(first_differing_row(program, random_realization(program, seed, false)), -1) << "seed " << seed;
  }
}

// The mapping is what makes the agreement: without it, decode runs its sites at the default.
TEST(DecodeTwins, WithoutTheMappingTheRowsDiffer) {
  const ir::Program program = tiny("gpt.psk");
  exec::native::Realization solved = exec::native::uniform_realization(RealType::f32);
  for (const ir::Function& f : program.functions) {
    if (f.name != "Linear.apply") continue;
    for (uint32_t i = 0; i < f.lets.size(); ++i) {
      if (exec::native::is_typable(f.lets[i])) solved.sites[f.site_name(i)] = RealType::bf16;
    }
  }
  EXPECT_EQ(first_differing_row(program, solved), -1);
  EXPECT_GE(first_differing_row(program, solved, false), 0) << "decode at f32 gave bf16's rows";
  const auto mapped = generate::realization_for_decode(solved, program, *program.find_function("decode"));
  EXPECT_EQ(mapped.site_type("Linear.row/%1"), RealType::bf16);
  EXPECT_EQ(solved.site_type("Linear.row/%1"), RealType::f32);
}

}  // namespace
}  // namespace presk
