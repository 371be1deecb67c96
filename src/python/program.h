// The module's program functions: describe, run_exact, run_native (python/program.cpp), and
// what they share with the native session (python/session.cpp): a run request prepared as
// `presk run` prepares one (cli/pipeline.h).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cli/pipeline.h"

namespace presk::python {

// The program and how to run it, as the Python layer passes them.
struct RunRequest {
  std::string path;
  std::vector<std::string> consts, dims;  // "NAME=VALUE"
  std::string entry;
  std::string weights;  // empty: synthesized from the seed
  uint64_t seed = 0;
  int threads = 0;      // 0: all cores
};

cli::GlobalOptions global_of(const RunRequest& request);

// The program compiled, its parameters loaded (or synthesized) and the run's memory checked.
cli::PreparedRun prepare(const RunRequest& request, const cli::GlobalOptions& global, uint64_t reference_bytes,
                         uint64_t native_bytes);

void bind_program(pybind11::module_& module);
void bind_session(pybind11::module_& module);  // python/session.cpp

}  // namespace presk::python
