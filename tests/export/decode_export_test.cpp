// `presk export c --entry decode`: the step API's C, compiled with the system's `cc -O2` (-O0 and
// clang -O2 -march=native for the mixed realization), fed T tokens one step at a time (its
// PRESK_MAIN driver), writes the bytes `presk run --entry logits` writes for those tokens —
// row t of the full-sequence logits is the decode step at t — under f64, bf16, a mixed
// realization and int8/int4 weights named on the `logits` entry's sites only (the export maps
// them onto decode's twins, as presk generate does), for the GPT and Llama examples; its caches
// are written in place; and what it does not cover is a coded error.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "common/realizations.h"
#include "common/run_command.h"
#include "exec/native/realization.h"
#include "export/c_export.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"

namespace presk {
namespace {

using testing::presk;
using testing::run_command;

std::string example(const std::string& name) { return std::string(PRESK_SOURCE_DIR) + "/examples/" + name; }

struct Model {
  std::string program, bindings;
  std::vector<lang::Binding> consts;
  int64_t context;
};

ir::Program compile(const Model& m, const std::string& entry) {
  lang::FrontendOptions options;
  options.entry = entry;
  options.consts = m.consts;
  options.dims = {{"T", m.context}};
  return lang::compile(lang::read_source(example(m.program)), options);
}

// Parameters uniform in [−0.6, 0.6) (no zero head), and T tokens below V.
void write_inputs(const ir::Program& program, int64_t vocabulary, const std::string& weights, const std::string& data) {
  uint64_t state = 0x2545f4914f6cdd1dull;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) * 0x1p-53;
  };
  std::vector<Tensor> values;
  for (const ir::Param& param : program.params) {
    values.emplace_back(ElementType::f64, param.type.shape);
    for (int64_t i = 0; i < param.type.element_count(); ++i) values.back().set(static_cast<uint64_t>(i), 1.2 * next() - 0.6);
  }
  std::vector<NamedTensor> named;
  for (size_t k = 0; k < values.size(); ++k) named.push_back({program.params[k].path, values[k]});
  write_safetensors(weights, named);
  const int64_t t = program.find_function("logits")->argument_types[0].shape[0];
  Tensor tokens(ElementType::i64, {t});
  for (int64_t i = 0; i < t; ++i) tokens.set_integer(static_cast<uint64_t>(i), (i * 7 + 3) % vocabulary);
  write_safetensors(data, {{"tokens", tokens}});
}

std::vector<std::byte> logits_bytes(const std::string& path, std::string* dtype) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  const SafetensorsEntry& entry = file.entry("logits");
  *dtype = entry.file_dtype;
  const std::span<const std::byte> bytes = file.raw_bytes(entry);
  return std::vector<std::byte>(bytes.begin(), bytes.end());
}

