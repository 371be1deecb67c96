// libFuzzer target: the input bytes compiled as a presk program, with the dims T, N, B bound
// where the program declares them. A UserError is the expected outcome of bad input;
// anything else (an InternalError, a crash, a sanitizer report) escapes and is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lang/frontend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto source = std::make_shared<presk::SourceFile>(
      presk::SourceFile{"fuzz.psk", std::string(reinterpret_cast<const char*>(data), size)});
  presk::lang::FrontendOptions options;
  const std::string& text = source->text;
  for (const char* dim : {"T", "N", "B"}) {
    if (text.find(std::string("dim ") + dim) != std::string::npos) options.dims.push_back({dim, 4});
  }
  options.training = size % 2 == 1;
  try {
    presk::lang::compile(source, options);
  } catch (const presk::UserError&) {
  }
  try {
    presk::lang::dump_ast(source);
  } catch (const presk::UserError&) {
  }
  return 0;
}
