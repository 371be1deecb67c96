// `presk calibrate --precision PROGRAM --entry E --samples N --bits B --out ENVELOPE.json`:
// prepares the run as `presk run` does (cli/pipeline.h: bindings, --weights or synthesized
// parameters, --data or synthesized samples from --offset), measures the magnitude envelope on
// the exact reference (precision/calibrate.h), writes it atomically, and prints the sites with
// the largest magnitudes. Progress goes to stderr. `--step` (a training step's budget) is the other
// mode: cmd_calibrate_step.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/calibrate_step.h"
#include "cli/command.h"
#include "cli/phase_memory.h"
#include "cli/pipeline.h"
#include "exec/reference/interpreter.h"
#include "precision/calibrate.h"
#include "precision/envelope.h"
#include "support/diagnostics.h"
#include "support/hf_checkpoint.h"
#include "support/sha256.h"

namespace presk::cli {
namespace {

struct CalibrateOptions {
  bool precision = false;  // the mode: the magnitude envelope
  bool step = false;       // the other mode: a training step's budget (cmd_calibrate_step.cpp)
  RunInputOptions input;
  StepCommandOptions step_options;
  std::optional<long> bits;  // required by --precision; --step: 128
  std::string out;
  int sites = 10;  // sites printed, largest magnitude first
  bool quiet = false;
  std::string sweep;  // --sweep exact|f64 (empty: exact)
};

// The mode flags: exactly one of --precision and --step; --precision's own required options.
void check_mode(const CalibrateOptions& options) {
  if (options.step && options.precision) {
    user_error("E1257").hint("run one mode at a time")
        << "--precision and --step both given: presk calibrate measures one thing at a time";
  }
  if (!options.precision && !options.step) {
    user_error("E0910").hint("add --precision: presk calibrate --precision PROGRAM --entry E ..., or --step (docs/step.md)")
        << "presk calibrate needs a mode: --precision (the magnitude envelope of an entry) or --step (a training step)";
  }
  if (options.step) {
    if (!options.sweep.empty()) {
      user_error("E1401").hint("drop --sweep: a step envelope's yardstick is --yardstick exact|f64")
          << "--sweep is an option of `presk calibrate --precision`";
    }
    return;
  }
  if (!options.sweep.empty()) precision::parse_sweep(options.sweep);
  const char* missing = options.input.samples == 0 ? "--samples" : !options.bits ? "--bits" : options.out.empty() ? "--out" : nullptr;
  if (missing) {
    user_error("E1257").hint("presk calibrate --precision PROGRAM --entry E --samples N --bits B --out ENVELOPE.json")
        << "`presk calibrate --precision` needs " << missing;
  }
  const StepCommandOptions& s = options.step_options;
  if (s.warmup || !s.realize.empty() || !s.envelope.empty() || !s.profile.empty()) {
    user_error("E1257").hint("drop the --step options, or pass --step")
        << "--warmup, --realize, --envelope and --profile are options of `presk calibrate --step`";
  }
}

// "NAME=VALUE" texts (already checked by the front end's options) as name → value text.
void add_bindings(const std::vector<std::string>& texts, std::map<std::string, std::string>& bindings) {
  for (const std::string& text : texts) {
    size_t equals = text.find('=');
    bindings[text.substr(0, equals)] = equals == std::string::npos ? "" : text.substr(equals + 1);
  }
}

// "2.5127e1": five significant digits, the exponent unpadded (the spec's tables).
std::string magnitude_text(double value) {
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : "inf";
  if (value == 0) return "0";
  int exponent = static_cast<int>(std::floor(std::log10(value)));
  double mantissa = value / std::pow(10.0, exponent);
  if (std::stod(fmt::format("{:.4f}", mantissa)) >= 10) {
    mantissa /= 10;
    ++exponent;
  }
  return fmt::format("{:.4f}e{}", mantissa, exponent);
}

std::string optional_text(const std::optional<double>& value) {
  return value ? magnitude_text(*value) : "unknown";
}

// The `count` sites with the largest max |v|, ties in program order.
std::vector<const precision::SiteEnvelope*> top_sites(const precision::Envelope& envelope, int count) {
  std::vector<const precision::SiteEnvelope*> sites;
  for (const precision::SiteEnvelope& site : envelope.sites) sites.push_back(&site);
  std::stable_sort(sites.begin(), sites.end(), [](const auto* a, const auto* b) { return a->max_abs > b->max_abs; });
  sites.resize(std::min(sites.size(), static_cast<size_t>(std::max(count, 0))));
  return sites;
}

std::string provenance_text(const precision::Envelope& envelope) {
  std::string samples = envelope.data.empty()
      ? fmt::format("samples {}…{} synthesized from seed {} (no --data)", envelope.offset,
                    envelope.offset + envelope.samples - 1, envelope.seed)
      : fmt::format("samples {}…{} of {}", envelope.offset, envelope.offset + envelope.samples - 1, envelope.data);
  if (envelope.data.empty() && envelope.token_range > 0) samples += fmt::format(", tokens in [0, {})", envelope.token_range);
  std::string parameters = envelope.weights.empty() ? fmt::format("parameters synthesized from seed {}", envelope.seed)
                                                    : "parameters from " + envelope.weights;
  return samples + "; " + parameters;
}

void print_table(const precision::Envelope& envelope, const CalibrateOptions& options, double seconds) {
  std::cout << "presk calibrate: " << envelope.sites.size() << " sites over " << envelope.samples << " samples of `"
            << envelope.entry << "` at " << envelope.bits << " bits\n"
            << "# " << provenance_text(envelope) << "\n"
            << fmt::format("# {:.1f} s; written to {}; output max |v| {}\n", seconds, options.out,
                           magnitude_text(envelope.output_max_abs));
  std::vector<const precision::SiteEnvelope*> sites = top_sites(envelope, options.sites);
  size_t width = 4;
  for (const auto* site : sites) width = std::max(width, site->site.size());
  std::cout << fmt::format("{:<{}}  {:>10}  {:<13}  {:>15}  {:>11}\n", "site", width, "max |v|", "op",
                           "elements/sample", "||dL/dv||_1");
  for (const auto* site : sites) {
    std::cout << fmt::format("{:<{}}  {:>10}  {:<13}  {:>15}  {:>11}\n", site->site, width,
                             magnitude_text(site->max_abs), site->op, site->elements_per_sample,
                             optional_text(site->sensitivity));
  }
}

void print_json(const precision::Envelope& envelope, const CalibrateOptions& options, double seconds) {
  nlohmann::ordered_json top = nlohmann::ordered_json::array();
  nlohmann::ordered_json full = precision::envelope_json(envelope);
  for (const auto* site : top_sites(envelope, options.sites)) {
    top.push_back(full["sites"][static_cast<size_t>(site - envelope.sites.data())]);
  }
  nlohmann::ordered_json out = {{"program", envelope.program}, {"entry", envelope.entry},
                        {"program_hash", envelope.program_hash}, {"samples", envelope.samples},
                        {"offset", envelope.offset}, {"bits", envelope.bits},
                        {"synthesized", envelope.data.empty()}, {"data", envelope.data},
                        {"weights", envelope.weights}, {"seed", envelope.seed},
                        {"sites", envelope.sites.size()}, {"parameters", envelope.parameters.size()},
                        {"output_max_abs", full["output_max_abs"]}, {"out", options.out},
                        {"date", envelope.date}, {"seconds", seconds}, {"top", std::move(top)}};
  std::cout << out.dump(2) << "\n";
}

std::function<void(const precision::CalibrationProgress&)> progress_printer(bool quiet) {
  if (quiet) return {};
  return [](const precision::CalibrationProgress& p) {
    std::string exact = p.exact > 0 ? fmt::format(", exact outputs {}/{}", p.exact_done, p.exact) : "";
    std::cerr << fmt::format("calibrate: {}/{} samples, reverse sweep {}{}, {:.1f} s\n", p.samples_done, p.samples,
                             p.sensitivity_done ? "done" : "running", exact, p.seconds);
  };
}

int run_calibrate(const CalibrateOptions& options, const GlobalOptions& global) {
  try {
    check_mode(options);
  } catch (const UserError& error) {
    std::cerr << error.what() << std::endl;
    return 2;
  }
  if (options.step) {
    return run_calibrate_step(options.input, options.step_options, options.bits, options.out, options.quiet, global);
  }
  check_output_files({{"--out", options.out}}, run_input_files(options.input));
  RunInputOptions input = options.input;
  const precision::Sweep sweep = options.sweep.empty() ? precision::Sweep::exact : precision::parse_sweep(options.sweep);
  input.memory.reference_bytes = reference_bytes_per_element(*options.bits, false);
  input.memory.observed = sweep == precision::Sweep::exact;  // --sweep f64: the reference's runs are unobserved
  input.memory.phases = [&](const PreparedRun& run) { return calibrate_phases(run, sweep, *options.bits, global.threads); };
  PreparedRun prepared = prepare_run(input, global);
  precision::CalibrationOptions calibration{*options.bits, global.threads, progress_printer(options.quiet), sweep};
  auto start = std::chrono::steady_clock::now();
  precision::Envelope envelope = precision::calibrate(
      prepared.program, options.input.entry, prepared.parameters, prepared.count,
      [&](int64_t k) { return prepared.inputs(k, global.seed); }, calibration);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  envelope.program = options.input.program_path;
  add_bindings(options.input.bindings.consts, envelope.bindings);
  add_bindings(options.input.bindings.dims, envelope.bindings);
  envelope.data = options.input.data;
  envelope.seed = static_cast<int64_t>(global.seed);
  envelope.token_range = prepared.data ? 0 : prepared.token_range;
  envelope.offset = prepared.first;
  envelope.weights = options.input.weights;
  if (!envelope.weights.empty()) envelope.weights_sha256 = weights_sha256(envelope.weights);
  if (!envelope.data.empty()) envelope.data_sha256 = sha256_file(envelope.data);
  precision::write_envelope(envelope, options.out);
  if (global.json) print_json(envelope, options, seconds);
  else print_table(envelope, options, seconds);
  return 0;
}

Registration registration("calibrate", 30, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* command = app.add_subcommand(
      "calibrate", "Measure on the exact reference: --precision, the magnitude envelope of every site of an entry; "
                   "--step, one training step's update under realizations against the exact step");
  command->add_flag("--precision", options->precision,
                    "Mode: the magnitude envelope (per site max |v|, element counts, terms, rounding "
                    "error per type, sensitivity) over --samples samples");
  command->add_flag("--step", options->step,
                    "Mode: one AdamW step from --weights after --warmup K native f64 steps, exact on the reference; "
                    "each --realize's update gap, storage floor and gradient gap (docs/step.md)");
  command->footer(
      "Runs samples --offset … --offset + N − 1 and one reverse sweep (sensitivities, on the first sample) "
      "on the exact reference, in parallel over --threads (the envelope does not depend on it), and writes "
      "the envelope atomically; prints the sites of largest max |v|. Every field of the file: "
      "docs/precision.md. --step: the options marked --step, --bits (default 128) and --out (the step envelope, "
      "optional); docs/step.md. Progress on stderr unless --quiet.");
  add_run_input_options(*command, options->input);
  command->get_option("--samples")
      ->description("--precision: samples to measure, from --offset on (of --data, or synthesized from --seed)");
  command->add_option("--bits", options->bits, "Working precision of the reference in bits (MPFR; --step: 128 by default)")
      ->check(CLI::Range(reference::kMinBits, reference::kMaxBits));
  command->add_option("--out", options->out, "The envelope file to write (JSON, format 1; --step: the step envelope)");
  add_step_options(*command, options->step_options);
  command->add_option("--sites", options->sites, "Sites printed, largest magnitude first")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--sweep", options->sweep,
                      "--precision: what measures the statistics other than the exact outputs (magnitudes, terms, "
                      "roundings, sensitivities): exact (the reference at --bits, the default) or f64 (the native "
                      "executor in binary64; the reference then computes only the exact outputs)");
  command->add_flag("--quiet", options->quiet, "No progress on stderr");
  add_threads_option(*command, global);
  add_seed_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_calibrate(*options, global); };
});

}  // namespace
}  // namespace presk::cli
