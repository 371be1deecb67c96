// `presk margins PROGRAM --entry logits [--data D] [--weights W] [--offset K] [--windows N]
// [--delta δ…] [--confidence c] [--realize R] [--bits B]`: the exact model's margins on held-out
// windows (precision/margins.h), their distribution, ε*(δ) for each δ at the confidence asked,
// the `presk solve --budget-abs ε*` line that targets it, and with --realize what a realization
// does on the same positions. Progress on stderr.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/pipeline.h"
#include "exec/native/realization.h"
#include "exec/reference/interpreter.h"
#include "precision/envelope.h"
#include "precision/margins.h"
#include "support/diagnostics.h"
#include "support/json_reader.h"

namespace presk::cli {
namespace {

struct MarginsOptions {
  RunInputOptions input;  // program, --entry, --const/--dim, --weights, --data, --offset
  int64_t windows = 0;    // 0: every sample of --data from --offset on
  std::vector<double> deltas = {1e-1, 1e-2, 1e-3};
  double confidence = 0.95;
  std::string over = "positions";  // --over: what the bound counts, positions or windows
  std::vector<std::string> realize;  // --realize, repeatable
  long bits = 128;
  std::string envelope;  // --precision: named in the solve line printed
  bool quiet = false;
};

constexpr double kQuantiles[] = {0, 1e-3, 1e-2, 1e-1, 0.5, 0.9, 1};

struct Report {
  precision::Margins margins;
  std::vector<precision::EpsilonStar> stars;
  std::vector<std::string> solve_lines;  // per δ; empty where ε* is 0
  std::string calibrate_line;            // without --precision: the envelope the solve needs
  int64_t windows = 0;
  double seconds = 0;
};

// A path or value as one shell word.
std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string("_./=+-:,@").find(c) != std::string::npos;
  });
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// ε with three significant digits, rounded down: the budget printed is never above ε*.
std::string rounded_down(double epsilon) {
  int exponent = static_cast<int>(std::floor(std::log10(epsilon)));
  auto mantissa = static_cast<int64_t>(std::floor(epsilon / std::pow(10.0, exponent - 2)));
  auto text = [&] { return fmt::format("{}.{:02d}e{}", mantissa / 100, mantissa % 100, exponent); };
  auto normalize = [&] {
    if (mantissa >= 1000) mantissa /= 10, ++exponent;
    if (mantissa < 100) mantissa = 999, --exponent;
  };
  normalize();
  while (std::stod(text()) > epsilon) --mantissa, normalize();
  return text();
}

std::string bindings_text(const BindingOptions& bindings) {
  std::string text;
  for (const std::string& c : bindings.consts) text += " --const " + shell_word(c);
  for (const std::string& d : bindings.dims) text += " --dim " + shell_word(d);
  return text;
}

void add_lines(const MarginsOptions& options, Report& report) {
  const RunInputOptions& input = options.input;
  const std::string envelope = options.envelope.empty() ? "envelope.json" : options.envelope;
  if (options.envelope.empty()) {
    report.calibrate_line = "presk calibrate --precision " + shell_word(input.program_path) + " --entry " +
                            shell_word(input.entry) + bindings_text(input.bindings) +
                            (input.weights.empty() ? "" : " --weights " + shell_word(input.weights)) +
                            (input.data.empty() ? "" : " --data " + shell_word(input.data)) +
                            " --samples 4 --bits 128 --out " + envelope;
  }
  for (const precision::EpsilonStar& star : report.stars) {
    report.solve_lines.push_back(star.epsilon > 0 ? "presk solve " + shell_word(input.program_path) +
                                                        " --precision " + shell_word(envelope) + " --budget-abs " +
                                                        rounded_down(star.epsilon) + " --out solved.json"
                                                  : "");
  }
}

std::function<void(int64_t, int64_t)> progress_printer(bool quiet) {
  if (quiet) return {};
  auto start = std::chrono::steady_clock::now();
  auto last = std::make_shared<double>(-1);
  return [start, last](int64_t done, int64_t count) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done < count && seconds - *last < 1) return;
    *last = seconds;
    std::cerr << fmt::format("margins: {}/{} windows, {:.1f} s\n", done, count, seconds);
  };
}

// --precision must be an envelope of this entry: the solve it is named in takes the envelope's (E1155).
void check_envelope(const MarginsOptions& options) {
  if (options.envelope.empty()) return;
  const precision::Envelope envelope = precision::read_envelope(options.envelope);
  if (envelope.entry != options.input.entry) {
    user_error("E1155").hint("calibrate the entry the margins are of: presk calibrate --precision " +
                             options.input.program_path + " --entry " + options.input.entry + " …")
        << "the envelope " << options.envelope << " is of entry `" << envelope.entry << "`, not `"
        << options.input.entry << "`: a solve on it would not budget the logits";
  }
}

