// The native executor: runs an entry of a program under a realization, every value stored in
// the type the realization gives its site (docs/semantics.md). Bits are a function of
// (program, realization, inputs, parameters): the scalar path (force_scalar) defines them and
// the SIMD path and any thread count reproduce them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/native/realization.h"
#include "exec/native/value.h"
#include "ir/ir.h"
#include "support/dropout_mask.h"
#include "support/param_view.h"
#include "support/tensor.h"

namespace presk::exec::native {

// Time spent per op kind ("contract f32", "exp bf16", …: the op and its site's type), summed
// over every let run while ExecuteOptions::profile points at one (`presk bench --profile`).
struct OpTime {
  double seconds = 0;
  uint64_t calls = 0;
};
using OpProfile = std::map<std::string, OpTime>;

// What an observer (ExecuteOptions::observer) is handed after each let that is not a tuple:
// the site, its call context (module path, layer indices of the enclosing stacks) and its value,
// with the values its operands were read from.
struct LetObservation {
  const ir::Function& function;
  uint32_t let_index;
  const std::string& module_path;
  const std::vector<int64_t>& layers;
  const Value& value;
  const std::vector<const Value*>& operands;
};
using LetObserver = std::function<void(const LetObservation&)>;

// Where ExecuteOptions::cotangents hands each streamed parameter cotangent: the parameter's
// full path, the layers of the stacks its let ran in (empty for a whole parameter) and the
// value, valid during the call.
using CotangentSink =
    std::function<void(const std::string& path, const std::vector<int64_t>& layers, const Value& value)>;

struct ExecuteOptions {
  ExecuteOptions() = default;
  // {threads, force_scalar}, as before `training` existed.
  ExecuteOptions(int threads_, bool force_scalar_) : threads(threads_), force_scalar(force_scalar_) {}

  int threads = 1;            // threads for contractions and elementwise kernels (workers.h; <= 1: one)
  bool force_scalar = false;  // the defining scalar kernels instead of SIMD
  // A training run's dropout key (support/dropout_mask.h): each `dropout` keeps its seeded
  // mask, the reference's bit for bit. Absent: dropout is the identity.
  std::optional<random::DropoutKey> training;
  // Where to add each op's time (call, fold and other control ops count only their callees).
  OpProfile* profile = nullptr;
  // Called after each let, one let after another in program order (`calibrate --sweep f64`).
  // With an observer every let runs and holds its whole value: no let is skipped for being
  // unread, no contraction takes its bias add, no broadcast is left to its readers and no
  // entry above a causal mask's diagonal is left uncomputed. The results are unchanged except
  // where a contraction would have taken its bias add (then the add rounds once more).
  const LetObserver* observer = nullptr;
  // A reverse sweep that streams its parameters' cotangents (ir/cotangent_stream.h): each let
  // that computes one which reaches the entry's results unchanged (the entry's results named
  // for parameters, through `get`s and returns only) is handed here as soon as it is computed
  // (after the observer) and freed; the entry returns an empty value (no storage) in its place.
  // A stacked parameter's layers arrive in layer order, one layer's cotangent at a time: a
  // fold_vjp then runs its layers twice, from the last (observed: the carries, each layer's
  // cotangents freed unseen) and again from the first (unobserved, from the kept carries:
  // the same bits), so that the elements arrive in the order of the stacked cotangent.
  const CotangentSink* cotangents = nullptr;
};

// Where a parameter's values come from: its full path → its row-major values over its full
// type (stack axes first), where they are and in their stored type, e.g.
// reference::ParameterStore::view (a source of binary64 vectors, such as ParameterStore::find,
// converts); a false view when absent.
using ParameterSource = std::function<ParamView(const std::string& path)>;

// Every parameter at rest in its realized type (or as integer weights), converted once.
class PreparedParameters {
 public:
  const Value* find(const std::string& path) const;
  void set(const std::string& path, Value value) { values_[path] = std::move(value); }
  size_t size() const { return values_.size(); }

 private:
  std::map<std::string, Value> values_;
};

// The parameters last prepared from one source, each with the type (or quantization) it was
// prepared in, so that a preparation of another realization (a solve measures many) prepares
// again only the parameters whose type changed and shares the rest's storage. Not thread-safe;
// one per parameter source, which must not change while the cache lives.
class PreparedCache {
 public:
  const Value* find(const std::string& path, const std::string& key) const;
  void store(const std::string& path, std::string key, Value value);
  uint64_t preparations() const { return preparations_; }  // parameters prepared through it

 private:
  std::map<std::string, std::pair<std::string, Value>> values_;  // path → (key, value)
  uint64_t preparations_ = 0;
};

// Converts each parameter of `program` from `source` into its realized type: f32/bf16 rounded
// once (RNE) from its stored type (copied as it is when stored so), f64 kept in its stored type
// (its readers widen it exactly: never a whole binary64 copy), or quantized (kernels.h). A
// missing parameter or a wrong count is E0620. With a cache, a parameter already prepared there
// in the same type is taken from it (the same bits, no copy).
PreparedParameters prepare_parameters(const ir::Program& program, const Realization& realization,
                                      const ParameterSource& source, PreparedCache* cache = nullptr);

// Runs `entry` on `inputs` (one tensor per argument, in order; values converted to the
// argument's realized type: R arguments take the realization's default type). Returns the
// entry's results as tensors of their realized element types (f64, f32, bf16, i64, bool).
std::vector<Tensor> execute(const ir::Program& program, const std::string& entry,
                            const Realization& realization, const std::vector<Tensor>& inputs,
                            const PreparedParameters& parameters, const ExecuteOptions& options = {});

// execute on the executor's own values: arguments as argument_value makes them (or results of
// another run, e.g. E.fwd's handed to E.bwd without a copy; each must have its argument's
// shape), results as the entry computed them. output_tensor turns a result into execute's.
std::vector<Value> execute_values(const ir::Program& program, const std::string& entry,
                                  const Realization& realization, std::vector<Value> arguments,
                                  const PreparedParameters& parameters, const ExecuteOptions& options = {});
// Argument `index` of `entry` from a tensor (R arguments take the realization's default type).
Value argument_value(const ir::Program& program, const std::string& entry, size_t index, const Tensor& tensor,
                     const Realization& realization);
Tensor output_tensor(const Value& value);

// How many cache_write lets copied their cache instead of writing it in place, since the process
// started (tests: a decode loop that hands the caches back copies none after its first step).
uint64_t cache_write_copies();

}  // namespace presk::exec::native
