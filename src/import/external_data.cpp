// External data (docs/import.md, "Large models"): a tensor saved with
// `onnx.save(..., save_as_external_data=True)` keeps its bytes in a file beside the model
// (`location` relative to the model's folder, optional `offset` and `length`). Those bytes are
// read into the tensor before anything else reads it, so the rest of the import sees ordinary
// raw data. A location that leaves the folder (absolute, `..`, a link out) is E1357 and is
// never opened; a file that is missing, not a regular file, or too short is E1358.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include "import/builder.h"
#include "import/onnx_reader.h"
#include "support/diagnostics.h"

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

// The tensor's bytes read from its external file into raw_data (E1358 when the file is missing or
// too short, E1309 when `length` disagrees with the tensor's size).
void load_tensor(onnx::TensorProto& tensor, const std::string& folder) {
  const ExternalPlace place = external_place(tensor);
  const uint64_t needed = needed_bytes(tensor);
  if (place.length && *place.length != needed) {
    user_error("E1309").hint("save the model again with onnx.save(model, path, save_as_external_data=True)")
        << "tensor `" << printable(tensor.name()) << "`: its external data is " << *place.length
        << " bytes long, and its type and shape need " << needed;
  }
  const fs::path path = resolved_inside(tensor, place.location, folder);
  std::error_code error;
  const bool regular = fs::is_regular_file(path, error);
  const uint64_t size = regular ? fs::file_size(path, error) : 0;
  auto unreadable = [&](const std::string& why) {
    user_error("E1358").hint("copy the model's external data files whole, beside the model")
        << "tensor `" << printable(tensor.name()) << "`: its external data file `"
        << printable(place.location) << "` " << why;
  };
  if (!regular || error) unreadable("is missing or is not a regular file");
  if (place.offset > size || needed > size - place.offset) {
    unreadable("holds " + std::to_string(size) + " bytes; the tensor needs " + std::to_string(needed) +
               " from offset " + std::to_string(place.offset) + " (a truncated file?)");
  }
  std::string bytes(needed, '\0');
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(place.offset));
  if (!in || !in.read(bytes.data(), static_cast<std::streamsize>(needed))) unreadable("cannot be read");
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
  tensor.set_raw_data(std::move(bytes));
}

void load_if_external(onnx::TensorProto& tensor, const std::string& folder) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) load_tensor(tensor, folder);
}

}  // namespace

void load_external_data(onnx::ModelProto& model, const std::string& folder) {
  onnx::GraphProto& graph = *model.mutable_graph();
  for (onnx::TensorProto& tensor : *graph.mutable_initializer()) load_if_external(tensor, folder);
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_t()) load_if_external(*attribute.mutable_t(), folder);
    }
  }
}

}  // namespace presk::onnx_import
