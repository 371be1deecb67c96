// The steps that several commands share between the command line and the stage libraries:
// --const/--dim bindings, and moving host tensors between the reference and the native executor.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "exec/reference/parameters.h"
#include "exec/reference/value.h"
#include "exec/reference/weights.h"
#include "lang/frontend.h"
#include "support/atomic_file.h"
#include "support/tensor.h"

namespace presk::cli {

// The program-shaping options of a command: --const K=V and --dim N=V, repeatable.
struct BindingOptions {
  std::vector<std::string> consts;  // "K=V", as given
  std::vector<std::string> dims;    // "N=V", as given
};
void add_binding_options(CLI::App& command, BindingOptions& options);

// "NAME=INTEGER" → Binding; anything else is `code` (E0004 for --const, E0005 for --dim).
std::vector<lang::Binding> parse_bindings(const std::vector<std::string>& texts,
                                          const std::string& option, const char* code);

// The front end's options for `bindings` and `entry` (empty: every entry).
lang::FrontendOptions frontend_options(const BindingOptions& bindings, const std::string& entry);

using reference::to_tensors;  // exec/reference/value.h


// What a run holds per element of each value, set by the command before prepare_run, which
// refuses (E0017) a run whose estimate exceeds the available memory before it allocates. The
// estimate: every let of the program (ir/footprint.h) per sample at once, the parameters, and
// every sample's results when they are kept to the end.
struct PreparedRun;
// One phase of a command after the run's preparation (a reverse sweep, the exact outputs of the
// held-out samples too), as cli/phase_memory.h estimates it: what it is and its bytes at peak.
struct PhaseEstimate {
  std::string what;
  uint64_t bytes = 0;
};
struct MemoryPlan {
  uint64_t reference_bytes = 0;  // per element on the reference (0: no exact run); samples in parallel
  uint64_t native_bytes = 0;     // per element on the native executor (0: no native run); one sample at a time
  int program_copies = 1;        // 3 under --grad: the forward, the vjp and the cotangents
  bool keeps_outputs = false;    // every sample's results are held until the end
  // The command's phases, estimated from the compiled program before the parameters are read:
  // the run above is refused (E0017) together with them when the largest exceeds the memory
  // available, every phase's estimate in the message. Absent: the run alone.
  std::function<std::vector<PhaseEstimate>(const PreparedRun&)> phases;
  // An observer is handed every value (a calibration's statistics, a gradient): the reference then
  // converts every parameter it reads whole; otherwise it reads them in place (ir::read_in_place).
  bool observed = false;
};
// A reference value's bytes per element at `bits` (MPFR, or an Arb ball with its radius).
uint64_t reference_bytes_per_element(long bits, bool ball);
inline constexpr uint64_t kNativeBytesPerElement = 8;

// What a run needs before any executor starts: the program, its entry, the parameters
// (--weights, or synthesized from the seed), and where each sample's data comes from.
struct RunInputOptions {
  std::string program_path;
  std::string entry;
  BindingOptions bindings;
  std::string weights;      // --weights F.safetensors; empty: synthesized from --seed
  std::string data;         // --data F.safetensors; empty: synthesized from --seed
  int64_t offset = 0;       // --offset K: the first sample
  int64_t samples = 0;      // --samples N; 0: not given (one sample, no sample axis)
  int64_t token_range = 0;  // --token-range V; 0: reference::default_token_range
  MemoryPlan memory;        // set by the command (not an option)
};
void add_run_input_options(CLI::App& command, RunInputOptions& options);

struct PreparedRun {
  ir::Program program;
  const ir::Function* entry = nullptr;
  reference::ParameterStore parameters;
  std::optional<reference::DataFile> data;  // --data, checked; else inputs are synthesized
  int64_t token_range = 0;
  int64_t first = 0;  // --offset
  int64_t count = 1;  // samples run
  // The parameters' bytes where they are (a checkpoint's tensors in their own type, mapped;
  // binary64 values 8 bytes each), once read; 0 before (then estimated at 8 bytes each).
  uint64_t parameter_bytes = 0;

  // The data arguments of sample k of the run (sample first + k of the data or the seed).
  std::vector<reference::HostTensor> inputs(int64_t k, uint64_t seed) const;
};
PreparedRun prepare_run(const RunInputOptions& options, const GlobalOptions& global);
// The parameters' bytes as read (PreparedRun::parameter_bytes, or 8 a parameter element before
// they are read). A binary64 realization on the native executor holds as much again: each
// parameter at rest in its stored type (exec/native/executor.h, prepare_parameters).
uint64_t parameter_bytes_as_read(const PreparedRun& prepared);

// The files a run reads (the program, --weights, --data), for check_output_files.
std::vector<CommandFile> run_input_files(const RunInputOptions& options);
// The file a `--realize` argument reads: the path after `@`, or "" for a type name.
std::string realization_file(const std::string& argument);

}  // namespace presk::cli
