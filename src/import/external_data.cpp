// External data (docs/import.md, "Large models"): a tensor saved with
// `onnx.save(..., save_as_external_data=True)` keeps its bytes in a file beside the model
// (`location` relative to the model's folder, optional `offset` and `length`). Each file is
// memory-mapped once, read-only, and a tensor's constant points into the mapping: its bytes are
// read only when an operator decodes them or the weights writer copies them out. A location
// that leaves the folder (absolute, `..`, a link out) is E1357 and is never opened; a file that
// is missing, not a regular file, or too short is E1358.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>

#include "import/builder.h"
#include "import/onnx_reader.h"
#include "support/diagnostics.h"
#include "support/guarded_read.h"
#include "support/mapped_file.h"

namespace presk::onnx_import {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxTensorElements = uint64_t{1} << 31;  // decode_tensor's limit

struct ExternalPlace {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

uint64_t external_number(const onnx::TensorProto& tensor, const std::string& key, const std::string& text) {
  const bool digits = !text.empty() && text.size() <= 19 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    user_error("E1309").hint("save the model again with onnx.save(model, path, save_as_external_data=True)")
        << "tensor `" << printable(tensor.name()) << "`: its external data's `" << key << "` is `"
        << printable(text) << "`, not a byte count";
  }
  return std::stoull(text);
}

ExternalPlace external_place(const onnx::TensorProto& tensor) {
  ExternalPlace place;
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == "location") place.location = entry.value();
    if (entry.key() == "offset") place.offset = external_number(tensor, "offset", entry.value());
    if (entry.key() == "length") place.length = external_number(tensor, "length", entry.value());
  }
  if (place.location.empty()) {
    user_error("E1309").hint("save the model again with onnx.save(model, path, save_as_external_data=True)")
        << "tensor `" << printable(tensor.name()) << "` keeps its data in an external file but names none";
  }
  return place;
}

// The bytes the tensor's shape and type need (E1309 for a type or a shape decode_tensor refuses).
uint64_t needed_bytes(const onnx::TensorProto& tensor) {
  uint64_t count = 1;
  for (int64_t extent : tensor.dims()) {
    if (extent < 0 || (extent > 0 && count > kMaxTensorElements / static_cast<uint64_t>(extent))) {
      user_error("E1309") << "tensor `" << printable(tensor.name()) << "` has a negative or too large extent";
    }
    count *= static_cast<uint64_t>(extent);
  }
  const size_t size = element_bytes(tensor.data_type());
  if (size == 0) {
    user_error("E1304") << "tensor `" << printable(tensor.name()) << "` has the unsupported data type "
                        << data_type_name(tensor.data_type());
  }
  return count * size;
}

// The file `location` names inside `folder`, resolved (links too): E1357 when it lies outside.
fs::path resolved_inside(const onnx::TensorProto& tensor, const std::string& location, const std::string& folder) {
  auto outside = [&](const std::string& why) {
    user_error("E1357").hint("keep the external data files in the model's folder and save their locations "
                             "relative to it (onnx.save(..., location=\"weights.bin\"))")
        << "tensor `" << printable(tensor.name()) << "`: the external data location `"
        << printable(location) << "` " << why << "; presk reads external data only inside the folder of "
        << "the model";
  };
  if (folder.empty()) outside("has no model folder to be read from (the model was given as bytes)");
  const fs::path relative(location);
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory()) {
    outside("is an absolute path");
  }
  std::error_code error;
  const fs::path base = fs::weakly_canonical(fs::absolute(fs::path(folder), error), error);
  const fs::path target = fs::weakly_canonical(base / relative, error);
  if (error) outside("cannot be resolved (" + error.message() + ")");
  const auto folder_end = std::mismatch(base.begin(), base.end(), target.begin(), target.end()).first;
  if (folder_end != base.end()) outside("leaves that folder");
  return target;
}

