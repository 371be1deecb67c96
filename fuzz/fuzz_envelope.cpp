// Fuzzes the envelope reader: any bytes either parse as an envelope, which is then written
// back as JSON and read again (the same envelope), or are refused with a UserError. Anything
// else (a crash, a sanitizer report, an InternalError, another exception) escapes to
// libFuzzer as a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "precision/envelope.h"
#include "support/diagnostics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    presk::precision::Envelope envelope = presk::precision::parse_envelope_text(text, "fuzz.json");
    const std::string written = presk::precision::envelope_json(envelope).dump(1);
    presk::precision::Envelope again = presk::precision::parse_envelope_text(written, "written.json");
    if (presk::precision::envelope_json(again).dump(1) != written) std::abort();  // not a round trip
  } catch (const presk::UserError&) {
  }
  return 0;
}
