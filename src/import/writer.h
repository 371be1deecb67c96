// Writing the imported program: the module tree of the parameters, one entry per graph
// output with the lets it needs, the mapping in comments; the weights and their metadata.
#pragma once

#include <string>
#include <vector>

#include "import/builder.h"

namespace presk::onnx_import {

struct ModelOutput {
  std::string onnx_name;
  Value value;
};

struct WriterInput {
  std::string source_name;
  int opset = 0;
  std::string producer;
  std::vector<std::string> dims;  // sorted
  std::vector<ModelOutput> outputs;
};

ImportedModel write_model(const Builder& builder, const WriterInput& input);

// The type a parameter made from `constant` is stored in (weights_file.cpp).
ElementType weight_type(const Constant& constant);

}  // namespace presk::onnx_import
