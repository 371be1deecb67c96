// Reading an ONNX model's protobuf and its opset (onnx_reader.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

namespace presk {
class MappedFile;
}

namespace presk::onnx_import {

inline constexpr int kMinOpset = 1;
inline constexpr int kMaxOpset = 21;

// The model in `bytes`: E1301 when the protobuf is corrupt or truncated or holds no graph.
onnx::ModelProto parse_model(std::span<const uint8_t> bytes, const std::string& name);
// The opset of the default domain: E1306 outside kMinOpset … kMaxOpset.
int default_opset(const onnx::ModelProto& model, const std::string& name);
// The model in the file at `path`, parsed as it is read (no copy of the file's bytes beside the
// model: peak memory about the model's size): E1300 when it cannot be read, E0016 past 2 GiB
// (protobuf's limit), E1301 as parse_model.
onnx::ModelProto parse_model_file(const std::string& path, const std::string& name);
// A tensor file for --fix-input: a serialized TensorProto (.pb) or a .npy array (E1300 when it
// cannot be read, E1337 when it is neither).
onnx::TensorProto read_tensor_file(const std::string& path);
// The same from the file's bytes (`path` names it in messages).
onnx::TensorProto parse_tensor(const std::string& bytes, const std::string& path);
// The bytes of one element of a TensorProto data type (0 for a type presk does not read).
size_t element_bytes(int data_type);
// The external data files of a model (external_data.cpp): `location` relative to `folder`, the
// model's; each file memory-mapped once, read-only, and kept mapped while a constant points
// into it. E1357 when a location leaves the folder (or `folder` is empty), E1358 when the file
// is missing or too short, E1309 when `offset` or `length` is malformed.
struct RawBytes;
class ExternalData {
 public:
  explicit ExternalData(std::string folder) : folder_(std::move(folder)) {}
  // Checks every external tensor of the graph (initializers, Constant nodes) up front.
  void check_all(const onnx::ModelProto& model) const;
  // The tensor's bytes inside its file's mapping.
  std::shared_ptr<const RawBytes> bytes_of(const onnx::TensorProto& tensor) const;
  // Every external tensor's bytes copied into the tensor (raw_data), for ONNX's version
  // converter, which would drop the references.
  void load_into(onnx::ModelProto& model) const;

 private:
  std::string folder_;
  mutable std::map<std::string, std::shared_ptr<const MappedFile>> files_;  // by location
};
// "FLOAT", "INT64", … for messages.
const char* data_type_name(int data_type);

}  // namespace presk::onnx_import
