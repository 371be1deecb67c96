// ONNX import: reads an ONNX model (protobuf bytes) and writes an ordinary presk program
// with its parameters (initializers and Constant nodes) as safetensors tensors named by their
// paths. docs/import.md: the operator table, the naming and the mapping metadata.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
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

struct Constant;
// One parameter's tensor as the weights file stores it; its bytes stay where the model keeps
// them (the protobuf, a memory-mapped external data file) until write_weights copies them.
struct ImportedWeight {
  std::string name;  // the parameter's path
  // A float initializer's own type where presk reads it (f32, f64, bf16); else, as always, f64
  // from a DOUBLE source and f32 otherwise (FLOAT16, 8-bit codes, masks, computed constants).
  ElementType type;
  std::vector<int64_t> shape;
  std::shared_ptr<const Constant> constant;
};

struct ImportedModel {
  std::string program;                          // the .psk source
  std::vector<ImportedWeight> weights;          // in the program's parameter order
  std::map<std::string, std::string> metadata;  // the safetensors `__metadata__`
};

// The program and weights of a serialized ONNX ModelProto. Errors E1300-E1349 name the node,
// its operator and what is supported.
ImportedModel import_onnx(std::span<const uint8_t> bytes, const ImportOptions& options);

// Reads `path` (E1300 when it cannot be read) and imports it, its external data read from the
// folder that holds it.
ImportedModel import_onnx_file(const std::string& path, const ImportOptions& options);

// Writes the model's weights to `path` as safetensors (atomically, E0130-E0133), streaming: one
// block in memory at a time, never a tensor's values as doubles (weights_file.cpp).
void write_weights(const ImportedModel& model, const std::string& path);

}  // namespace presk::onnx_import
