// A chip's time profile (docs/chip.md, "A chip's profile"): what `presk solve --contract C
// --profile P` prices its decisions by instead of bytes — seconds per int8 multiply-accumulate,
// per float multiply-accumulate, per value quantized (or rounded into a narrower keep or form),
// and the bytes per second the chip moves. The user supplies it (presk cannot time a chip: the
// native executor emulates the chip's integer sums); JSON, `"format": 1`, every field checked on
// read with a coded error that names it (E1729–E1735).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace presk::numerics {

struct ChipProfile {
  std::string chip;      // a name, for messages and reports
  std::string source;    // "example" (illustrative numbers) or "measured" (on the chip)
  double int8_mac = 0;   // seconds per int8 × int8 multiply-accumulate into the accumulator
  double float_mac = 0;  // seconds per float multiply-accumulate (a product on values)
  double quantize = 0;   // seconds per value quantized, or rounded into a narrower keep or form
  double bytes_per_second = 0;  // the rate the chip moves its operands' bytes at
};

// The profile a JSON object states; `origin` names it in messages.
ChipProfile parse_chip_profile(const nlohmann::json& json, const std::string& origin);

// The profile in file `path` (E1729 when it cannot be read or is not JSON).
ChipProfile read_chip_profile(const std::string& path);

}  // namespace presk::numerics
