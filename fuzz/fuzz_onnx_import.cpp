// Fuzzes the ONNX import: any bytes either import (the program compiles: the import checks
// it) or are refused with a UserError (E1300-E1349, or a front-end code inside E1312).
// Anything else (a crash, a sanitizer report, an InternalError or another exception) escapes
// to libFuzzer as a finding.
#include <cstddef>
#include <cstdint>

#include "import/onnx_import.h"
#include "support/diagnostics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    presk::onnx_import::ImportOptions options;
    options.source_name = "fuzz.onnx";
    presk::onnx_import::ImportedModel model = presk::onnx_import::import_onnx({data, size}, options);
    volatile size_t keep = model.program.size() + model.weights.size();  // the work must happen
    (void)keep;
  } catch (const presk::UserError&) {
  }
  return 0;
}
