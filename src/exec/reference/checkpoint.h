// Programs and Hugging Face checkpoint folders (support/hf_checkpoint.h, docs/checkpoints.md):
// reading a folder's tensors as a program's parameters, and writing a deterministic synthetic
// checkpoint of a program in that layout. A stacked parameter `prefix.rest` of L layers is
// the L tensors `prefix.{i}.rest`, where `prefix` is the path of its stack.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exec/reference/parameters.h"
#include "ir/ir.h"
#include "support/tensor.h"

namespace presk::reference {

// A config.json field and the const of the program that sizes it (examples/llama.psk).
struct CheckpointConfigField {
  const char* field;
  const char* constant;
};
inline constexpr CheckpointConfigField kCheckpointConfigFields[] = {
    {"vocab_size", "V"},          {"hidden_size", "D"},          {"num_hidden_layers", "L"},
    {"num_attention_heads", "H"}, {"num_key_value_heads", "KV"}, {"intermediate_size", "F"},
    {"head_dim", "HD"},
};
// rms_norm_eps is 1 / the const EPS_INV.
inline constexpr const char* kCheckpointEpsConst = "EPS_INV";

// The paths of the program's stacks (`model.layers`), found from the entries' folds.
std::vector<std::string> stack_paths(const ir::Program& program);
// The checkpoint's name of layer `layer` of stacked parameter `path` ("" for the stack
// paths that do not hold it): `model.layers.mlp.up_proj.weight` → `model.layers.3.mlp.up_proj.weight`.
std::string layer_tensor_name(const std::vector<std::string>& stacks, const std::string& path, int64_t layer);
// True for the rotary tables (`….rotary_emb.cos`, `….rotary_emb.sin`), computed, not stored.
bool is_rotary_table(const std::string& path);

// The parameters from a Hugging Face checkpoint folder: config.json's sizes checked against
// the program's consts (E0150, naming the field; E0156 for a rope_scaling), each parameter
// read from the tensor named by its path, a stacked one from its L tensors in layer order;
// the rotary tables computed from rope_theta when the checkpoint has none; a missing
// `lm_head.weight` read from `model.embed_tokens.weight` when tie_word_embeddings. Missing,
// extra, reshaped and non-float tensors as load_weights (E0510–E0513), all at once.
ParameterStore load_checkpoint_weights(const ir::Program& program, const std::string& folder);

struct SynthCheckpointOptions {
  std::string out;                      // the folder, created when missing
  uint64_t seed = 0;
  ElementType dtype = ElementType::bf16;  // bf16, f32 or f64
  uint64_t shard_bytes = 0;             // the most tensor bytes a shard holds; 0: one file
  int threads = 1;                      // changes no byte
  // Called after each block written: tensor bytes written so far, and in all.
  std::function<void(uint64_t done, uint64_t total)> progress;
};
struct SynthCheckpointReport {
  std::vector<std::string> files;  // written, config.json first
  uint64_t tensors = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0;  // tensor bytes
};
// Element `index` of the checkpoint tensor whose name hashes to `stream` (random::stream_of),
// drawn for `init` under `seed` from one word random::word(seed, stream, index), in integer
// and binary64 arithmetic alone (no libm, no MPFR; docs/checkpoints.md): zeros 0, ones 1,
// uniform(a, b) as random::uniform, normal(σ) σ·z with z the word's four 16-bit pieces summed,
// centred and scaled to variance 1 (Irwin–Hall of order 4: |z| ≤ 3.47).
double synthetic_checkpoint_element(const ir::Initializer& init, uint64_t seed, uint64_t stream, uint64_t index);

// Writes config.json (the program's consts), the tensors of every parameter but the rotary
// tables in Hugging Face's order and layout, drawn by synthetic_checkpoint_element under
// `seed` and rounded to `dtype`, one file or shards of at most shard_bytes with the index (a
// tensor larger than a shard gets a shard of its own); each file atomically, streamed a block
// of elements at a time. E0158 for a parameter in a nested stack. A cancellation
// (support/cancel.h) throws Cancelled between blocks, the file being written removed.
SynthCheckpointReport write_synthetic_checkpoint(const ir::Program& program, const SynthCheckpointOptions& options);

}  // namespace presk::reference
