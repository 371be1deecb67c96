// The learning-rate schedule of a training run: a linear warm-up, then constant or a cosine
// decay to a floor (docs/training.md, "Schedule"). Every rate is computed with MPFR and rounded
// once to binary64, so no libm function decides a bit of a checkpoint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace presk::train {

enum class ScheduleKind : uint8_t { cosine, constant };

const char* schedule_name(ScheduleKind kind);  // "cosine", "constant"
std::optional<ScheduleKind> schedule_from_name(std::string_view name);

struct Schedule {
  ScheduleKind kind = ScheduleKind::cosine;
  double peak = 1e-3;   // η_max, reached at the end of the warm-up
  double floor = 1e-4;  // η_min, the cosine's end (not used by constant)
  int64_t warmup = 0;   // W: steps of linear warm-up
  int64_t steps = 1;    // N: the run's length (the cosine reaches η_min at step N)
};

// η(s) for step s ∈ [0, N) (from 0):
//   s < W:      η_max · (s + 1) / W
//   constant:   η_max
//   cosine:     η_min + ½ (1 + cos(π (s − W) / (N − W))) (η_max − η_min)
double learning_rate(const Schedule& schedule, int64_t step);

}  // namespace presk::train
