// `presk run --realize R`: the native executor on a prepared run, optionally beside the exact
// reference and the gap between the two.
#pragma once

#include <string>

#include "cli/command.h"
#include "cli/pipeline.h"

namespace presk::cli {

struct NativeRunOptions {
  std::string realize;      // f64 | f32 | bf16 | @file.json
  bool scalar = false;      // the defining scalar kernels
  bool exact = false;       // also run the reference and print the gap
  long bits = 256;          // the reference's precision
  int digits = 10;          // significant digits of the exact values printed
  std::string out;          // --out F.safetensors: the native outputs
};

int run_native(const PreparedRun& prepared, const NativeRunOptions& options,
               const GlobalOptions& global);

}  // namespace presk::cli
