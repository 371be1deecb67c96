// A Hugging Face checkpoint folder, as downloaded: `config.json`, and the tensors in one
// `model.safetensors` or in shards listed by `model.safetensors.index.json`
// ({"weight_map": {tensor name: shard file name}}). Every shard is opened (memory-mapped when
// large, support/safetensors.h) and validated once; a tensor is then found by name, in place.
// Nothing outside the folder is read: a shard name must be a plain file name. The layout and
// its errors (E0151–E0156) are in docs/checkpoints.md and docs/errors.md.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "support/safetensors.h"

namespace presk {

inline constexpr std::string_view kCheckpointConfig = "config.json";
inline constexpr std::string_view kCheckpointSingleFile = "model.safetensors";
inline constexpr std::string_view kCheckpointIndex = "model.safetensors.index.json";

// A tensor of a checkpoint and the shard that holds it.
struct CheckpointTensor {
  const SafetensorsFile* file = nullptr;
  const SafetensorsEntry* entry = nullptr;
};

class CheckpointFolder {
 public:
  // Opens `folder`: E0151 (config.json missing or not a JSON object), E0152 (neither
  // model.safetensors nor the index), E0153 (the index is malformed), E0154 (a shard name
  // leaves the folder), E0155 (the index and a shard disagree about a tensor), plus each
  // shard's own codes (E01xx of safetensors.h).
  static CheckpointFolder open(const std::string& folder);

  const std::string& folder() const { return folder_; }
  const nlohmann::json& config() const { return config_; }
  // The shard files, in the order first named by the index (one for a single file).
  const std::vector<std::string>& shard_names() const { return shard_names_; }
  // The tensor named, or {} (file == nullptr) when the checkpoint has none.
  CheckpointTensor find(std::string_view name) const;
  // Every tensor name of the checkpoint, sorted.
  std::vector<std::string> tensor_names() const;

 private:
  std::string folder_;
  nlohmann::json config_;
  std::vector<std::string> shard_names_;
  std::vector<std::unique_ptr<SafetensorsFile>> shards_;  // parallel to shard_names_
  std::vector<std::pair<std::string, size_t>> index_;    // tensor name -> shard, sorted
};

// True when `path` names a folder (a checkpoint folder rather than one safetensors file).
bool is_checkpoint_folder(const std::string& path);

// The SHA-256 that names a weights argument: of the file's bytes (sha256_file), or for a
// checkpoint folder, of each file it reads (config.json, the index when sharded, the shards
// in name order) as its name, a newline, its byte count in decimal, a newline and the 64 hex
// digits of its own SHA-256.
std::string weights_sha256(const std::string& path);

// E0154 unless `name` is a plain file name: not empty, no `/` or `\`, not `.` or `..`, no
// NUL byte. `what` names its origin for the message.
void require_plain_file_name(const std::string& name, const std::string& what);

}  // namespace presk
