// The run an envelope was measured on, rebuilt for the commands that measure against it
// (check --measure, solve): its entry, bindings, samples (its data file, or synthesized from its
// seed at its offset) and parameters (its weights file, or synthesized). The envelope's
// provenance is checked: the program's hash (E0930), the entry (E0931, E1102), the bindings
// (E1103), and the weights and data files' SHA-256 where the envelope recorded them (E1104,
// E1105). A relative path the envelope recorded is also looked for beside the envelope.
#pragma once

#include <map>
#include <string>

#include "cli/pipeline.h"
#include "precision/envelope.h"

namespace presk::cli {

struct EnvelopeRunOptions {
  std::string envelope;  // the envelope file's path, for messages and relative paths
  std::string program;
  std::string entry;     // empty: the envelope's
  BindingOptions bindings;  // empty: the envelope's
  std::string weights;   // empty: the envelope's
  std::string data;      // empty: the envelope's
  // The command's phases after the run's preparation (MemoryPlan::phases; solve's): not an option.
  std::function<std::vector<PhaseEstimate>(const PreparedRun&)> phases;
  // The command hands the reference an observer (MemoryPlan::observed): check --contract
  // --measure, gappa's magnitudes. A solve or a check reads the parameters in place.
  bool observed = false;
};

PreparedRun prepare_envelope_run(const EnvelopeRunOptions& options, const precision::Envelope& envelope,
                                 GlobalOptions& global);

// The --const/--dim of a run against an envelope (a precision or a step envelope) that recorded
// `recorded` (NAME → value): without --const/--dim in `given`, the recorded ones, a name the
// program's source declares with `dim` a dim and any other a const; given ones must agree with
// the recorded (E1103, naming `envelope`).
BindingOptions recorded_bindings(const BindingOptions& given, const std::map<std::string, std::string>& recorded,
                                 const std::string& program, const std::string& envelope);

// The key of the envelope's cache of exact outputs (precision/exact_cache.h): canonical JSON of
// everything the exact outputs of `prepared`'s samples and of `held_out_count` held-out samples
// after them depend on (presk's version, the program's hash, the entry, the bindings, the
// weights' and data's SHA-256 or the seed that synthesized them, the samples, the bits).
std::string exact_cache_key(const EnvelopeRunOptions& options, const precision::Envelope& envelope,
                            const PreparedRun& prepared, int64_t held_out_count);

// The path of a file the envelope recorded: as recorded when it exists, else beside the envelope.
std::string recorded_path(const std::string& recorded, const std::string& envelope_path);

}  // namespace presk::cli
