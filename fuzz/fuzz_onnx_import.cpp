// Fuzzes the ONNX import: any bytes either import (the program compiles: the import checks
// it) or are refused with a UserError (E1300-E1349). E1312 is a finding, not a refusal: the
// import wrote a program that does not compile, a check it missed. Anything else (a crash, a
// sanitizer report, an InternalError or another exception) escapes to libFuzzer as a finding.
// The same bytes are also read as a --fix-input tensor file (a TensorProto or a .npy array) and
// decoded as the import decodes it. External data is read from a scratch folder that holds one
// 64-byte file, `weights.bin` (seeds external_*.onnx name it, a location outside, a missing one).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "import/builder.h"
#include "import/onnx_import.h"
#include "import/onnx_reader.h"
#include "support/diagnostics.h"

namespace {

// The folder external data is read from: made once, with weights.bin holding bytes 0 … 63.
const std::string& external_folder() {
  static const std::string folder = [] {
    std::filesystem::path made = std::filesystem::temp_directory_path() / "presk_fuzz_onnx_external";
    std::filesystem::create_directories(made);
    std::ofstream out(made / "weights.bin", std::ios::binary | std::ios::trunc);
    for (int i = 0; i < 64; ++i) out.put(static_cast<char>(i));
    return made.string();
  }();
  return folder;
}

void import_model(const uint8_t* data, size_t size) {
  try {
    presk::onnx_import::ImportOptions options;
    options.source_name = "fuzz.onnx";
    options.folder = external_folder();
    presk::onnx_import::ImportedModel model = presk::onnx_import::import_onnx({data, size}, options);
    volatile size_t keep = model.program.size() + model.weights.size();  // the work must happen
    (void)keep;
  } catch (const presk::UserError& error) {
    if (error.code() == "E1312") {
      std::fprintf(stderr, "E1312 (the import wrote a program that does not compile): %s\n", error.what());
      std::abort();
    }
  }
}

void read_tensor(const uint8_t* data, size_t size) {
  try {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    onnx::TensorProto tensor = presk::onnx_import::parse_tensor(bytes, "fuzz.npy");
    volatile size_t keep = presk::onnx_import::decode_tensor(tensor, "--fix-input fuzz")->values().size();
    (void)keep;
  } catch (const presk::UserError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  import_model(data, size);
  read_tensor(data, size);
  return 0;
}
