// The model options of presk generate and presk serve (decode_model.h).
#include "cli/decode_model.h"

#include "exec/reference/weights.h"
#include "lang/frontend.h"

namespace presk::cli {

const std::string& DecodeModelOptions::side() const {
  static const std::string kExact = "exact";
  return exact ? kExact : realize;
}

void add_decode_model_options(CLI::App& command, DecodeModelOptions& options) {
  command.add_option("program", options.program_path, "The .psk program (with an entry `decode`)")->required();
  add_binding_options(command, options.bindings);
  command.add_option("--weights", options.weights, "Trained weights (presk train --weights-out): parameters and vocabulary")
      ->required();
  command.add_option("--realize", options.realize, "Native realization: f64, f32, bf16 or @file.json")->capture_default_str();
  command.add_flag("--exact", options.exact, "Generate with the exact reference (slow; for measuring)");
  command.add_option("--bits", options.bits, "The exact reference's precision")->check(CLI::Range(53L, 1L << 20))->capture_default_str();
}

DecodeModel::DecodeModel(const DecodeModelOptions& options)
    // Every entry: a realization solved on loss/logits names their sites (mapped onto decode's).
    : program(lang::compile(lang::read_source(options.program_path), frontend_options(options.bindings, ""))),
      entry(generate::find_decode_entry(program)),
      weights(reference::load_weights(program, options.weights)),
      vocabulary(generate::read_vocabulary(options.weights, entry.vocabulary)) {}

}  // namespace presk::cli
