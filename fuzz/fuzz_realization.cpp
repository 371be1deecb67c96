// Fuzzes the realization reader: any bytes either parse as a realization, which is then
// validated against a small program (its sites, parameters and quant axes), or are refused
// with a UserError. Anything else (a crash, a sanitizer report, an InternalError, a stray
// exception such as a stoull out_of_range) escapes to libFuzzer as a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "exec/native/realization.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"

namespace {

// A program with sites, a stacked and a plain parameter, so validation has names to check.
const presk::ir::Program& program() {
  static const presk::ir::Program compiled = [] {
    auto source = std::make_shared<presk::SourceFile>(presk::SourceFile{"fuzz.psk", R"(
const D = 4
module Layer {
  param w : R[D, D] = normal(0.1)
  fn apply(x : R[D]) -> R[D] = relu(x @ w)
}
module Net {
  param layers : stack{2} Layer
  param head : R[D] = ones
  fn apply(x : R[D]) -> R {
    let y = fold layers over x
    sum(y * head)
  }
}
entry loss(p : Net, x : R[D]) -> R = p.apply(x)
)"});
    return presk::lang::compile(source, {});
  }();
  return compiled;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const presk::ir::Program& compiled = program();
  try {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    presk::exec::native::Realization realization = presk::exec::native::parse_realization_text(text, "fuzz.json");
    presk::exec::native::validate_realization(realization, compiled);
    (void)presk::exec::native::realization_to_json(realization).dump();
  } catch (const presk::UserError&) {
  }
  return 0;
}
