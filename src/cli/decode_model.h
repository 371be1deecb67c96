// The model options `presk generate` and `presk serve` share (PROGRAM, --const/--dim, --weights,
// --realize, --exact, --bits), declared once, and the model they load: the program with every
// entry compiled (a realization solved on loss/logits names their sites, mapped onto decode's),
// its decode entry, the weights and the vocabulary they record.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cli/pipeline.h"
#include "exec/reference/parameters.h"
#include "generate/generate.h"
#include "ir/ir.h"

namespace presk::cli {

struct DecodeModelOptions {
  std::string program_path;
  BindingOptions bindings;
  std::string weights;
  std::string realize = "f32";
  bool exact = false;
  long bits = 128;
  // The generation's name: `exact` under --exact, else the realization's argument.
  const std::string& side() const;
};
void add_decode_model_options(CLI::App& command, DecodeModelOptions& options);

struct DecodeModel {
  explicit DecodeModel(const DecodeModelOptions& options);
  DecodeModel(const DecodeModel&) = delete;
  DecodeModel& operator=(const DecodeModel&) = delete;

  ir::Program program;
  generate::DecodeEntry entry;  // points into `program`
  reference::ParameterStore weights;
  generate::Vocabulary vocabulary;
};

}  // namespace presk::cli
