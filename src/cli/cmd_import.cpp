// `presk import MODEL.onnx --out model.psk --weights-out model.safetensors [--dim NAME=N] [--fix-input NAME=FILE]
// [--strip-qdq]`:
// an ONNX model as a presk program and its weights (docs/import.md).
#include <iostream>

#include "cli/command.h"
#include "cli/pipeline.h"
#include "import/onnx_import.h"
#include "support/atomic_file.h"
#include "support/diagnostics.h"

namespace presk::cli {
namespace {

struct ImportCommandOptions {
  std::string model;
  std::string out;
  std::string weights_out;
  std::vector<std::string> dims;  // "NAME=N"
  std::vector<std::string> fixed_inputs;  // "NAME=FILE"
  bool strip_qdq = false;
};

int run_import(const ImportCommandOptions& options) {
  onnx_import::ImportOptions import;
  import.source_name = options.model;
  import.strip_qdq = options.strip_qdq;
  for (const lang::Binding& binding : parse_bindings(options.dims, "--dim", "E0005")) {
    import.dims[binding.name] = binding.value;
  }
  for (const std::string& fixed : options.fixed_inputs) {
    size_t equals = fixed.find('=');
    if (equals == 0 || equals == std::string::npos || equals + 1 == fixed.size() ||
        !import.fixed_inputs.emplace(fixed.substr(0, equals), fixed.substr(equals + 1)).second) {
      user_error("E1339").hint("write --fix-input NAME=FILE, once per graph input")
          << "--fix-input `" << fixed << "` is not NAME=FILE for a graph input not fixed before";
    }
  }
  check_output_files({{"--out", options.out}, {"--weights-out", options.weights_out}}, {{"MODEL", options.model}});
  std::cerr << "import: reading " << options.model << "\n";
  onnx_import::ImportedModel model = onnx_import::import_onnx_file(options.model, import);
  onnx_import::write_weights(model, options.weights_out);
  write_file_atomically(options.out, model.program);
  std::cerr << "import: wrote " << options.out << " and " << options.weights_out << " (" << model.weights.size()
            << " parameters)\n";
  return 0;
}

Registration registration("import", 15, [](CLI::App& app, GlobalOptions&) {
  auto options = std::make_shared<ImportCommandOptions>();
  CLI::App* command = app.add_subcommand("import", "Import an ONNX model as a presk program and its weights");
  command->add_option("MODEL", options->model, "The .onnx model (opsets 6-21)")->required();
  command->add_option("--out", options->out, "The .psk program to write")->required();
  command->add_option("--weights-out", options->weights_out,
                      "The safetensors file of its parameters (initializers and Constant nodes)")
      ->required();
  command->add_option("--dim", options->dims, "Bind a symbolic dimension of the inputs: NAME=N (repeatable)");
  command->add_option("--fix-input", options->fixed_inputs,
                      "Fold a graph input to a constant at import: NAME=FILE, FILE a serialized ONNX TensorProto "
                      "(.pb) or a .npy array (repeatable)");
  command->add_flag("--strip-qdq", options->strip_qdq,
                    "Write the float model: drop each QuantizeLinear/DequantizeLinear pair, dequantize constant "
                    "quantized weights at import");
  return [options] { return run_import(*options); };
});

}  // namespace
}  // namespace presk::cli
