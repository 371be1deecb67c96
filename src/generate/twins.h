// The decode entry's twin sites: a realization is solved on the full-sequence entries (`loss`,
// `logits`), whose sites are `LayerNorm.apply/%4`, `GPT.apply/%7`, …; the decode step computes
// the same values in other functions (`LayerNorm.row/%4`, the caches of `SelfAttention.decode`).
// Each decode site is matched to the full-sequence values it computes a row of, by what it is
// computed from (the parameters, the tokens, the op and its operands), so the solved types carry
// over and the decode step's logits stay row `at` of the full logits bit for bit.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "exec/native/realization.h"
#include "ir/ir.h"

namespace presk::generate {

// Where a decode site's type comes from.
struct TwinSource {
  std::vector<std::string> sites;   // full-sequence sites computing the same values (row by row)
  std::vector<std::string> params;  // or parameters it reads a row of (`embed(pos, at)`)
  // A cache: the full-sequence transposes its values pass through before the contraction that
  // reads them (`transpose(k)` in `q @ transpose(k)`), each rounding them again.
  std::vector<std::string> rounded_by;
};

struct DecodeTwins {
  std::map<std::string, TwinSource> twins;  // by the decode function's site name
  std::vector<std::string> unmatched;       // decode sites no full-sequence value matches
};

// The twins of every site the entry `decode` reaches, found in the program's other entries.
DecodeTwins find_decode_twins(const ir::Program& program, const ir::Function& decode);

// `realization` with each decode site it does not name typed as its twin: a cache as the
// narrowest of its row's type and the transposes' types, a row of a parameter as the parameter
// (f32 for an integer-quantized one, whose values are f32 meanings), a site whose twins differ in
// type as the twin in the same module with the same %n. Sites the realization names keep their
// type; unmatched ones keep the default.
// The entry generation runs. A command running it compiles every entry (so that a realization
// solved on the others validates) and types it with realization_for_entry.
inline constexpr const char* kDecodeEntry = "decode";

exec::native::Realization realization_for_decode(const exec::native::Realization& realization, const ir::Program& program,
                                                 const ir::Function& decode);

// The realization `entry` runs under: realization_for_decode's for the decode entry (presk run,
// generate, serve and export c type its twin sites alike), `realization` for any other.
exec::native::Realization realization_for_entry(const exec::native::Realization& realization, const ir::Program& program,
                                                const std::string& entry);

}  // namespace presk::generate
