// write_synthetic_checkpoint (checkpoint.h): a program's parameters, drawn as
// synthesize_parameters draws them, written as a Hugging Face checkpoint folder a block of
// elements at a time (never a whole tensor in memory).
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "exec/reference/checkpoint.h"
#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "support/hf_checkpoint.h"
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

// Streams one tensor's values, rounded to `dtype`, a block at a time.
void write_tensor(AtomicFileWriter& writer, const PlannedTensor& tensor, ElementType dtype, uint64_t seed) {
  constexpr uint64_t kBlock = uint64_t{1} << 16;  // elements (even: an i4 byte never straddles)
  const uint64_t first = tensor.layer < 0 ? 0 : static_cast<uint64_t>(tensor.layer) * tensor.elements;
  std::vector<std::byte> block(storage_bytes(dtype, kBlock));
  for (uint64_t begin = 0; begin < tensor.elements; begin += kBlock) {
    const uint64_t count = std::min(kBlock, tensor.elements - begin);
    tbb::parallel_for(uint64_t{0}, count, [&](uint64_t i) {
      store_element(dtype, block.data(), i, synthesize_element(*tensor.param, seed, first + begin + i));
    });
    writer.write(block.data(), storage_bytes(dtype, count));
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

SynthCheckpointReport write_synthetic_checkpoint(const ir::Program& program, const SynthCheckpointOptions& options) {
  std::error_code error;
  std::filesystem::create_directories(options.out, error);
  const auto folder = std::filesystem::path(options.out);
  SynthCheckpointReport report;
  report.files.push_back((folder / std::string(kCheckpointConfig)).string());
  write_file_atomically(report.files.back(), config_text(program, options.dtype));
  const auto shards = plan_shards(plan_tensors(program, options.dtype), options.shard_bytes);
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
    for (const PlannedTensor& tensor : shards[s]) write_tensor(writer, tensor, options.dtype, options.seed);
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

}  // namespace presk::reference
