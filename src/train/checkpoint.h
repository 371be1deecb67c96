// Training checkpoints: a safetensors file with every parameter by path, AdamW's moments as
// `adam.m.<path>` and `adam.v.<path>`, all in the master type, and the run's identity as
// metadata (docs/training.md, "Checkpoints"). Written atomically; read back only when its
// program and layout match exactly (E1004–E1007).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "exec/native/numeric.h"
#include "ir/ir.h"

namespace presk::train {

using exec::native::RealType;

inline constexpr int kCheckpointFormat = 1;
inline constexpr const char* kCheckpointKind = "presk training checkpoint";

// One parameter's master weights and moments, row-major over its full type (stack axes
// first); every value is a value of the master type.
struct ParameterState {
  std::string path;
  std::vector<int64_t> shape;
  int stack_depth = 0;
  std::vector<double> theta, m, v;
  std::vector<std::string> axes = {};  // the parameter's axis names (the const or dim of each), or empty
};

// What a run carries from step to step.
struct TrainState {
  int64_t step = 0;                        // completed steps
  std::vector<ParameterState> parameters;  // in the program's order
};

// The parameters of `program` with empty values (shapes and paths only).
std::vector<ParameterState> parameter_layout(const ir::Program& program);

// What a checkpoint says about the run besides its tensors: the metadata keys a resumed run
// must match (program_hash, entry, seed, master_type, realization, hyperparameters, data),
// each as text.
using RunIdentity = std::map<std::string, std::string>;

// Notes a checkpoint and a weights file carry beside the identity and that a resume does not
// compare: the data's `vocabulary` and `vocabulary_size` (vocabulary_check.h reads them back).
using RunNotes = std::map<std::string, std::string>;

// Writes `state` to `path` atomically: tensors in the master type's dtype (F64, F32, BF16),
// metadata format, kind, step, generator, `identity` and `notes`. The bytes depend only on the
// state, the identity and the notes.
void write_checkpoint(const std::string& path, const TrainState& state, RealType master,
                      const RunIdentity& identity, const RunNotes& notes = {});

// The parameters alone (no moments), in the master dtype, with metadata kind ("presk trained
// weights"), format, step, program_hash and entry: the `--weights` file of `presk run`,
// `calibrate` and the other tools, which refuse tensors that are not parameters; and `notes`.
// Atomic.
void write_weights(const std::string& path, const TrainState& state, RealType master,
                   const RunIdentity& identity, const RunNotes& notes = {});

// A checkpoint to resume: E1004 when `path` is not a presk training checkpoint, E1005 when its
// program hash differs from identity's, E1006 when its tensors are not exactly the layout's
// (each parameter and both moments, of its shape, in the master dtype, nothing else), E1007
// naming each other identity key that differs. Returns the state at the checkpoint's step.
// `program` (may be null) names the const or dim of an axis whose extent differs (E1006).
TrainState read_checkpoint(const std::string& path, const std::vector<ParameterState>& layout,
                           RealType master, const RunIdentity& identity, const ir::Program* program = nullptr);

// Parameters to start from (--init): a checkpoint or any weights file with one float tensor
// per parameter, by path, of its shape (E1006 otherwise; `adam.*` tensors are ignored). Values
// are rounded once into the master type; moments start at 0, the step at 0.
TrainState read_initial_parameters(const std::string& path,
                                   const std::vector<ParameterState>& layout, RealType master,
                                   const ir::Program* program = nullptr);

}  // namespace presk::train
