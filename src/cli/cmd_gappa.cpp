// `presk gappa PROGRAM --entry E --realize R --precision ENVELOPE [--site S] [--rows one|envelope]
// --out F.g [--run] [--timeout S]`: writes the Gappa script of one row of the entry's result (or
// of one site's value) under R, with the envelope's magnitudes (or one row's) as hypotheses
// (proof/gappa_script.h); with --run, runs Gappa and prints what it proved beside the measured gap
// and the four first-order bounds of `presk check` (docs/proof.md).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/envelope_run.h"
#include "cli/pipeline.h"
#include "exec/native/realization.h"
#include "precision/bound.h"
#include "precision/envelope.h"
#include "precision/measure.h"
#include "proof/gappa_run.h"
#include "proof/gappa_script.h"
#include "proof/magnitudes.h"
#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "support/json_reader.h"

namespace presk::cli {
namespace {

// Past this many stated operations the script is refused (E1603): Gappa's time grows about
// sixfold per doubling of a layer norm's width (docs/experiments/gappa.md).
constexpr int64_t kMaxOperations = 20000;

struct GappaOptions {
  std::string program;
  std::string entry;
  std::string realize;
  std::string envelope;
  BindingOptions bindings;
  std::string site;
  std::string rows = "envelope";
  std::string out;
  bool run = false;
  double timeout = 600;
};

struct Outcome {
  proof::Script script;
  int64_t goals = 0;
  std::vector<std::string> stage_files;  // the earlier stages' scripts (exp and max arguments)
  std::string written;                   // the script `script` is: --out, or the stage that failed
  double stage_seconds = 0, stage_cpu_seconds = 0;  // their Gappa runs' (added to `proved`'s)
  std::optional<proof::GappaResult> proved;
  std::vector<precision::EntryBound> bounds;
  std::optional<precision::MeasuredGap> measured;
};

std::string header(const GappaOptions& options, const precision::Envelope& envelope,
                   int64_t goals) {
  return fmt::format(
      "presk gappa: `{}` of {} under {}, {} — {} value(s) of one row\n"
      "hypotheses: the magnitudes of {} (envelope {}, {} samples, {} bits, {})\n"
      "r<n>: as the native kernels compute it; E<n>: the exact value; goals |r - E| in ?",
      envelope.entry, options.program, options.realize,
      options.site.empty() ? "the entry's result" : "site " + options.site, goals,
      options.rows == "one"      ? "one row, on the first sample"
      : options.rows == "inputs" ? "the entry's arguments alone"
                                 : "the envelope",
      options.envelope, envelope.samples, envelope.bits, envelope.date);
}

// Stage k of a statement with exp or max scalars: proves the errors of their arguments (`goals`)
// from the scalars before them, in a script beside --out (F.stage<k+1>.g). False when Gappa did
// not prove it: the outcome then says so.
bool prove_stage(const GappaOptions& options, const proof::Statement& statement,
                 const proof::Magnitudes& magnitudes, const precision::Envelope& envelope,
                 const std::vector<int32_t>& goals, size_t k, const GlobalOptions& global,
                 proof::Proven& proven, Outcome& outcome) {
  const std::string base = options.out.size() > 2 && options.out.ends_with(".g")
                               ? options.out.substr(0, options.out.size() - 2)
                               : options.out;
  const std::string path = fmt::format("{}.stage{}.g", base, k + 1);
  const std::string note = fmt::format(
      "stage {}: the errors of {} argument(s) of exp or max, which the next stages assume",
      k + 1, goals.size());
  const proof::Script script = proof::gappa_script(
      statement, magnitudes, header(options, envelope, static_cast<int64_t>(goals.size())) + "\n" + note,
      &goals, proven);
  write_file_atomically(path, script.text);
  outcome.stage_files.push_back(path);
  if (!global.json)
    std::cerr << fmt::format("presk gappa: Gappa proving {} ({} operations)…\n", path,
                             script.operations);
  proof::GappaResult result = proof::run_gappa(path, static_cast<int>(goals.size()), options.timeout);
  outcome.stage_seconds += result.seconds;
  outcome.stage_cpu_seconds += result.cpu_seconds;
  if (result.outcome != proof::Outcome::proved) {
    result.seconds = outcome.stage_seconds;
    result.cpu_seconds = outcome.stage_cpu_seconds;
    result.message = fmt::format("{} ({}): {}", note, path, result.message);
    outcome.script = script;
    outcome.written = path;
    outcome.proved = result;
    return false;
  }
  for (int32_t g : goals) proven[g] = result.bound;
  return true;
}

Outcome finish(const PreparedRun& prepared,
               const exec::native::Realization& realization, const precision::Envelope& envelope,
               const precision::SampleInputs& inputs,
               const std::vector<precision::ValueEnvelope>& arguments, GlobalOptions& global,
               Outcome& outcome);

Outcome compute(const GappaOptions& options, GlobalOptions& global) {
  const precision::Envelope envelope = precision::read_envelope(options.envelope);
  EnvelopeRunOptions run{
      options.envelope, options.program, options.entry, options.bindings, "", "", {}, true};  // magnitudes observed
  const PreparedRun prepared = prepare_envelope_run(run, envelope, global);
  const exec::native::Realization realization =
      exec::native::load_realization(options.realize, prepared.program);
  const precision::SampleInputs inputs = [&](int64_t k) { return prepared.inputs(k, global.seed); };
  const proof::Statement statement = proof::state(prepared.program, *prepared.entry, realization,
                                                  prepared.parameters, options.site);
  if (statement.needed_count > kMaxOperations) {
    user_error("E1603").hint(
        "state one site with --site, or bind smaller extents with --const/--dim")
        << "the statement has " << statement.needed_count
        << " operations, more than Gappa can prove in reasonable time (" << kMaxOperations << ")";
  }
  const std::vector<precision::ValueEnvelope> arguments =
      precision::argument_envelopes(*prepared.entry, prepared.count, inputs);
  std::vector<double> argument_max;
  for (const precision::ValueEnvelope& a : arguments) argument_max.push_back(a.max_abs);
  const proof::Magnitudes magnitudes =
      options.rows == "one" ? proof::row_magnitudes(statement, prepared.program, *prepared.entry,
                                                    prepared.parameters, inputs(0), envelope.bits)
      : options.rows == "inputs"
          ? proof::input_magnitudes(*prepared.entry, argument_max)
          : proof::envelope_magnitudes(envelope, *prepared.entry, argument_max);
  Outcome outcome;
  outcome.goals = static_cast<int64_t>(statement.goals.size());
  const std::vector<std::vector<int32_t>> stages = proof::stages(statement);
  if (stages.size() > 1 && !options.run) {
    user_error("E1604").hint("add --run: presk proves the arguments' errors first, then writes the script")
        << "the statement has exp or max scalars, which Gappa states through their arguments' "
           "proven errors: their "
        << stages.size() - 1 << " earlier proof(s) must run before the script can be written";
  }
  proof::Proven proven;
  for (size_t k = 0; k + 1 < stages.size(); ++k) {
    if (!prove_stage(options, statement, magnitudes, envelope, stages[k], k, global, proven, outcome))
      return finish(prepared, realization, envelope, inputs, arguments, global, outcome);
  }
  outcome.script = proof::gappa_script(statement, magnitudes,
                                       header(options, envelope, outcome.goals), nullptr, proven);
  write_file_atomically(options.out, outcome.script.text);
  outcome.written = options.out;
  if (!options.run) return outcome;
  if (!global.json)
    std::cerr << fmt::format("presk gappa: Gappa proving {} ({} operations)…\n", options.out,
                             outcome.script.operations);
  outcome.proved = proof::run_gappa(options.out, static_cast<int>(outcome.goals), options.timeout);
  outcome.proved->seconds += outcome.stage_seconds;  // every run of the proof
  outcome.proved->cpu_seconds += outcome.stage_cpu_seconds;
  return finish(prepared, realization, envelope, inputs, arguments, global, outcome);
}

// The bounds and the measured gap printed beside what Gappa proved.
Outcome finish(const PreparedRun& prepared,
               const exec::native::Realization& realization, const precision::Envelope& envelope,
               const precision::SampleInputs& inputs,
               const std::vector<precision::ValueEnvelope>& arguments, GlobalOptions& global,
               Outcome& outcome) {
  precision::BoundInputs bound_inputs;
  bound_inputs.program = &prepared.program;
  bound_inputs.envelope = &envelope;
  bound_inputs.realization = &realization;
  bound_inputs.arguments = arguments;
  bound_inputs.parameter_errors =
      precision::parameter_errors(prepared.program, realization, prepared.parameters);
  for (precision::BoundModel model : precision::kAllBoundModels)
    outcome.bounds.push_back(precision::bound_entry(bound_inputs, model));
  const precision::ExactOutputs exact =
      precision::run_exactly(prepared.program, *prepared.entry, prepared.parameters, prepared.count,
                             inputs, envelope.bits, global.threads);
  outcome.measured =
      precision::measure_gap(prepared.program, *prepared.entry, realization, prepared.parameters,
                             prepared.count, inputs, exact, global.threads);
  return outcome;
}

void print(const GappaOptions& options, const Outcome& outcome) {
  const proof::Script& script = outcome.script;
  for (const std::string& stage : outcome.stage_files) {
    if (stage == outcome.written) continue;
    std::cout << fmt::format("presk gappa: {} written (an earlier stage: the errors of exp's and "
                             "max's arguments)\n", stage);
  }
  std::cout << fmt::format(
      "presk gappa: {} written: {} operations, {} hypotheses, {} goals (one row)\n",
      outcome.written, script.operations, script.hypotheses, outcome.goals);
  for (const std::string& site : script.missing) {
    if (options.rows != "inputs") std::cout << "  no magnitude for " << site << ": none assumed\n";
  }
  if (!outcome.proved) return;
  const proof::GappaResult& proved = *outcome.proved;
  const double measured = outcome.measured->absolute;
  if (proved.outcome == proof::Outcome::proved) {
    std::cout << fmt::format("{:<10} {:>12.3e} {:>15.3g}   (Gappa, {:.1f} s of CPU, {:.1f} s{})\n",
                             "proved", proved.bound, measured > 0 ? proved.bound / measured : 0.0,
                             proved.cpu_seconds, proved.seconds,
                             outcome.stage_files.empty()
                                 ? ""
                                 : fmt::format(", {} runs in stages", outcome.stage_files.size() + 1));
  } else {
    std::cout << fmt::format("{:<10} {} after {:.1f} s of CPU ({:.1f} s): {}\n", "proved",
                             proof::outcome_name(proved.outcome), proved.cpu_seconds,
                             proved.seconds, proved.message);
  }
  for (const precision::EntryBound& bound : outcome.bounds) {
    std::cout << fmt::format("{:<10} {:>12.3e} {:>15.3g}   (presk check --model {})\n",
                             precision::bound_model_name(bound.model), bound.absolute,
                             measured > 0 ? bound.absolute / measured : 0.0,
                             precision::bound_model_name(bound.model));
  }
  std::cout << fmt::format(
      "{:<10} {:>12.3e}   (native {} against the exact reference, every element of every sample)\n",
      "measured", measured, options.realize);
}

nlohmann::json to_json(const GappaOptions& options, const Outcome& outcome) {
  nlohmann::json out = {{"out", options.out},
                        {"rows", options.rows},
                        {"site", options.site},
                        {"operations", outcome.script.operations},
                        {"hypotheses", outcome.script.hypotheses},
                        {"goals", outcome.goals},
                        {"stages", outcome.stage_files},
                        {"missing", outcome.script.missing}};
  if (!outcome.proved) return out;
  const proof::GappaResult& proved = *outcome.proved;
  out["outcome"] = proof::outcome_name(proved.outcome);
  out["proved"] = proved.outcome == proof::Outcome::proved ? json_number(proved.bound)
                                                           : nlohmann::json(nullptr);
  out["message"] = proved.message;
  out["seconds"] = proved.seconds;
  out["cpu_seconds"] = proved.cpu_seconds;
  out["measured"] = json_number(outcome.measured->absolute);
  for (const precision::EntryBound& bound : outcome.bounds)
    out["bounds"][precision::bound_model_name(bound.model)] = json_number(bound.absolute);
  return out;
}

int run_gappa(const GappaOptions& options, GlobalOptions& global) {
  const Outcome outcome = compute(options, global);
  if (global.json) {
    std::cout << to_json(options, outcome).dump(2) << '\n';
  } else {
    print(options, outcome);
  }
  return outcome.proved && outcome.proved->outcome != proof::Outcome::proved ? 1 : 0;
}

Registration registration("gappa", 36, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<GappaOptions>();
  CLI::App* command = app.add_subcommand("gappa",
                                         "Write (and with --run, prove with Gappa) a bound on one "
                                         "row's rounding error under a realization");
  command->add_option("program", options->program, "The .psk program the envelope was measured on")
      ->required();
  command->add_option("--entry", options->entry, "The entry (default: the envelope's)");
  command
      ->add_option("--realize", options->realize, "The realization: f64, f32, bf16 or @file.json")
      ->required();
  command
      ->add_option("--precision", options->envelope,
                   "The envelope (presk calibrate --precision) whose magnitudes are the hypotheses")
      ->required();
  add_binding_options(*command, options->bindings);
  command->add_option("--site", options->site,
                      "State this site's value instead of the entry's result");
  command
      ->add_option("--rows", options->rows,
                   "Hypotheses: the envelope's magnitudes, one row's (the first sample's), or the "
                   "inputs' ranges alone")
      ->check(CLI::IsMember({"one", "envelope", "inputs"}))
      ->capture_default_str();
  command->add_option("--out", options->out, "The Gappa script to write")->required();
  command->add_flag(
      "--run", options->run,
      "Run Gappa on it and print the proved bound beside the measured gap and the bounds");
  command->add_option("--timeout", options->timeout, "Seconds of CPU time Gappa may take (--run)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_threads_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_gappa(*options, global); };
});

}  // namespace
}  // namespace presk::cli