Report compute(const MarginsOptions& options, const GlobalOptions& global) {
  for (double delta : options.deltas) precision::check_delta(delta);
  precision::check_confidence(options.confidence);
  check_envelope(options);
  const auto start = std::chrono::steady_clock::now();
  RunInputOptions input = options.input;
  input.samples = std::max<int64_t>(options.windows, 1);
  // The exact runs (unobserved, parameters read in place) and each --realize's native run.
  input.memory.reference_bytes = reference_bytes_per_element(options.bits, false);
  input.memory.native_bytes = options.realize.empty() ? 0 : kNativeBytesPerElement;
  const PreparedRun prepared = prepare_run(input, global);
  const precision::MarginShape shape = precision::margin_shape(*prepared.entry);
  Report report;
  report.windows = options.windows > 0 ? options.windows : prepared.data ? prepared.data->samples() - prepared.first : 1;
  for (double delta : options.deltas) {
    precision::check_positions(options.over == "windows" ? report.windows : report.windows * shape.positions, delta,
                               options.confidence);
  }
  std::vector<exec::native::Realization> realizations;
  for (const std::string& realize : options.realize) {
    realizations.push_back(exec::native::load_realization(realize, prepared.program));
  }
  precision::MarginOptions margin_options;
  margin_options.bits = options.bits;
  margin_options.threads = global.threads;
  for (const exec::native::Realization& realization : realizations) margin_options.realizations.push_back(&realization);
  margin_options.progress = progress_printer(options.quiet);
  const uint64_t seed = global.seed;
  report.margins = precision::measure_margins(
      prepared.program, *prepared.entry, prepared.parameters, report.windows,
      [&](int64_t k) { return prepared.inputs(k, seed); }, margin_options);
  for (double delta : options.deltas) {
    const std::vector<double>& counted = options.over == "windows" ? report.margins.window_minima : report.margins.sorted;
    report.stars.push_back(precision::epsilon_star(counted, delta, options.confidence));
  }
  add_lines(options, report);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

nlohmann::ordered_json number(double value) { return json_number<nlohmann::ordered_json>(value); }

void print_json(const MarginsOptions& options, const Report& report) {
  const precision::Margins& m = report.margins;
  nlohmann::ordered_json quantiles = nlohmann::ordered_json::array(), stars = nlohmann::ordered_json::array();
  for (double q : kQuantiles) quantiles.push_back({{"q", q}, {"margin", precision::margin_quantile(m.sorted, q)}});
  for (size_t i = 0; i < report.stars.size(); ++i) {
    const precision::EpsilonStar& s = report.stars[i];
    stars.push_back({{"delta", s.delta}, {"epsilon", s.epsilon}, {"allowed", s.allowed},
                     {"close_calls", s.close_calls}, {"upper", s.upper},
                     {"minimum_positions", precision::minimum_positions(s.delta, s.confidence)},
                     {"solve", report.solve_lines[i]}});
  }
  nlohmann::ordered_json out = {
      {"program", options.input.program_path}, {"entry", options.input.entry}, {"data", options.input.data},
      {"weights", options.input.weights}, {"offset", options.input.offset}, {"windows", report.windows},
      {"positions", m.sorted.size()}, {"positions_per_window", m.shape.positions}, {"classes", m.shape.classes},
      {"bits", options.bits}, {"confidence", options.confidence}, {"over", options.over}, {"quantiles", std::move(quantiles)},
      {"epsilon_star", std::move(stars)}, {"calibrate", report.calibrate_line}};
  nlohmann::ordered_json realized = nlohmann::ordered_json::array();
  for (size_t r = 0; r < m.realized.size(); ++r) {
    realized.push_back({{"realize", options.realize[r]}, {"gap", number(m.realized[r].gap)},
                        {"flipped", m.realized[r].flipped}, {"allowed", m.realized[r].allowed}});
  }
  out["realizations"] = std::move(realized);
  out["seconds"] = report.seconds;
  std::cout << out.dump(2) << '\n';
}

void print_table(const MarginsOptions& options, const Report& report, const GlobalOptions& global) {
  const precision::Margins& m = report.margins;
  std::cout << fmt::format("presk margins: `{}` of {} on {} windows ({} … {} {}), exact at {} bits\n",
                           options.input.entry, options.input.program_path, report.windows, options.input.offset,
                           options.input.offset + report.windows - 1,
                           options.input.data.empty() ? fmt::format("synthesized from seed {}", global.seed)
                                                      : "of " + options.input.data,
                           options.bits);
  std::cout << fmt::format("positions   {} ({} per window, {} classes)\n", m.sorted.size(), m.shape.positions,
                           m.shape.classes);
  std::string quantiles;
  for (double q : kQuantiles) {
    const std::string name = q == 0 ? "min" : q == 1 ? "max" : q == 0.5 ? "median" : fmt::format("{:g} %", 100 * q);
    quantiles += fmt::format("{}{} {:.3e}", quantiles.empty() ? "" : ", ", name, precision::margin_quantile(m.sorted, q));
  }
  std::cout << "margins     " << quantiles << "\n";
  std::cout << fmt::format("{:<10} {:>12} {:>12} {:>14} {:>12}   (one-sided Clopper–Pearson at {:g} %, over {})\n",
                           "δ", "close calls", "at ε*", "bound", "ε*(δ)", 100 * options.confidence, options.over);
  for (const precision::EpsilonStar& s : report.stars) {
    std::cout << fmt::format("{:<10g} {:>12} {:>12} {:>14.4g} {:>12.4e}\n", s.delta, s.allowed, s.close_calls,
                             s.upper, s.epsilon);
  }
  std::cout << (options.over == "windows"
                    ? "            over windows: a window is a close call when any of its positions is; the windows "
                      "are the independent trials\n"
                    : "            over positions: each counted as independent, which the positions of one window "
                      "are not (they share its context), so the confidence is overstated; --over windows counts windows\n");
  if (!report.calibrate_line.empty()) std::cout << "envelope    " << report.calibrate_line << "\n";
  for (size_t i = 0; i < report.stars.size(); ++i) {
    std::cout << fmt::format("solve {:<5g} {}\n", report.stars[i].delta,
                             report.solve_lines[i].empty() ? "none: ε* is 0 (margins of 0, tied logits)"
                                                           : report.solve_lines[i]);
  }
  for (size_t r = 0; r < m.realized.size(); ++r) {
    std::cout << fmt::format("realized    {}: largest logit gap {:.3e}; {} decisions flipped, {} allowed "
                             "(positions with m ≤ 2·gap)\n",
                             options.realize[r], m.realized[r].gap, m.realized[r].flipped, m.realized[r].allowed);
  }
  std::cout << fmt::format("time        {:.1f} s\n", report.seconds);
}

int run_margins(MarginsOptions& options, const GlobalOptions& global) {
  const Report report = compute(options, global);
  if (global.json) print_json(options, report);
  else print_table(options, report, global);
  return 0;
}

Registration registration("margins", 37, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<MarginsOptions>();
  CLI::App* command = app.add_subcommand(
      "margins", "An accuracy target as a budget on the logits: the exact margins on held-out windows, ε*(δ)");
  RunInputOptions& input = options->input;
  command->add_option("program", input.program_path, "The .psk program")->required();
  command->add_option("--entry", input.entry, "The entry, returning logits R[…, V]")->required();
  add_binding_options(*command, input.bindings);
  command->add_option("--weights", input.weights, "Parameters from a safetensors file (default: synthesized from --seed)");
  command->add_option("--data", input.data,
                      "The held-out samples (a token-window file feeds a Z[T] argument; default: synthesized from --seed)");
  command->add_option("--offset", input.offset, "The first window")->check(CLI::NonNegativeNumber);
  command->add_option("--windows", options->windows, "Windows to run (default: every one of --data from --offset on; 1 without --data)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  command->add_option("--delta", options->deltas, "Accuracies a realization may lose (repeatable; default 0.1 0.01 0.001)")
      ->expected(1, 64);
  command->add_option("--confidence", options->confidence, "The confidence of the bound on each fraction")
      ->capture_default_str();
  command->add_option("--over", options->over,
                      "What the bound counts: positions (as independent trials; the confidence is overstated, a window's "
                      "positions share its context), or windows (a window a close call when any of its positions is)")
      ->check(CLI::IsMember({"positions", "windows"}))
      ->capture_default_str();
  command->add_option("--realize", options->realize,
                      "Also a realization (repeatable): its logit gap, its flips and those its margins allow")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_option("--bits", options->bits, "The exact reference's precision in bits (MPFR)")
      ->check(CLI::Range(reference::kMinBits, reference::kMaxBits))
      ->capture_default_str();
  command->add_option("--precision", options->envelope, "The envelope of this entry, named in the solve lines printed");
  command->add_flag("--quiet", options->quiet, "No progress on stderr");
  command->footer(
      "A realization within ε of every logit changes a decision only where the margin m (top − second logit) "
      "is at most 2ε. ε*(δ) is the largest ε whose fraction of positions with m < 2ε is at most δ at the "
      "confidence asked (one-sided Clopper–Pearson). docs/precision.md, \"margins\".");
  add_threads_option(*command, global);
  add_seed_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_margins(*options, global); };
});

}  // namespace
}  // namespace presk::cli
