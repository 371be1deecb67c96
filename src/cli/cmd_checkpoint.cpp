// `presk checkpoint synth`: a deterministic synthetic Hugging Face checkpoint of a program
// (docs/checkpoints.md), for models whose real weights cannot be had here.
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/pipeline.h"
#include "exec/reference/checkpoint.h"
#include "lang/frontend.h"
#include "support/cancel.h"
#include "support/diagnostics.h"
#include "support/sha256.h"
#include "support/signal_cancel.h"

namespace presk::cli {
namespace {

struct SynthOptions {
  std::string program_path;
  BindingOptions bindings;
  std::string out;
  std::string dtype = "bf16";
  std::string shard_size = "2GB";
  bool quiet = false;
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

// At most one line a second on stderr: bytes written, elapsed and the time left at this pace.
std::function<void(uint64_t, uint64_t)> progress_printer(bool quiet) {
  if (quiet) return {};
  const auto start = std::chrono::steady_clock::now();
  auto last = std::make_shared<double>(0);
  return [start, last](uint64_t done, uint64_t total) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done < total && seconds - *last < 1) return;
    *last = seconds;
    const double left = done > 0 ? seconds * static_cast<double>(total - done) / static_cast<double>(done) : 0;
    std::cerr << fmt::format("checkpoint synth: {:.1f}/{:.1f} MB, {:.1f} s, about {:.0f} s left\n", done / 1e6,
                             total / 1e6, seconds, left);
  };
}

int run_synth(const SynthOptions& options, const GlobalOptions& global) {
  const uint64_t shard_bytes = parse_shard_size(options.shard_size);
  const ir::Program program =
      lang::compile(lang::read_source(options.program_path), frontend_options(options.bindings, ""));
  SignalCancel signals;  // Ctrl-C or SIGTERM: the file being written is removed, not left partial
  reference::SynthCheckpointReport report;
  try {
    report = reference::write_synthetic_checkpoint(program, {options.out, global.seed, dtype_of(options.dtype),
                                                             shard_bytes, global.threads,
                                                             progress_printer(options.quiet)});
  } catch (const Cancelled&) {
    std::cerr << "checkpoint synth: stopped by " << SignalCancel::received_name()
              << "; the file being written was removed (the files written before it are whole)" << std::endl;
    signals.reraise();
  }
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
  synth->add_flag("--quiet", options->quiet, "No progress on stderr");
  add_seed_option(*synth, global);
  add_threads_option(*synth, global);
  add_json_option(*synth, global);
  return [options, &global] { return run_synth(*options, global); };
});

}  // namespace
}  // namespace presk::cli
