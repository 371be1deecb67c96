// The safetensors inputs of a reference run. Parameters (load_weights) come from a file whose layout matches the
// program exactly: one tensor per parameter, named by its path, of the parameter's full shape
// (stack axes first), of a float dtype (F64, F32 or BF16; each value is exact in binary64).
// Anything else is refused with every mismatch named at once, never read at shifted offsets.
#pragma once

#include <memory>
#include <string>

#include "exec/reference/parameters.h"
#include "ir/ir.h"

namespace presk::reference {

// E0510 missing tensor, E0511 extra tensor, E0512 shape differs, E0513 not a float dtype
// (plus the file's own codes, E01xx, from support/safetensors.h). A folder is a Hugging Face
// checkpoint, read by load_checkpoint_weights (checkpoint.h).
ParameterStore load_weights(const ir::Program& program, const std::string& path);


// The data arguments of `entry` from a safetensors file (`--data`) holding one tensor per
// argument, named by the argument, of its type's shape (one sample) or with one more leading
// axis of samples. A Z[…, W] argument also reads a token-window tensor [S, …, W + 1] (presk data
// prepare's windows), each sample its window's first W tokens: a logits entry reads the windows
// a loss entry reads. R arguments need a float dtype, Z and B an integer or BOOL one. The file
// is opened and its layout checked once; samples are then read on demand, from any thread.
// E0514 missing tensor, E0515 shape differs (or a sample beyond the file's), E0516 dtype.
class DataFile {
 public:
  DataFile(const ir::Function& entry, const std::string& path);
  ~DataFile();
  DataFile(DataFile&&) noexcept;
  DataFile& operator=(DataFile&&) noexcept;
  DataFile(const DataFile&) = delete;
  DataFile& operator=(const DataFile&) = delete;

  // Samples the file holds: the smallest leading extent over its tensors (1 for a tensor
  // stored without a sample axis).
  int64_t samples() const;
  // E0515 naming the first tensor with fewer than offset + count samples.
  void require(int64_t offset, int64_t count) const;
  // The arguments of sample `index` (require()d before).
  std::vector<HostTensor> sample(int64_t index) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The arguments of sample `offset` of a --data file (DataFile in one call).
std::vector<HostTensor> load_inputs(const ir::Function& entry, const std::string& path,
                                    int64_t offset);

}  // namespace presk::reference
