// ONNX import: reads an ONNX model (protobuf bytes) and writes an ordinary presk program
// with its parameters (initializers and Constant nodes) as safetensors tensors named by their
// paths. docs/import.md: the operator table, the naming and the mapping metadata.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "support/tensor.h"

namespace presk::onnx_import {

struct ImportOptions {
  std::string source_name = "model.onnx";   // the model in messages and in the program's comments
  std::map<std::string, int64_t> dims;      // --dim: a symbolic dimension bound to an extent
  bool strip_qdq = false;                   // --strip-qdq: the float model without its Q/DQ pairs
  // --fix-input NAME=FILE: a graph input folded at import to the tensor in FILE (a serialized
  // TensorProto or a .npy array), as if it were an initializer.
  std::map<std::string, std::string> fixed_inputs;
  // The folder external data is read from (the model's: import_onnx_file sets it); a location
  // outside it, or any external data when it is empty, is E1357.
  std::string folder;
};

struct ImportedModel {
  std::string program;                                  // the .psk source
  std::vector<std::pair<std::string, Tensor>> weights;  // parameter path → values
  std::map<std::string, std::string> metadata;          // the safetensors `__metadata__`
};

// The program and weights of a serialized ONNX ModelProto. Errors E1300-E1349 name the node,
// its operator and what is supported.
ImportedModel import_onnx(std::span<const uint8_t> bytes, const ImportOptions& options);

// Reads `path` (E1300 when it cannot be read) and imports it, its external data read from the
// folder that holds it.
ImportedModel import_onnx_file(const std::string& path, const ImportOptions& options);

}  // namespace presk::onnx_import
