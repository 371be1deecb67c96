// Decode runs (docs/chip.md, "Solved"): what the chip's solve measures a program with a decode
// entry on. Run k feeds its start token at position 0, then at each step the exact reference's
// greedy choice, for `steps` steps; the exact logits of every step are computed once. A chip's
// program is measured by its native generation fed the same tokens, its caches handed from step to
// step as the chip keeps them: the gap is max |chip logit − exact logit| over every step and run,
// the magnitude max |exact logit|.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/native/realization.h"
#include "exec/reference/parameters.h"
#include "ir/ir.h"
#include "solve/chip_solve.h"

namespace presk::solve {

class DecodeRuns : public ChipRuns {
 public:
  // `in_sample` and `held_out`: each run's start token.
  DecodeRuns(const ir::Program& program, const reference::ParameterStore& weights,
             const exec::native::Realization& realization, const std::vector<int64_t>& in_sample,
             const std::vector<int64_t>& held_out, int64_t steps, long bits, int threads, const Progress& progress);
  precision::MeasuredGap measure(const ir::Program& chip, bool held_out) override;
  bool has_held_out() const override { return !held_out_.empty(); }
  // The largest |exact logit| of the in-sample runs (what a relative budget is relative to).
  double magnitude() const;

 private:
  struct Run {
    std::vector<int64_t> tokens;               // fed at positions 0, 1, …
    std::vector<std::vector<double>> logits;   // the exact logits after each
  };
  Run exact_run(int64_t start, int64_t steps, long bits) const;

  const ir::Program& program_;
  const reference::ParameterStore& weights_;
  const exec::native::Realization& realization_;
  int threads_;
  std::vector<Run> in_sample_, held_out_;
};

}  // namespace presk::solve
