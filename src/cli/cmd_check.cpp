// `presk check --precision ENVELOPE PROGRAM --realize R [--model k|normwise|cond|rss|all]
// [--measure]`: the first-order bound (precision/bound.h) on the envelope's entry under R, the
// sites contributing most, and the envelope it is conditional on; with --measure beside the
// largest elementwise gap between R run natively and the exact reference on the envelope's
// samples (precision/measure.h). The run is prepared as `presk run` prepares one
// (cli/envelope_run.h), from the envelope's entry, samples, seed and weights.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/check_contract.h"
#include "cli/command.h"
#include "cli/envelope_run.h"
#include "cli/pipeline.h"
#include "exec/native/realization.h"
#include "exec/reference/interpreter.h"
#include "ir/program_hash.h"
#include "precision/bound.h"
#include "precision/envelope.h"
#include "precision/measure.h"
#include "proof/certify.h"
#include "support/diagnostics.h"
#include "support/json_reader.h"

namespace presk::cli {
namespace {

struct CheckOptions {
  std::string envelope;  // --precision ENVELOPE
  std::string program;
  BindingOptions bindings;
  std::string weights;  // empty: the envelope's weights (or its synthesized parameters)
  std::string realize;
  std::string model = "cond";
  int sites = 10;
  bool measure = false;
  long certify_bits = proof::kCertifyMaxBits;  // --certify-bits
  std::string contract;  // --contract C: the chip contract's gap (cli/check_contract.h)
};

struct Report {
  std::vector<precision::EntryBound> bounds;
  std::optional<precision::MeasuredGap> measured;
  std::optional<proof::CertifiedReference> reference;  // with --measure: δ_p's proven bound
};

// Whether a measured gap is read as a value: it exceeds the reference's proven distance to the
// denotation by proof::kCertifiedFactor.
bool certified(const Report& report) {
  return proof::certifies(*report.reference, report.measured->absolute);
}

std::vector<precision::BoundModel> models_of(const std::string& name) {
  if (name == "all")
    return {std::begin(precision::kAllBoundModels), std::end(precision::kAllBoundModels)};
  return {*precision::bound_model_from_name(name)};
}

Report compute(const CheckOptions& options, const precision::Envelope& envelope,
               const PreparedRun& prepared, const GlobalOptions& global) {
  const exec::native::Realization realization =
      exec::native::load_realization(options.realize, prepared.program);
  const precision::SampleInputs inputs = [&](int64_t k) { return prepared.inputs(k, global.seed); };
  precision::BoundInputs bound_inputs;
  bound_inputs.program = &prepared.program;
  bound_inputs.envelope = &envelope;
  bound_inputs.realization = &realization;
  bound_inputs.arguments = precision::argument_envelopes(*prepared.entry, prepared.count, inputs);
  bound_inputs.parameter_errors =
      precision::parameter_errors(prepared.program, realization, prepared.parameters);
  Report report;
  for (precision::BoundModel model : models_of(options.model)) {
    report.bounds.push_back(precision::bound_entry(bound_inputs, model));
  }
  if (options.measure) {
    const precision::ExactOutputs exact =
        precision::run_exactly(prepared.program, *prepared.entry, prepared.parameters,
                               prepared.count, inputs, envelope.bits, global.threads);
    report.measured =
        precision::measure_gap(prepared.program, *prepared.entry, realization, prepared.parameters,
                               prepared.count, inputs, exact, global.threads);
    report.reference = proof::certify_gap(prepared.program, *prepared.entry, prepared.parameters, prepared.count,
                                          inputs, exact, global.threads, report.measured->absolute,
                                          std::max<long>(options.certify_bits, envelope.bits),
                                          [](const std::string& line) { std::cerr << "check --measure: " << line << std::endl; });
  }
  return report;
}

nlohmann::json number(double value) { return json_number(value); }

double ratio(double bound, double measured) {
  if (measured == 0) return bound == 0 ? 1 : std::numeric_limits<double>::infinity();
  return bound / measured;
}

std::string samples_text(const precision::Envelope& envelope) {
  std::string samples = fmt::format("{} samples ({}…{} ", envelope.samples, envelope.offset,
                                    envelope.offset + envelope.samples - 1);
  samples += envelope.data.empty() ? fmt::format("synthesized from seed {})", envelope.seed)
                                   : "of " + envelope.data + ")";
  samples += envelope.weights.empty()
                 ? fmt::format(", parameters synthesized from seed {}", envelope.seed)
                 : ", parameters from " + envelope.weights;
  return samples;
}

nlohmann::json report_json(const CheckOptions& options, const precision::Envelope& envelope,
                           const Report& report) {
  nlohmann::json bounds = nlohmann::json::array();
  for (const precision::EntryBound& bound : report.bounds) {
    nlohmann::json sites = nlohmann::json::array();
    for (size_t i = 0; i < bound.contributions.size() && i < static_cast<size_t>(options.sites);
         ++i) {
      const precision::Contribution& c = bound.contributions[i];
      sites.push_back({{"source", c.source},
                       {"error", number(c.error)},
                       {"share", number(bound.absolute > 0 ? c.error / bound.absolute : 0)}});
    }
    nlohmann::json entry = {{"model", precision::bound_model_name(bound.model)},
                            {"absolute", number(bound.absolute)},
                            {"relative", number(bound.relative)},
                            {"sites", std::move(sites)}};
    if (report.measured) entry["ratio"] = number(ratio(bound.absolute, report.measured->absolute));
    bounds.push_back(std::move(entry));
  }
  nlohmann::json out = {{"program", options.program},
                        {"entry", envelope.entry},
                        {"realize", options.realize},
                        {"envelope",
                         {{"path", options.envelope},
                          {"program_hash", envelope.program_hash},
                          {"samples", envelope.samples},
                          {"offset", envelope.offset},
                          {"seed", envelope.seed},
                          {"data", envelope.data},
                          {"weights", envelope.weights},
                          {"bits", envelope.bits},
                          {"date", envelope.date}}},
                        {"output_max_abs", number(envelope.output_max_abs)},
                        {"bounds", std::move(bounds)}};
  if (report.measured) {
    out["measured"] = {{"absolute", number(report.measured->absolute)},
                       {"relative", number(report.measured->relative())},
                       {"magnitude", number(report.measured->magnitude)},
                       {"bits", envelope.bits},
                       {"reference_radius", number(report.reference->radius)},
                       {"reference_ball_bits", report.reference->bits},
                       {"certified", certified(report)}};
  }
  return out;
}

void print_sites(const precision::EntryBound& bound, int count) {
  const size_t shown =
      std::min(bound.contributions.size(), static_cast<size_t>(std::max(count, 0)));
  if (shown == 0) return;
  size_t width = 6;
  for (size_t i = 0; i < shown; ++i) width = std::max(width, bound.contributions[i].source.size());
  std::cout << fmt::format(
      "  {:<{}}  {:>10}  {:>6}   ({}: the {} largest of {} sources)\n", "source", width, "error",
      "share", precision::bound_model_name(bound.model), shown, bound.contributions.size());
  for (size_t i = 0; i < shown; ++i) {
    const precision::Contribution& c = bound.contributions[i];
    std::cout << fmt::format("  {:<{}}  {:>10.3e}  {:>5.1f}%\n", c.source, width, c.error,
                             bound.absolute > 0 ? 100 * c.error / bound.absolute : 0.0);
  }
}

void print_report(const CheckOptions& options, const precision::Envelope& envelope,
                  const Report& report) {
  std::cout << fmt::format("presk check: `{}` of {} under {}\n", envelope.entry, options.program,
                           options.realize);
  std::cout << fmt::format("{:<10} {:>12} {:>12}{}\n", "model", "bound", "relative",
                           report.measured ? fmt::format(" {:>15}", "bound/measured") : "");
  for (const precision::EntryBound& bound : report.bounds) {
    std::cout << fmt::format(
        "{:<10} {:>12.3e} {:>12.3e}{}\n", precision::bound_model_name(bound.model), bound.absolute,
        bound.relative,
        report.measured
            ? fmt::format(" {:>15.3g}", ratio(bound.absolute, report.measured->absolute))
            : "");
  }
  if (report.measured) {
    std::cout << fmt::format(
        "{:<10} {:>12.3e} {:>12.3e}   (native {} against the exact reference at {} bits)\n",
        "measured", report.measured->absolute, report.measured->relative(), options.realize,
        envelope.bits);
    std::cout << fmt::format(
        "{:<10} {:>12.3e} {:>12}   (the reference's own distance to the denotation, proven by Arb "
        "balls at {} bits on the {} samples, {:.1f} s)\n",
        "reference", report.reference->radius, "", report.reference->bits, report.reference->samples,
        report.reference->seconds);
    if (!certified(report)) {
      std::cout << fmt::format(
          "flagged: the measured gap is not {:g}× the reference's proven distance to the "
          "denotation: it is not read as a value (raise the envelope's --bits)\n",
          proof::kCertifiedFactor);
    }
  }
  std::cout << fmt::format("relative: to the output's largest magnitude in the envelope, {:.4e}\n",
                           envelope.output_max_abs);
  for (const precision::EntryBound& bound : report.bounds) print_sites(bound, options.sites);
  std::cout << fmt::format("conditional on the envelope {}: {}, {} bits, {}\n", options.envelope,
                           samples_text(envelope), envelope.bits, envelope.date);
}

int run_check(const CheckOptions& options, GlobalOptions& global) {
  if (!options.contract.empty()) {
    if (!options.measure) {
      usage_error("E1721").hint("presk check --precision ENV PROGRAM --realize R --contract C --measure")
          << "--contract measures a chip's gap: it needs --measure";
    }
    return run_contract_check({options.envelope, options.program, options.bindings, options.weights, options.realize,
                               options.contract}, global);
  }
  const precision::Envelope envelope = precision::read_envelope(options.envelope);
  EnvelopeRunOptions run{options.envelope, options.program, "", options.bindings, options.weights, "", {}};
  const PreparedRun prepared = prepare_envelope_run(run, envelope, global);
  const Report report = compute(options, envelope, prepared, global);
  if (global.json)
    std::cout << report_json(options, envelope, report).dump(2) << '\n';
  else
    print_report(options, envelope, report);
  return 0;
}

Registration registration("check", 35, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* command = app.add_subcommand("check",
                                         "Bound an entry's rounding error under a realization, "
                                         "conditional on its envelope (--precision)");
  command
      ->add_option("--precision", options->envelope,
                   "The envelope (presk calibrate --precision) the bound is conditional on")
      ->required();
  command->add_option("program", options->program, "The .psk program the envelope was measured on")
      ->required();
  add_binding_options(*command, options->bindings);
  command->add_option("--weights", options->weights,
                      "Parameters from a safetensors file (default: the envelope's)");
  command
      ->add_option("--realize", options->realize, "The realization: f64, f32, bf16 or @file.json")
      ->required();
  command->add_option("--model", options->model, "How a sum carries its terms' errors")
      ->check(CLI::IsMember({"k", "normwise", "cond", "rss", "all"}))
      ->capture_default_str();
  command->add_option("--sites", options->sites, "Sources printed, largest contribution first")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_flag(
      "--measure", options->measure,
      "Also run R natively and the exact reference on the envelope's samples: the largest gap");
  add_certify_bits_option(*command, options->certify_bits);
  command->add_option("--contract", options->contract,
                      "With --measure: a chip contract's gap against the exact meaning, product by product "
                      "(docs/chip.md)");
  add_threads_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_check(*options, global); };
});

}  // namespace
}  // namespace presk::cli
