// The index plan of a contraction (attrs.spec, e.g. "td,dv->tv"): each output element is
// Σ xᵢ·wᵢ over the contracted letters (those absent from the output), in row-major order of
// the contracted letters ordered by first appearance in the spec (x's letters, then w's) — the
// order every executor adds the terms in (docs/semantics.md). Used by the reference's
// contract (ops_contract.cpp) and by the proof export (src/proof), which states each term.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/reference/value.h"

namespace presk::reference {

// One index letter of the spec: its extent and its stride in each operand (0 where absent).
struct Letter {
  char name;
  int64_t extent = 1;
  int64_t x_stride = 0;
  int64_t w_stride = 0;
};

struct ContractionPlan {
  std::vector<Letter> free;        // in output order
  std::vector<Letter> contracted;  // in order of first appearance
};

ContractionPlan plan_contraction(const std::string& spec, const Shape& x, const Shape& w);

// The operand offsets where output element `flat` starts.
void free_offsets(const ContractionPlan& plan, int64_t flat, int64_t& x, int64_t& w);

// Calls run(x_offset, w_offset, letter) for each run of the innermost contracted letter, the
// outer contracted letters in row-major order.
template <class Run>
void for_each_run(const ContractionPlan& plan, int64_t x0, int64_t w0, const Run& run) {
  if (plan.contracted.empty()) return run(x0, w0, Letter{'\0', 1, 0, 0});
  const Letter& inner = plan.contracted.back();
  int64_t outer_count = 1;
  for (size_t i = 0; i + 1 < plan.contracted.size(); ++i) outer_count *= plan.contracted[i].extent;
  for (int64_t k = 0; k < outer_count; ++k) {
    int64_t rest = k, x = x0, w = w0;
    for (size_t i = plan.contracted.size() - 1; i-- > 0;) {
      int64_t index = rest % plan.contracted[i].extent;
      rest /= plan.contracted[i].extent;
      x += index * plan.contracted[i].x_stride;
      w += index * plan.contracted[i].w_stride;
    }
    run(x, w, inner);
  }
}

}  // namespace presk::reference
