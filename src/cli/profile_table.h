// The per-op-kind time table of `presk bench --profile` and `presk train --profile`
// (ExecuteOptions::profile): op kinds by time, most first, per run (or step).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "exec/native/executor.h"

namespace presk::cli {

// [{"op", "ms_per_run", "calls_per_run"}…] over `runs` runs, most time first.
nlohmann::json profile_json(const exec::native::OpProfile& profile, size_t runs);

// The table on stdout: ms per run, share of `total_ms` (all runs; `share_of` names it), calls
// per run; `unit` names a run ("run", "step").
void print_profile(const exec::native::OpProfile& profile, size_t runs, double total_ms, const char* unit,
                   const char* share_of);

}  // namespace presk::cli
