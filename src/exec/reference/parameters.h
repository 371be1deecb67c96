// The parameters a reference run reads, held as binary64 (8 bytes a weight) or in place where
// they were read, in their own type (converted to exact numbers only when a `param` let reads a
// slice), and the inputs of an entry: from the program's initializers and the seed
// (support/random.h), or from tensors given by the caller.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec/reference/value.h"
#include "ir/ir.h"
#include "support/param_view.h"

namespace presk::reference {

// A parameter is held either as binary64 values (synthesized, computed, or set by a caller) or
// where it was read (a view of a checkpoint's tensors, support/param_view.h), in its own type.
class ParameterStore {
 public:
  // Stores the values of the parameter at `path`, row-major over its full type (stack axes first).
  void set(const std::string& path, std::vector<double> values);
  // Stores the parameter as a view, in place, in its stored type.
  void set_view(const std::string& path, ParamView view);
  // The parameter where it is, never widened; a false view when absent. Readers that can
  // read a type other than binary64 (the interpreter, the native executor) use this.
  ParamView view(const std::string& path) const;
  // The values as binary64: a viewed parameter is widened on the first call and kept (a
  // reader that needs the whole tensor in binary64 asks for it). Thread-safe.
  const std::vector<double>* find(const std::string& path) const;
  size_t size() const { return values_.size(); }

 private:
  struct Held {
    std::vector<double> values;
    ParamView view;  // when set_view
    mutable std::shared_ptr<const std::vector<double>> widened;
  };
  std::map<std::string, Held> values_;
  std::shared_ptr<std::mutex> widening_ = std::make_shared<std::mutex>();
};

// Every parameter of `program` from its initializer: zeros, ones, or element i of the stream
// named by the parameter's path drawn by random::normal / random::uniform under `seed`.
// Elements are independent, so `threads` does not change a bit.
ParameterStore synthesize_parameters(const ir::Program& program, uint64_t seed, int threads);
// Element `index` (row-major over the full type) of `param` as synthesize_parameters draws it.
double synthesize_element(const ir::Param& param, uint64_t seed, uint64_t index);

// The range [0, V) of synthesized integer inputs: V is the leading extent of the smallest
// table any `embed` of the program reads (so every token is a valid row); without an embed,
// the class count (last axis of the logits) of the smallest `cross_entropy`; otherwise the
// user error E0530 (pass --token-range).
int64_t default_token_range(const ir::Program& program);

// The data arguments of `entry` from the seed: Z inputs uniform tokens in [0, token_range)
// (random::token), R inputs normal(0, 1) (random::normal), B inputs token range 2; argument k
// draws from the stream "input.<argument name>", element i at index `sample`·count + i.
std::vector<HostTensor> synthesize_inputs(const ir::Function& entry, uint64_t seed,
                                          int64_t token_range, int64_t sample = 0);

}  // namespace presk::reference
