// write_synthetic_checkpoint (checkpoint.h): a program's parameters, drawn by
// synthetic_checkpoint_element, written as a Hugging Face checkpoint folder a block of
// elements at a time (never a whole tensor in memory).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "exec/reference/checkpoint.h"
#include "support/atomic_file.h"
#include "support/cancel.h"
#include "support/diagnostics.h"
#include "support/hf_checkpoint.h"
#include "support/random.h"
#include "support/safetensors.h"

namespace presk::reference {
namespace {

// One tensor of the checkpoint: layer `layer` of `param` (layer -1: the whole parameter).
struct PlannedTensor {
  std::string name;
  const ir::Param* param = nullptr;
  int64_t layer = -1;
  std::vector<int64_t> shape;
  uint64_t elements = 0;
  uint64_t bytes = 0;
};

PlannedTensor plan_tensor(const ir::Param& param, std::string name, int64_t layer, ElementType dtype) {
  PlannedTensor tensor{std::move(name), &param, layer, param.type.shape, 0, 0};
  if (layer >= 0) tensor.shape.erase(tensor.shape.begin());
  tensor.elements = 1;
  for (int64_t extent : tensor.shape) tensor.elements *= static_cast<uint64_t>(extent);
  tensor.bytes = storage_bytes(dtype, tensor.elements);
  return tensor;
}

// The tensors in Hugging Face's order: unstacked parameters where they stand, a stack's
// layers one after another, each layer's tensors in the program's order.
std::vector<PlannedTensor> plan_tensors(const ir::Program& program, ElementType dtype) {
  const std::vector<std::string> stacks = stack_paths(program);
  std::vector<PlannedTensor> tensors;
  std::vector<std::string> stacks_done;
  for (const ir::Param& param : program.params) {
    if (is_rotary_table(param.path)) continue;
    if (param.stack_depth == 0) {
      tensors.push_back(plan_tensor(param, param.path, -1, dtype));
      continue;
    }
    const auto stack = std::find_if(stacks.begin(), stacks.end(), [&](const std::string& s) {
      return !layer_tensor_name({s}, param.path, 0).empty();
    });
    if (param.stack_depth > 1 || stack == stacks.end()) {
      user_error("E0158").hint("a Hugging Face checkpoint stores one stack of layers; write this program's weights with presk train")
          << "parameter `" << param.path << "` is in a stack nested " << param.stack_depth << " deep";
    }
    if (std::find(stacks_done.begin(), stacks_done.end(), *stack) != stacks_done.end()) continue;
    stacks_done.push_back(*stack);
    for (int64_t layer = 0; layer < param.type.shape.front(); ++layer) {
      for (const ir::Param& member : program.params) {
        const std::string name = layer_tensor_name({*stack}, member.path, layer);
        if (!name.empty() && !is_rotary_table(member.path)) tensors.push_back(plan_tensor(member, name, layer, dtype));
      }
    }
  }
  return tensors;
}

// Consecutive tensors grouped into shards of at most `limit` bytes (a larger tensor alone).
std::vector<std::vector<PlannedTensor>> plan_shards(std::vector<PlannedTensor> tensors, uint64_t limit) {
  std::vector<std::vector<PlannedTensor>> shards(1);
  uint64_t bytes = 0;
  for (PlannedTensor& tensor : tensors) {
    if (limit > 0 && !shards.back().empty() && bytes + tensor.bytes > limit) {
      shards.emplace_back();
      bytes = 0;
    }
    bytes += tensor.bytes;
    shards.back().push_back(std::move(tensor));
  }
  return shards;
}

// Streams one tensor's values, rounded to `dtype`, a block at a time; each element is a pure
// function of (seed, tensor name, index), so the split over threads changes no byte. A
// cancellation (a signal, cmd_checkpoint.cpp) is seen between blocks.
void write_tensor(AtomicFileWriter& writer, const PlannedTensor& tensor, const SynthCheckpointOptions& options,
                  uint64_t& done, uint64_t total) {
  const ElementType dtype = options.dtype;
  const uint64_t seed = options.seed;
  constexpr uint64_t kBlock = uint64_t{1} << 18;  // elements (even: an i4 byte never straddles)
  const uint64_t stream = random::stream_of(tensor.name);
  std::vector<std::byte> block(storage_bytes(dtype, std::min(kBlock, tensor.elements)));
  for (uint64_t begin = 0; begin < tensor.elements; begin += kBlock) {
    check_cancelled();
    const uint64_t count = std::min(kBlock, tensor.elements - begin);
    tbb::parallel_for(tbb::blocked_range<uint64_t>(0, count, 8192), [&](const tbb::blocked_range<uint64_t>& range) {
      for (uint64_t i = range.begin(); i != range.end(); ++i) {
        store_element(dtype, block.data(), i, synthetic_checkpoint_element(tensor.param->init, seed, stream, begin + i));
      }
    });
    writer.write(block.data(), storage_bytes(dtype, count));
    done += storage_bytes(dtype, count);
    if (options.progress) options.progress(done, total);
  }
}

std::string shard_name(size_t index, size_t count) {
  if (count == 1) return std::string(kCheckpointSingleFile);
  char name[64];
  std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", index + 1, count);
  return name;
}

std::string config_text(const ir::Program& program, ElementType dtype) {
  nlohmann::ordered_json config = {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"},
                                   {"hidden_act", "silu"}};
  for (const auto& [constant, value] : program.consts) {
    for (const CheckpointConfigField& row : kCheckpointConfigFields) {
      if (constant == row.constant) config[row.field] = value;
    }
    if (constant == kCheckpointEpsConst) config["rms_norm_eps"] = 1.0 / static_cast<double>(value);
  }
  config["rope_theta"] = 10000.0;
  config["tie_word_embeddings"] = false;
  config["torch_dtype"] = dtype == ElementType::bf16 ? "bfloat16" : dtype == ElementType::f32 ? "float32" : "float64";
  return config.dump(2) + "\n";
}

}  // namespace

double synthetic_checkpoint_element(const ir::Initializer& init, uint64_t seed, uint64_t stream, uint64_t index) {
  // The deviation of c below: four pieces p uniform on [0, 2¹⁶), each 2p − (2¹⁶ − 1) of
  // variance (2³² − 1)/3.
  static const double kUnit = 1.0 / std::sqrt(4.0 * 4294967295.0 / 3.0);
  const uint64_t w = random::word(seed, stream, index);
  switch (init.kind) {
    case ir::Initializer::Kind::Zeros: return 0.0;
    case ir::Initializer::Kind::Ones: return 1.0;
    case ir::Initializer::Kind::Uniform: return init.a + (init.b - init.a) * random::uniform01(w);
    case ir::Initializer::Kind::Normal: {
      const int64_t sum = static_cast<int64_t>((w & 0xffff) + ((w >> 16) & 0xffff) + ((w >> 32) & 0xffff) + (w >> 48));
      const int64_t c = 2 * sum - 4 * 0xffff;  // symmetric about 0, |c| ≤ 262140
      return init.a * (static_cast<double>(c) * kUnit);
    }
  }
  internal_assert(false);
  return 0.0;
}

namespace {

SynthCheckpointReport write_checkpoint_files(const ir::Program& program, const SynthCheckpointOptions& options) {
  std::error_code error;
  std::filesystem::create_directories(options.out, error);
  const auto folder = std::filesystem::path(options.out);
  SynthCheckpointReport report;
  report.files.push_back((folder / std::string(kCheckpointConfig)).string());
  write_file_atomically(report.files.back(), config_text(program, options.dtype));
  const auto shards = plan_shards(plan_tensors(program, options.dtype), options.shard_bytes);
  uint64_t total = 0, done = 0;
  for (const auto& shard : shards) {
    for (const PlannedTensor& tensor : shard) total += tensor.bytes;
  }
  nlohmann::json weight_map = nlohmann::json::object();
  for (size_t s = 0; s < shards.size(); ++s) {
    const std::string name = shard_name(s, shards.size());
    std::vector<SafetensorsLayout> layouts;
    for (const PlannedTensor& tensor : shards[s]) {
      layouts.push_back({tensor.name, options.dtype, tensor.shape, {}, tensor.bytes});
      weight_map[tensor.name] = name;
      report.tensors += 1;
      report.elements += tensor.elements;
      report.bytes += tensor.bytes;
    }
    report.files.push_back((folder / name).string());
    AtomicFileWriter writer(report.files.back());
    writer.write(safetensors_prefix(layouts, {{"format", "pt"}}));
    for (const PlannedTensor& tensor : shards[s]) write_tensor(writer, tensor, options, done, total);
    writer.commit();
  }
  const std::string index_path = (folder / std::string(kCheckpointIndex)).string();
  if (shards.size() > 1) {
    const nlohmann::json index = {{"metadata", {{"total_size", report.bytes}}}, {"weight_map", weight_map}};
    write_file_atomically(index_path, index.dump(2) + "\n");
    report.files.push_back(index_path);
  } else {
    std::filesystem::remove(index_path, error);  // a stale index would name shards not written
  }
  return report;
}

}  // namespace

SynthCheckpointReport write_synthetic_checkpoint(const ir::Program& program, const SynthCheckpointOptions& options) {
  tbb::task_arena arena(std::max(1, options.threads));
  return arena.execute([&] { return write_checkpoint_files(program, options); });
}

}  // namespace presk::reference
