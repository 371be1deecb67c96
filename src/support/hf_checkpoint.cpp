// The checkpoint folder of hf_checkpoint.h: config.json, the index (when sharded) and the
// shards, each validated once, and a sorted name → shard table.
#include "support/hf_checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/json_reader.h"
#include "support/sha256.h"

namespace presk {
namespace {

std::string join(const std::string& folder, std::string_view name) {
  return (std::filesystem::path(folder) / std::string(name)).string();
}

nlohmann::json read_json_object(const std::string& path, const char* code, const std::string& what) {
  const std::string text = read_input_file(
      path, {what, code, "a Hugging Face checkpoint folder holds " + what, kJsonFileLimit});
  nlohmann::json value = parse_user_json(text, {path, code, "re-download or rewrite " + what});
  if (!value.is_object()) {
    user_error(code).hint(what + " is a JSON object") << path << ": " << what << " is not a JSON object";
  }
  return value;
}

// The index's weight_map: tensor name → shard file name, every shard name plain.
std::map<std::string, std::string> read_weight_map(const std::string& path) {
  const nlohmann::json index = read_json_object(path, "E0153", "the index model.safetensors.index.json");
  const auto map = index.find("weight_map");
  if (map == index.end() || !map->is_object()) {
    user_error("E0153").hint("the index is {\"weight_map\": {\"tensor name\": \"shard file\", …}}")
        << path << ": \"weight_map\" is missing or not an object";
  }
  std::map<std::string, std::string> weight_map;
  for (auto it = map->begin(); it != map->end(); ++it) {
    if (!it->is_string()) {
      user_error("E0153").hint("each tensor maps to the file name of its shard")
          << path << ": the shard of tensor " << text_excerpt(it.key()) << " is not a string";
    }
    require_plain_file_name(it->get<std::string>(), path + ", tensor " + text_excerpt(it.key()));
    weight_map[it.key()] = it->get<std::string>();
  }
  return weight_map;
}

}  // namespace

void require_plain_file_name(const std::string& name, const std::string& what) {
  const bool plain = !name.empty() && name != "." && name != ".." &&
                     name.find_first_of(std::string("/\\\0", 3)) == std::string::npos;
  if (!plain) {
    user_error("E0154").hint("a shard is a file of the checkpoint's own folder, named without a path")
        << what << ": the shard name " << text_excerpt(name) << " is not a file name in the folder";
  }
}

bool is_checkpoint_folder(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_directory(path, error);
}

CheckpointFolder CheckpointFolder::open(const std::string& folder) {
  CheckpointFolder checkpoint;
  checkpoint.folder_ = folder;
  checkpoint.config_ = read_json_object(join(folder, kCheckpointConfig), "E0151", "config.json");
  std::error_code error;
  const std::string index_path = join(folder, kCheckpointIndex);
  const std::string single_path = join(folder, kCheckpointSingleFile);
  std::map<std::string, std::string> weight_map;
  if (std::filesystem::exists(index_path, error)) {
    weight_map = read_weight_map(index_path);
    for (const auto& [name, shard] : weight_map) {
      if (std::find(checkpoint.shard_names_.begin(), checkpoint.shard_names_.end(), shard) ==
          checkpoint.shard_names_.end()) {
        checkpoint.shard_names_.push_back(shard);
      }
    }
  } else if (std::filesystem::exists(single_path, error)) {
    checkpoint.shard_names_.emplace_back(kCheckpointSingleFile);
  } else {
    user_error("E0152").hint("a checkpoint folder holds model.safetensors, or shards listed in model.safetensors.index.json")
        << folder << " has neither " << kCheckpointSingleFile << " nor " << kCheckpointIndex;
  }
  for (size_t s = 0; s < checkpoint.shard_names_.size(); ++s) {
    checkpoint.shards_.push_back(
        std::make_unique<SafetensorsFile>(SafetensorsFile::open(join(folder, checkpoint.shard_names_[s]))));
    for (const SafetensorsEntry& entry : checkpoint.shards_.back()->entries()) {
      const auto listed = weight_map.find(entry.name);
      if (!weight_map.empty() && (listed == weight_map.end() || listed->second != checkpoint.shard_names_[s])) {
        user_error("E0155").hint("rewrite the index from the shards, or re-download the checkpoint")
            << join(folder, checkpoint.shard_names_[s]) << " holds tensor " << text_excerpt(entry.name)
            << ", which the index " << (listed == weight_map.end() ? "does not list" : "places in " + listed->second);
      }
      checkpoint.index_.emplace_back(entry.name, s);
    }
  }
  std::sort(checkpoint.index_.begin(), checkpoint.index_.end());
  if (checkpoint.index_.size() < weight_map.size()) {
    for (const auto& [name, shard] : weight_map) {
      if (checkpoint.find(name).file == nullptr) {
        user_error("E0155").hint("rewrite the index from the shards, or re-download the checkpoint")
            << index_path << " lists tensor " << text_excerpt(name) << " in " << shard << ", which does not hold it";
      }
    }
  }
  return checkpoint;
}

std::string weights_sha256(const std::string& path) {
  if (!is_checkpoint_folder(path)) return sha256_file(path);
  const CheckpointFolder checkpoint = CheckpointFolder::open(path);
  std::vector<std::string> files = checkpoint.shard_names();
  std::sort(files.begin(), files.end());
  std::error_code error;
  if (std::filesystem::exists(join(path, kCheckpointIndex), error)) files.insert(files.begin(), std::string(kCheckpointIndex));
  files.insert(files.begin(), std::string(kCheckpointConfig));
  Sha256 hash;
  for (const std::string& name : files) {
    const std::string file_hash = sha256_file(join(path, name));  // each file streamed once
    hash.update(name + "\n" + std::to_string(std::filesystem::file_size(join(path, name), error)) + "\n");
    hash.update(file_hash);
  }
  return hash.finish_hex();
}

CheckpointTensor CheckpointFolder::find(std::string_view name) const {
  auto it = std::lower_bound(index_.begin(), index_.end(), name,
                             [](const auto& row, std::string_view n) { return row.first < n; });
  if (it == index_.end() || it->first != name) return {};
  const SafetensorsFile& file = *shards_[it->second];
  return {&file, file.find(name)};
}

std::vector<std::string> CheckpointFolder::tensor_names() const {
  std::vector<std::string> names;
  for (const auto& row : index_) names.push_back(row.first);
  return names;
}

}  // namespace presk
