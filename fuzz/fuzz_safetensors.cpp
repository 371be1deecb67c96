// Fuzzes the safetensors reader: any bytes either parse, and then every tensor's values
// read back, or are refused with a UserError. Anything else (a crash, a sanitizer report,
// an InternalError or another exception) escapes to libFuzzer as a finding.
#include <cstddef>
#include <cstdint>

#include "support/diagnostics.h"
#include "support/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    presk::SafetensorsFile file = presk::parse_safetensors({data, size}, "fuzz.safetensors");
    double sum = 0;
    for (const presk::SafetensorsEntry& entry : file.entries()) {
      presk::Tensor tensor = file.read(entry);
      for (uint64_t i = 0; i < tensor.element_count(); ++i) sum += tensor.get(i);
      if (entry.element_count > 0) sum += file.value(entry, entry.element_count - 1);
    }
    volatile double keep = sum;  // the loads must happen
    (void)keep;
  } catch (const presk::UserError&) {
  }
  return 0;
}