void expect_decode_is_logits(const Model& m, const std::vector<std::string>& labels) {
  testing_support::TempFolder folder;
  const ir::Program logits = compile(m, "logits");
  const std::string weights = folder.file("w.safetensors"), data = folder.file("d.safetensors");
  write_inputs(logits, logits.find_function("logits")->type_of(logits.find_function("logits")->results[0]).shape[1], weights, data);
  std::vector<std::pair<std::string, std::string>> realizations = {{"f64", "f64"}, {"f32", "f32"}, {"bf16", "bf16"}};
  for (const exec::native::Realization& r : testing::test_realizations(logits)) {  // logits' sites only
    if (r.origin != "mixed" && r.origin != "int8" && r.origin != "int4") continue;
    const std::string path = folder.file(r.origin + ".json");
    std::ofstream(path) << exec::native::realization_to_json(r).dump(2);
    realizations.push_back({r.origin, "@" + path});
  }
  for (const auto& [label, realize] : realizations) {
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) continue;
    const std::string expected = folder.file(label + ".native.safetensors"), out = folder.file(label + "_c");
    const testing::CommandResult run = run_command(presk() + " run " + example(m.program) + " --entry logits " + m.bindings +
                                                   " --realize " + realize + " --weights " + weights + " --data " + data +
                                                   " --out " + expected);
    ASSERT_EQ(run.status, 0) << run.output;
    const testing::CommandResult exported = run_command(presk() + " export c " + example(m.program) + " --entry decode " +
                                                        m.bindings + " --realize " + realize + " --out " + out);
    ASSERT_EQ(exported.status, 0) << exported.output;
    std::string want_dtype, got_dtype;
    const std::vector<std::byte> want = logits_bytes(expected, &want_dtype);
    std::ifstream source(out + "/decode.c");
    const std::string text((std::istreambuf_iterator<char>(source)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("cache_write : "), std::string::npos);
    size_t in_place = 0;
    for (size_t at = text.find(", in place */"); at != std::string::npos; at = text.find(", in place */", at + 1)) ++in_place;
    EXPECT_EQ(in_place, 2u) << label << ": each cache written in place";
    const std::vector<std::string> compilers =
        label == "mixed" ? std::vector<std::string>{"cc -std=c99 -O0 -ffp-contract=off", "clang -std=c99 -O2 -march=native"}
                         : std::vector<std::string>{"cc -std=c99 -O2 -ffp-contract=off"};
    for (size_t k = 0; k < compilers.size(); ++k) {
      const std::string binary = out + "/decode" + std::to_string(k), got = out + "/got" + std::to_string(k) + ".safetensors";
      const testing::CommandResult built = run_command(compilers[k] + " -Wall -Wextra -DPRESK_MAIN " + out + "/decode.c -lm -o " + binary);
      ASSERT_EQ(built.status, 0) << built.output;
      EXPECT_EQ(built.output, "") << "warnings in the generated C (" << label << ")";
      const testing::CommandResult ran = run_command(binary + " " + weights + " " + data + " " + got);
      ASSERT_EQ(ran.status, 0) << ran.output;
      EXPECT_TRUE(logits_bytes(got, &got_dtype) == want) << m.program << " under " << label << " with " << compilers[k]
                                                         << ": the C decode steps differ from presk run's logits";
      EXPECT_EQ(got_dtype, want_dtype) << label;
    }
  }
}

TEST(ExportDecode, GptStepsAreTheLogitsBitForBit) {
  expect_decode_is_logits({"gpt.psk", "--const V=11 --const D=8 --dim T=6", {{"V", 11}, {"D", 8}}, 6},
                          {"f64", "bf16", "mixed", "int8"});
}

TEST(ExportDecode, LlamaStepsAreTheLogitsBitForBit) {
  expect_decode_is_logits({"llama.psk", "--const V=32 --const F=24 --dim T=4", {{"V", 32}, {"F", 24}}, 4},
                          {"mixed", "int4"});
}

// The step API in the header, generate.c beside it; a multi-result entry of another form is
// still E1543.
TEST(ExportDecode, TheStepApiAndItsRefusals) {
  const Model gpt{"gpt.psk", "", {{"V", 11}, {"D", 8}}, 5};
  const ir::Program program = compile(gpt, "");
  const export_c::CExport files =
      export_c::export_c(program, "decode", exec::native::uniform_realization(exec::native::RealType::f32), "d", "o");
  EXPECT_NE(files.header.find("int presk_d_step(const presk_d_weights* weights, presk_d_state* state, int64_t at, "
                              "int64_t token, float* logits"),
            std::string::npos)
      << files.header;
  EXPECT_NE(files.header.find("#define PRESK_d_CONTEXT 5"), std::string::npos);
  EXPECT_NE(files.generate.find("#include \"d.c\""), std::string::npos);
  const std::string path = ::testing::TempDir() + "/pair.psk";
  std::ofstream(path) << "entry pair(x : R[2]) -> (R[2], R[2]) = (x, x * 2)\n";
  try {
    export_c::export_c(lang::compile(lang::read_source(path), {}), "pair",
                       exec::native::uniform_realization(exec::native::RealType::f32), "p", "");
    ADD_FAILURE() << "a two-result entry was exported";
  } catch (const UserError& error) {
    EXPECT_EQ(error.code(), "E1543") << error.what();
  }
}

}  // namespace
}  // namespace presk
