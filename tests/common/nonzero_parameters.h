// Synthesized parameters of a program with the all-zero ones (biases, a head) redrawn from a
// normal distribution, so that every path of a test counts (the decode and chip attention tests).
#pragma once

#include <utility>
#include <vector>

#include "exec/reference/parameters.h"
#include "ir/ir.h"
#include "support/random.h"

namespace presk::testing {

inline reference::ParameterStore nonzero_parameters(const ir::Program& program) {
  const reference::ParameterStore synthesized = reference::synthesize_parameters(program, 5, 1);
  reference::ParameterStore store;
  for (const ir::Param& param : program.params) {
    std::vector<double> values = *synthesized.find(param.path);
    const uint64_t stream = random::stream_of(param.path + ".nonzero");
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] == 0) values[i] = random::normal(5, stream, i, 0.3);
    }
    store.set(param.path, std::move(values));
  }
  return store;
}

}  // namespace presk::testing
