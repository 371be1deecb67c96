// `presk checkpoint synth`: a deterministic synthetic Hugging Face checkpoint of a program
// (docs/checkpoints.md), for models whose real weights cannot be had here.
#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/pipeline.h"
#include "exec/reference/checkpoint.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"
#include "support/sha256.h"

namespace presk::cli {
namespace {

struct SynthOptions {
  std::string program_path;
  BindingOptions bindings;
  std::string out;
  std::string dtype = "bf16";
  std::string shard_size = "2GB";
};

// "2GB", "500MB", "1GiB", "4096": bytes (decimal units 10³ⁿ, binary ones 2¹⁰ⁿ); "0": one file.
uint64_t parse_shard_size(const std::string& text) {
  uint64_t number = 0;
  const auto [rest, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  const std::string unit(rest, text.data() + text.size());
  const std::pair<const char*, uint64_t> kUnits[] = {{"", 1},          {"B", 1},           {"KB", 1000},
                                                     {"MB", 1000000},  {"GB", 1000000000}, {"KiB", 1 << 10},
                                                     {"MiB", 1 << 20}, {"GiB", 1 << 30}};
  for (const auto& [name, scale] : kUnits) {
    if (error == std::errc() && rest != text.data() && unit == name && number <= UINT64_MAX / scale) return number * scale;
  }
  user_error("E0159").hint("give a byte count such as 2GB, 500MB, 1GiB or 0 (one file)")
      << "--shard-size " << text << " is not a size";
  return 0;
}

ElementType dtype_of(const std::string& name) {
  return name == "f32" ? ElementType::f32 : name == "f64" ? ElementType::f64 : ElementType::bf16;
}

int run_synth(const SynthOptions& options, const GlobalOptions& global) {
  const uint64_t shard_bytes = parse_shard_size(options.shard_size);
  const ir::Program program =
      lang::compile(lang::read_source(options.program_path), frontend_options(options.bindings, ""));
  const reference::SynthCheckpointReport report = reference::write_synthetic_checkpoint(
      program, {options.out, global.seed, dtype_of(options.dtype), shard_bytes});
  if (global.json) {
    nlohmann::ordered_json files = nlohmann::ordered_json::array();
    for (const std::string& file : report.files) files.push_back({{"path", file}, {"sha256", sha256_file(file)}});
    nlohmann::ordered_json out = {{"out", options.out},         {"seed", global.seed},
                                  {"dtype", options.dtype},     {"tensors", report.tensors},
                                  {"parameters", report.elements}, {"bytes", report.bytes},
                                  {"files", files}};
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  std::cout << fmt::format("checkpoint  {}: {} tensors, {} parameters in {} ({} bytes), seed {}\n", options.out,
                           report.tensors, report.elements, options.dtype, report.bytes, global.seed);
  for (const std::string& file : report.files) std::cout << "  " << file << "\n";
  return 0;
}

Registration registration("checkpoint", 72, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<SynthOptions>();
  CLI::App* checkpoint = app.add_subcommand("checkpoint", "Write checkpoints in the Hugging Face layout");
  checkpoint->require_subcommand(1);
  CLI::App* synth = checkpoint->add_subcommand(
      "synth", "A deterministic synthetic checkpoint of a program: config.json, shards, the index (docs/checkpoints.md)");
  synth->add_option("PROGRAM", options->program_path, "The .psk program (examples/llama.psk)")->required();
  add_binding_options(*synth, options->bindings);
  synth->add_option("--out", options->out, "The checkpoint folder (created when missing)")->required();
  synth->add_option("--dtype", options->dtype, "The tensors' type")
      ->check(CLI::IsMember({"bf16", "f32", "f64"}))
      ->capture_default_str();
  synth->add_option("--shard-size", options->shard_size, "Most tensor bytes a shard holds (2GB, 500MB, 1GiB; 0: one file)")
      ->capture_default_str();
  add_seed_option(*synth, global);
  add_json_option(*synth, global);
  return [options, &global] { return run_synth(*options, global); };
});

}  // namespace
}  // namespace presk::cli
