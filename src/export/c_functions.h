// The generated C functions of a program's IR functions: one per (function, module context,
// argument storage types), each computing its lets in order and returning its one result in a
// buffer the caller owns (exec/native/executor.cpp's walk, written out).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "exec/native/realization.h"
#include "export/c_code.h"
#include "ir/ir.h"

namespace presk::export_c {

// A generated function: result 0 returned, the others through `void** rest`; a result that is a
// writable argument written in place (a cache) is that argument's buffer (`aliases`), the
// others buffers of their own the caller frees.
struct Specialization {
  std::string c_name;
  Store result = Store::f32;
  std::vector<Store> results;
  std::vector<int> aliases;  // per result: the argument it is, or -1
};

class Functions {
 public:
  Functions(const ir::Program& program, const exec::native::Realization& realization)
      : program_(program), realization_(realization) {}

  // The C function of `function` run in module context `path` inside `depth` stacks, with
  // arguments stored as `arguments`; written (with its callees, first) on first use.
  // `writable`: the arguments the function may write in place (its caller's sole reference).
  Specialization specialize(const ir::Function& function, const std::string& path, size_t depth,
                            const std::vector<Store>& arguments, const std::vector<bool>& writable = {});
  // A probe only learns the results' types: a scan whose results are not written in place is
  // not refused (its code is not used).
  void set_probe() { probe_ = true; }
  // Every function written so far, callees before callers.
  const std::string& definitions() const { return definitions_; }
  // Indices (into program.params) of the parameters the functions read.
  const std::set<size_t>& used_parameters() const { return used_parameters_; }
  // A parameter's storage: its realized type (integer weights: f32, their meanings).
  Store parameter_store(const ir::Param& param) const;

 private:
  struct Frame;
  void emit_let(Frame& frame, uint32_t index);
  void emit_param(Frame& frame, uint32_t index);
  void emit_call(Frame& frame, uint32_t index);
  void emit_fold(Frame& frame, uint32_t index);
  void emit_get(Frame& frame, uint32_t index);
  void scan_results(Frame& frame, uint32_t index, const CValue& carried, const std::vector<int>& aliases,
                    const std::vector<Store>& stores);
  void emit_cache_write_let(Frame& frame, uint32_t index);
  std::string return_text(Frame& frame, Specialization& own);
  int64_t layer_count(const std::string& stack_path, size_t depth) const;

  const ir::Program& program_;
  const exec::native::Realization& realization_;
  std::map<std::string, Specialization> done_;
  std::string definitions_;
  std::set<size_t> used_parameters_;
  bool probe_ = false;
};

}  // namespace presk::export_c
