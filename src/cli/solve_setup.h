// What `presk solve` and `presk explain PROGRAM … --budget ε` share: the solve's options on the
// command line, and running a solve from them (the envelope's run rebuilt, its provenance
// checked, the exact reference run once, the phases of src/solve).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cli/envelope_run.h"
#include "proof/certify.h"
#include "solve/price.h"
#include "solve/record.h"

namespace presk::cli {

struct SolveCommandOptions {
  EnvelopeRunOptions run;  // program, --precision ENV, --entry, --const/--dim, --weights, --data
  std::string budget, budget_abs;  // as typed (a number > 0)
  std::string menu = "f64,f32,bf16";
  std::string rounding = "measured", estimate = "sum", narrow = "none";
  double margin = 2.5, min_gain = 1e-3;
  int64_t heldout = -1;  // -1: as many as the envelope's samples
  bool exhaustive = false, quiet = false;
  bool no_exact_cache = false;     // --no-exact-cache: run the reference, read and write no cache
  int64_t certify = 1;             // --certify N: δ_p proven by Arb balls on the first N samples (0: off)
  long certify_bits = proof::kCertifyMaxBits;  // --certify-bits: the most bits a ball run may take
  bool quant = false;              // --quant: the integer pass after the float solve
  std::string scheme = "absmax";   // --scheme: its scales
  std::string sweep = "exact";     // --sweep: --quant's cotangents from the reference, or native f64
  std::string profile;  // --profile PROFILE.json: price by predicted time (presk bench --calibrate)
  std::string out;
  std::string report;  // solve --report F.html (src/report)
  std::string contract;         // --contract C: solve which products read quantized activations (chip_solve.h)
  std::string realize = "f32";  // --realize R: with --contract, the chip's realization (its integer weights)
};

void add_solve_options(CLI::App& command, SolveCommandOptions& options, GlobalOptions& global);

struct SolveRun {
  precision::Envelope envelope;
  PreparedRun prepared;
  solve::Offer offer;
  solve::Budget budget;
  solve::SolveOptions options;
  solve::Solution solution;
  solve::SolveTimes times;
  double exact_seconds = 0, native_seconds = 0, wall_seconds = 0;
  int native_runs = 0;
  bool exact_from_cache = false;  // the exact outputs were read from the envelope's cache
  std::optional<proof::CertifiedReference> reference;  // --certify: δ_p's proven bound
  std::optional<solve::TimePrediction> predicted;  // --profile: seconds per sample, predicted
  int64_t held_out_wanted = 0;  // samples asked to hold out (the solution has how many were)
  std::vector<std::string> warnings;  // why nothing could be ranked (on stderr, in the record, in the report)
  nlohmann::ordered_json file;  // the realization file's JSON
};

SolveRun run_solve(const SolveCommandOptions& options, GlobalOptions& global);

// The budget the options give (--budget, --budget-abs, or the entry's precision clause).
solve::Budget budget_of(const SolveCommandOptions& options, const ir::Function& entry,
                        const precision::Envelope& envelope);
// The held-out samples: those after the envelope's in its data file, as many as asked (or as
// the envelope's) and as the file holds.
solve::SampleSet held_out_set(const PreparedRun& prepared, int64_t wanted);

// `presk solve --contract C` (solve/chip_solve.h): the solved contract written to --out.
int run_chip_solve(const SolveCommandOptions& options, GlobalOptions& global);

// --profile's lines of the report: the predicted time of all-f64, all-f32, the realization and
// the relaxation floor (every offered value at its narrowest rung), and whether the floor is slower.
void print_predicted(const SolveRun& run);

// Refuses an --out that is one of the solve's inputs (the program, the envelope, the weights or
// data named) or not a regular file (E0140, E0141), before any work.
void check_solve_outputs(const SolveCommandOptions& options);

}  // namespace presk::cli
