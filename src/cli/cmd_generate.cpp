// `presk generate PROGRAM --weights W --prompt TEXT --tokens N`: text from a program's decode
// entry (src/generate), streamed as it is generated; `--compare R2|exact` generates under a
// second realization (or the exact reference) in lockstep and reports per step the logit gap,
// the flips of the choice and the first divergence.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/decode_model.h"
#include "generate/generate.h"
#include "numerics/bind.h"
#include "numerics/contract_json.h"
#include "numerics/quantize.h"
#include "support/diagnostics.h"

namespace presk::cli {
namespace {

struct GenerateOptions {
  DecodeModelOptions model;
  std::string prompt;
  int64_t tokens = 0;
  std::string compare;  // R2 | exact
  std::string contract;  // a chip contract the first side runs (docs/chip.md)
  generate::Sampling sampling;
};

// One side of a generation: the native executor under a realization (running the chip's
// program where a contract is given), or the exact reference.
struct Side {
  std::string name;
  std::unique_ptr<ir::Program> chip;  // the program the native model runs, where not the plain one
  std::optional<generate::NativeModel> model;
  std::unique_ptr<generate::Stepper> stepper;
};

Side make_side(const std::string& what, const ir::Program& program, const reference::ParameterStore& weights, long bits,
               int threads, const std::string& contract_path = "") {
  Side side{what, nullptr, std::nullopt, nullptr};
  if (what == "exact") {
    side.stepper = generate::exact_stepper(program, weights, bits);
    return side;
  }
  exec::native::Realization realization = exec::native::read_realization(what);
  if (!contract_path.empty()) {  // the chip's program: its quantizes, its caches' keeps and its integer sums
    const numerics::Contract contract = numerics::read_contract_file(contract_path);
    realization = numerics::chip_realization(realization, contract);
    const std::vector<numerics::QuantizedProduct> products = numerics::bind_contract(contract, program, &realization);
    side.chip = std::make_unique<ir::Program>(
        numerics::chip_program(program, contract, numerics::quantize(program, contract, products), products));
    side.name = what + "+" + contract.chip;
  }
  side.model.emplace(generate::prepare_native(side.chip ? *side.chip : program, weights, realization, threads));
  side.stepper = generate::native_stepper(*side.model);
  return side;
}

// A token's character (a code point 0–255, held as one byte) as UTF-8, as JSON writes text: a
// vocabulary past ASCII (the Llama's 256 code points) would otherwise make invalid UTF-8.
std::string utf8(const std::string& characters) {
  std::string out;
  for (const char c : characters) {
    const auto code = static_cast<unsigned char>(c);
    if (code < 0x80) {
      out += c;
    } else {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }
  return out;
}

void print_comparison(const generate::Comparison& result, const generate::Vocabulary& vocabulary, const Side& first,
                      const Side& second, bool json) {
  if (json) {
    nlohmann::json steps = nlohmann::json::array();
    for (const generate::CompareStep& s : result.steps) {
      steps.push_back({{"position", s.position}, {"gap", s.gap}, {"first", utf8(vocabulary.decode(s.first))},
                       {"second", utf8(vocabulary.decode(s.second))}, {"flip", s.first != s.second}});
    }
    nlohmann::json out = {{"first", first.name}, {"second", second.name}, {"flips", result.flips},
                          {"largest_gap", result.largest_gap}, {"steps", steps}};
    out["first_divergence"] = result.first_divergence ? nlohmann::json(*result.first_divergence) : nlohmann::json();
    std::cout << out.dump(2) << '\n';
    return;
  }
  std::cout << fmt::format("\n\n{:>4}  {:>8}  {:>12}  {:>6}  {:>6}\n", "step", "position", "logit gap", first.name,
                           second.name);
  for (size_t s = 0; s < result.steps.size(); ++s) {
    const generate::CompareStep& step = result.steps[s];
    std::cout << fmt::format("{:>4}  {:>8}  {:>12.4g}  {:>6}  {:>6}{}\n", s, step.position, step.gap,
                             nlohmann::json(utf8(vocabulary.decode(step.first))).dump(),
                             nlohmann::json(utf8(vocabulary.decode(step.second))).dump(),
                             step.first != step.second ? "  flip" : "");
  }
  std::cout << fmt::format("flips: {} of {} steps; largest logit gap {:.4g}; first divergence: {}\n", result.flips,
                           result.steps.size(), result.largest_gap,
                           result.first_divergence ? fmt::format("step {}", *result.first_divergence) : "none");
}

int run_generate(const GenerateOptions& options, const GlobalOptions& global) {
  if (options.model.exact && options.compare == "exact") {
    user_error("E1516").hint("compare a realization with the reference: --realize R --compare exact")
        << "--exact and --compare exact name the same generation twice";
  }
  if (!options.contract.empty() && options.model.exact) {
    usage_error("E1725").hint("run the chip natively: --realize R --contract C.json (--compare exact to measure it)")
        << "--contract runs the chip's program on the native executor; --exact generates with the exact reference";
  }
  const DecodeModel model(options.model);
  const generate::Vocabulary& vocabulary = model.vocabulary;
  const std::vector<int64_t> prompt = vocabulary.encode(options.prompt);
  generate::check_fits(model.entry, prompt.size(), options.tokens);
  Side first = make_side(options.model.side(), model.program, model.weights, options.model.bits, global.threads,
                         options.contract);
  if (!options.compare.empty()) {
    Side second = make_side(options.compare, model.program, model.weights, options.model.bits, global.threads);
    if (!global.json) std::cout << options.prompt << std::flush;
    const generate::Comparison result = generate::compare(
        *first.stepper, *second.stepper, prompt, options.tokens, options.sampling, [&](const generate::CompareStep& step) {
          if (!global.json) std::cout << vocabulary.decode(step.first) << std::flush;
        });
    print_comparison(result, vocabulary, first, second, global.json);
    return 0;
  }
  if (!global.json) std::cout << options.prompt << std::flush;
  const std::vector<int64_t> generated =
      generate::generate(*first.stepper, prompt, options.tokens, options.sampling, [&](int64_t token) {
        if (!global.json) std::cout << vocabulary.decode(token) << std::flush;
        return true;
      });
  std::string text;
  for (int64_t token : generated) text += vocabulary.decode(token);
  if (global.json) {
    std::cout << nlohmann::json{{"prompt", options.prompt}, {"text", utf8(text)}, {"tokens", generated}, {"realize", first.name}}.dump()
              << '\n';
  } else {
    std::cout << '\n';
  }
  return 0;
}

Registration registration("generate", 60, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* command = app.add_subcommand("generate", "Generate text with a program's decode entry, token by token");
  add_decode_model_options(*command, options->model);
  command->add_option("--prompt", options->prompt, "The text to continue")->required();
  command->add_option("--tokens", options->tokens, "Tokens to generate")->required()->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  command->add_option("--compare", options->compare,
                      "Also generate under R2 (a realization) or `exact`, fed the same tokens: per step the logit gap, flips, first divergence");
  command->add_option("--contract", options->contract,
                      "A chip contract (docs/chip.md): the first generation runs the chip's program, its activations "
                      "quantized and its caches kept as the contract says");
  command->add_option("--temperature", options->sampling.temperature, "0: greedy; else sample softmax(logits / T)")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();
  command->add_option("--top-k", options->sampling.top_k, "Sample among the K largest logits (0: all)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30))->capture_default_str();
  command->add_option("--seed", options->sampling.seed, "The sampler's seed (same seed, same text)")->capture_default_str();
  add_threads_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_generate(*options, global); };
});

}  // namespace
}  // namespace presk::cli
