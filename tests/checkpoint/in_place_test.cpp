// Parameters read in place (support/param_view.h): a checkpoint's tensors are held where they
// are, in their own type (bf16 stays bf16, never widened as a whole), and the native executor
// and the reference read them there with the bits they had when every parameter was first
// copied into binary64: against a copy-loaded store in one process, and against outputs
// pinned by the copying loader (main at 6c18b41) on the same checkpoint, at 1 and 2 threads.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/run_command.h"
#include "exec/native/executor.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/checkpoint.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/weights.h"
#include "lang/frontend.h"
#include "support/hf_checkpoint.h"
#include "support/safetensors.h"
#include "support/sha256.h"
#include "support/temp_folder.h"

namespace presk::testing {
namespace {

using testing_support::TempFolder;

const std::string kLlama = std::string(PRESK_SOURCE_DIR) + "/examples/llama.psk";
constexpr const char* kTyped =
    R"({"format": 1, "default": "f64", "params": {"model.layers.mlp.up_proj.weight": "bf16",)"
    R"( "model.embed_tokens.weight": "bf16", "model.layers.self_attn.q_proj.weight": "f32", "lm_head.weight": "f32"}})";

ir::Program llama() {
  lang::FrontendOptions options;
  options.dims = {{"T", 4}};
  return lang::compile(lang::read_source(kLlama), options);
}

std::string synth(const TempFolder& temp) {
  const std::string folder = temp.file("ck");
  reference::write_synthetic_checkpoint(llama(), {folder, 7, ElementType::bf16, 64000, 1, {}});
  return folder;
}

// Every parameter copied into binary64 values: what the loader held before it read in place.
reference::ParameterStore copied(const ir::Program& program, const reference::ParameterStore& store) {
  reference::ParameterStore copy;
  for (const ir::Param& param : program.params) copy.set(param.path, store.view(param.path).widened());
  return copy;
}

TEST(InPlace, ABf16CheckpointIsHeldInBf16WhereItIs) {
  TempFolder temp;
  const std::string folder = synth(temp);
  const ir::Program program = llama();
  const reference::ParameterStore store = reference::load_weights(program, folder);
  const ParamView up = store.view("model.layers.mlp.up_proj.weight");
  ASSERT_TRUE(up);
  EXPECT_EQ(up.type(), ElementType::bf16);
  EXPECT_EQ(up.values(), nullptr);  // not binary64 values: the tensors in place
  EXPECT_EQ(up.size(), static_cast<uint64_t>(2 * 172 * 64));
  // The rotary tables are computed (binary64), not read.
  EXPECT_NE(store.view("model.layers.self_attn.rotary_emb.cos").values(), nullptr);
  // A stacked parameter's layer 1 begins where layer 0's tensor ends.
  double first = 0;
  up.read(172 * 64, 1, &first);
  const CheckpointFolder checkpoint = CheckpointFolder::open(folder);
  const CheckpointTensor layer1 = checkpoint.find("model.layers.1.mlp.up_proj.weight");
  EXPECT_EQ(first, layer1.file->value(*layer1.entry, 0));
}

TEST(InPlace, TheNativeExecutorGivesTheBitsOfACopiedStoreAtOneAndTwoThreads) {
  TempFolder temp;
  const ir::Program program = llama();
  const reference::ParameterStore store = reference::load_weights(program, synth(temp));
  const reference::ParameterStore copy = copied(program, store);
  const ir::Function& entry = reference::find_entry(program, "logits");
  const std::vector<Tensor> inputs = reference::to_tensors(reference::synthesize_inputs(entry, 3, 256));
  for (const exec::native::Realization& realization :
       {exec::native::uniform_realization(exec::native::RealType::f64),
        exec::native::parse_realization(nlohmann::json::parse(kTyped), "typed")}) {
    const auto in_place = exec::native::prepare_parameters(program, realization, [&](const std::string& p) { return store.view(p); });
    const auto from_copy = exec::native::prepare_parameters(program, realization, [&](const std::string& p) { return copy.view(p); });
    for (int threads : {1, 2}) {
      const Tensor a = exec::native::execute(program, "logits", realization, inputs, in_place, {threads, false}).at(0);
      const Tensor b = exec::native::execute(program, "logits", realization, inputs, from_copy, {threads, false}).at(0);
      ASSERT_EQ(a.byte_size(), b.byte_size());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.byte_size()), 0) << realization.origin << ", " << threads << " threads";
    }
  }
}

TEST(InPlace, TheReferenceGivesTheBitsOfACopiedStore) {
  TempFolder temp;
  const ir::Program program = llama();
  const reference::ParameterStore store = reference::load_weights(program, synth(temp));
  const reference::ParameterStore copy = copied(program, store);
  const ir::Function& entry = reference::find_entry(program, "logits");
  const reference::MpfrArith arith(128);
  std::vector<reference::Value<reference::MpfrArith>> arguments;
  for (const auto& host : reference::synthesize_inputs(entry, 3, 256)) arguments.push_back(reference::to_value(arith, host));
  for (int threads : {1, 2}) {
    reference::RunOptions options;
    options.bits = 128;
    options.threads = threads;
    const auto as = reference::run_function<reference::MpfrArith>(program, entry, store, arguments, options);
    const auto bs = reference::run_function<reference::MpfrArith>(program, entry, copy, arguments, options);
    const auto& a = as.at(0);
    const auto& b = bs.at(0);
    ASSERT_EQ(a.size(), b.size());
    for (int64_t i = 0; i < a.size(); ++i) ASSERT_EQ(mpfr_cmp(a.real(i), b.real(i)), 0) << i;
  }
}

// `presk run --out` on the checkpoint: the SHA-256 of each output file's exact decimals (its
// `presk:exact:logits` note, when exact) followed by its F64 data, as the copying loader wrote
// them (main at 6c18b41, 2026-12-03, on this checkpoint: seed 7, bf16, 64 kB shards). The rest
// of the header names the program's path, which differs between checkouts.
std::string output_sha256(const std::string& path) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  const auto exact = file.metadata().find("presk:exact:logits");
  const auto data = file.raw_bytes(file.entry("logits"));
  return sha256_hex((exact == file.metadata().end() ? std::string() : exact->second) +
                    std::string(reinterpret_cast<const char*>(data.data()), data.size()));
}

TEST(InPlace, RunsOnACheckpointKeepTheirPinnedBits) {
  TempFolder temp;
  const std::string folder = synth(temp);
  std::ofstream(temp.file("typed.json")) << kTyped;
  const struct {
    std::string mode, sha256;
  } cases[] = {
      {"--realize f64", "bf3ad31f8aee8a8ebef93b23b311fffa4bddaf0e8c0e7d49b1dc75b3a6743a2b"},
      // The typed weights are bf16 in the checkpoint and exact in f32: the outputs are f64's.
      {"--realize @typed.json", "bf3ad31f8aee8a8ebef93b23b311fffa4bddaf0e8c0e7d49b1dc75b3a6743a2b"},
      {"--exact --bits 128", "a269d872c9371c688ebcd370bcda67ded80a09406567dad551aac50cef176c0d"},
  };
  for (const auto& c : cases) {
    for (int threads : {1, 2}) {
      const std::string out = temp.file("out.safetensors");
      CommandResult run = run_command("cd " + temp.path() + " && " + presk() + " run " + kLlama + " --entry logits --dim T=4 --weights " + folder + " " +
                                      c.mode + " --threads " + std::to_string(threads) + " --out " + out);
      ASSERT_EQ(run.status, 0) << run.output;
      EXPECT_EQ(output_sha256(out), c.sha256) << c.mode << ", " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace presk::testing