[[noreturn]] void unreadable(const onnx::TensorProto& tensor, const std::string& location, const std::string& why) {
  user_error("E1358").hint("copy the model's external data files whole, beside the model")
      << "tensor `" << printable(tensor.name()) << "`: its external data file `" << printable(location) << "` " << why;
}

// Maps the regular file at `path` (E1358 when it is missing, not a regular file, or unmappable).
std::shared_ptr<const MappedFile> map_file(const onnx::TensorProto& tensor, const std::string& location,
                                           const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error) || error) unreadable(tensor, location, "is missing or is not a regular file");
  std::string why;
  std::shared_ptr<const MappedFile> file = MappedFile::open(path.string(), why);
  if (!file) unreadable(tensor, location, why);
  return file;
}

void check_tensors(const ExternalData& external, const onnx::GraphProto& graph) {
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL) external.bytes_of(tensor);
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_t() && attribute.t().data_location() == onnx::TensorProto::EXTERNAL) {
        external.bytes_of(attribute.t());
      }
    }
  }
}

void load_tensor(const ExternalData& external, onnx::TensorProto& tensor) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return;
  std::shared_ptr<const RawBytes> raw = external.bytes_of(tensor);
  std::string bytes(raw->bytes.size(), '\0');
  copy_raw(*raw, 0, bytes.size(), bytes.data());
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
  tensor.set_raw_data(std::move(bytes));
}

}  // namespace

std::shared_ptr<const RawBytes> ExternalData::bytes_of(const onnx::TensorProto& tensor) const {
  const ExternalPlace place = external_place(tensor);
  const uint64_t needed = needed_bytes(tensor);
  if (place.length && *place.length != needed) {
    user_error("E1309").hint("save the model again with onnx.save(model, path, save_as_external_data=True)")
        << "tensor `" << printable(tensor.name()) << "`: its external data is " << *place.length
        << " bytes long, and its type and shape need " << needed;
  }
  auto found = files_.find(place.location);
  if (found == files_.end()) {
    const fs::path path = resolved_inside(tensor, place.location, folder_);
    found = files_.emplace(place.location, map_file(tensor, place.location, path)).first;
  }
  const std::shared_ptr<const MappedFile>& file = found->second;
  if (place.offset > file->size() || needed > file->size() - place.offset) {
    unreadable(tensor, place.location, "holds " + std::to_string(file->size()) + " bytes; the tensor needs " +
               std::to_string(needed) + " from offset " + std::to_string(place.offset) + " (a truncated file?)");
  }
  auto raw = std::make_shared<RawBytes>();
  if (needed > 0) raw->bytes = file->bytes().subspan(place.offset, static_cast<size_t>(needed));
  raw->data_type = tensor.data_type();
  raw->keep = file;
  raw->mapped = true;
  return raw;
}

void ExternalData::check_all(const onnx::ModelProto& model) const { check_tensors(*this, model.graph()); }

void ExternalData::load_into(onnx::ModelProto& model) const {
  onnx::GraphProto& graph = *model.mutable_graph();
  for (onnx::TensorProto& tensor : *graph.mutable_initializer()) load_tensor(*this, tensor);
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_t()) load_tensor(*this, *attribute.mutable_t());
    }
  }
}

void copy_raw(const RawBytes& raw, size_t offset, size_t size, void* destination) {
  internal_assert(offset <= raw.bytes.size() && size <= raw.bytes.size() - offset);
  if (size == 0) return;
  if (!raw.mapped) {
    std::memcpy(destination, raw.bytes.data() + offset, size);
  } else if (!guarded_copy(destination, raw.bytes.data() + offset, size)) {
    user_error("E1358").hint("do not change the model's external data files while presk imports it")
        << "an external data file shrank while presk read it";
  }
}

void release_pages(std::span<const std::byte> bytes, const RawBytes& raw) {
  if (raw.mapped) release_mapped_pages(bytes);
}

}  // namespace presk::onnx_import
