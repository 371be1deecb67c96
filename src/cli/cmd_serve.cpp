// `presk serve PROGRAM --weights W [--realize R] [--port P]`: the decode entry over HTTP
// (src/serve): OpenAI-style completions, health and models, on 127.0.0.1 by default.
#include "cli/command.h"
#include "cli/pipeline.h"
#include "exec/reference/weights.h"
#include "serve/serve.h"

namespace presk::cli {
namespace {

struct ServeCommandOptions {
  std::string program_path;
  BindingOptions bindings;
  std::string weights;
  std::string realize = "f32";
  bool exact = false;
  long bits = 128;
  serve::ServeOptions serve;
};

int run_serve(const ServeCommandOptions& options, const GlobalOptions& global) {
  // Every entry: a realization solved on loss/logits names their sites (mapped onto decode's).
  const ir::Program program = lang::compile(lang::read_source(options.program_path), frontend_options(options.bindings, ""));
  const generate::DecodeEntry entry = generate::find_decode_entry(program);
  const reference::ParameterStore weights = reference::load_weights(program, options.weights);
  const generate::Vocabulary vocabulary = generate::read_vocabulary(options.weights, entry.vocabulary);
  serve::Generator generator{entry, &vocabulary, options.exact ? "exact" : options.realize, nullptr};
  if (options.exact) {
    generator.stepper = [&] { return generate::exact_stepper(program, weights, options.bits); };
    return serve::serve(generator, options.serve);
  }
  // One thread per generation by default: requests run side by side (the bits do not depend on it).
  const generate::NativeModel model =
      generate::prepare_native(program, weights, exec::native::read_realization(options.realize), global.threads > 0 ? global.threads : 1);
  generator.stepper = [&] { return generate::native_stepper(model); };
  return serve::serve(generator, options.serve);
}

Registration registration("serve", 62, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<ServeCommandOptions>();
  CLI::App* command = app.add_subcommand("serve", "Serve a program's decode entry over HTTP (OpenAI-style /v1/completions)");
  command->add_option("program", options->program_path, "The .psk program (with an entry `decode`)")->required();
  add_binding_options(*command, options->bindings);
  command->add_option("--weights", options->weights, "Trained weights (presk train --weights-out): parameters and vocabulary")
      ->required();
  command->add_option("--realize", options->realize, "Native realization: f64, f32, bf16 or @file.json")->capture_default_str();
  command->add_flag("--exact", options->exact, "Generate with the exact reference (slow; for measuring)");
  command->add_option("--bits", options->bits, "The exact reference's precision")->check(CLI::Range(53L, 1L << 20))->capture_default_str();
  command->add_option("--host", options->serve.host, "The address to listen on")->capture_default_str();
  command->add_option("--port", options->serve.port, "The port (0: any free one, printed on stderr)")
      ->check(CLI::Range(0, 65535))->capture_default_str();
  command->add_option("--workers", options->serve.workers, "Generations at once")->check(CLI::Range(1, 256))->capture_default_str();
  command->add_option("--queue", options->serve.queue, "Requests that may wait for a worker; more get 503")
      ->check(CLI::Range(0, 4096))->capture_default_str();
  command->add_option("--model-name", options->serve.model_name, "The model's id in /v1/models and responses")->capture_default_str();
  add_threads_option(*command, global);
  return [options, &global] { return run_serve(*options, global); };
});

}  // namespace
}  // namespace presk::cli
