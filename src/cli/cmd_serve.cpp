// `presk serve PROGRAM --weights W [--realize R] [--port P]`: the decode entry over HTTP
// (src/serve): OpenAI-style completions, health and models, on 127.0.0.1 by default.
#include "cli/command.h"
#include "cli/decode_model.h"
#include "serve/serve.h"

namespace presk::cli {
namespace {

struct ServeCommandOptions {
  DecodeModelOptions model;
  serve::ServeOptions serve;
};

int run_serve(const ServeCommandOptions& options, const GlobalOptions& global) {
  const DecodeModel model(options.model);
  serve::Generator generator{model.entry, &model.vocabulary, options.model.side(), nullptr};
  if (options.model.exact) {
    generator.stepper = [&] { return generate::exact_stepper(model.program, model.weights, options.model.bits); };
    return serve::serve(generator, options.serve);
  }
  // One thread per generation by default: requests run side by side (the bits do not depend on it).
  const generate::NativeModel native = generate::prepare_native(
      model.program, model.weights, exec::native::read_realization(options.model.realize), global.threads > 0 ? global.threads : 1);
  generator.stepper = [&] { return generate::native_stepper(native); };
  return serve::serve(generator, options.serve);
}

Registration registration("serve", 62, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<ServeCommandOptions>();
  CLI::App* command = app.add_subcommand("serve", "Serve a program's decode entry over HTTP (OpenAI-style /v1/completions)");
  add_decode_model_options(*command, options->model);
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
