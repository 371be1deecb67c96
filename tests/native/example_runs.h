// The examples (examples/*.psk) prepared for the native tests (bits_test.cpp, vjp_test.cpp):
// compiled with every `dim` bound to a small extent, with seeded inputs and parameters, and
// an entry's vjp (src/ad/) ready to run on the native executor and on the reference.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "exec/reference/parameters.h"
#include "ir/ir.h"
#include "support/tensor.h"

namespace presk::exec::native::test_support {

struct Example {
  const char* file;  // under examples/
  const char* entry;
};
void PrintTo(const Example& example, std::ostream* out);
// "gpt_tiny_psk_loss": a test name.
std::string test_name(const Example& example);

// The example compiled for `entry` with its dims bound to 5, 6, … in order of declaration.
ir::Program compile_example(const std::string& file, const std::string& entry);

// The token range of integer inputs, as the reference draws them (2 where nothing bounds them).
int64_t token_range(const ir::Program& program);

// The data arguments of `entry` synthesized from `seed` (reference::synthesize_inputs).
std::vector<reference::HostTensor> example_inputs(const ir::Program& program,
                                                  const std::string& entry, uint64_t seed);
// The same values as tensors (R as F64, Z as I64, B as bool) for the native executor.
std::vector<Tensor> tensors_of(const std::vector<reference::HostTensor>& hosts);

// Whether two runs' outputs have the same types, shapes and bytes.
bool same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b);

// An entry's vjp, ready to run: the program with every F.vjp (ad::add_vjps), the name
// `entry.vjp`, its inputs (the entry's arguments from the seed, then the cotangent: 1 for a
// scalar result, else normal(0, 1) from the stream "test.cotangent"), and the parameters
// from the seed, every all-zero one (biases, gpt's head) redrawn normal(0.1) from the stream
// "<path>.nonzero" so that every gradient flows.
struct VjpRun {
  ir::Program program;
  std::string entry;
  std::vector<reference::HostTensor> inputs;
  reference::ParameterStore parameters;
};
VjpRun prepare_vjp(const ir::Program& forward, const std::string& entry, uint64_t seed);
VjpRun prepare_vjp(const Example& example, uint64_t seed);

}  // namespace presk::exec::native::test_support
