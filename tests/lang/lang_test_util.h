// Helpers of the language tests: compile a program held in a string or read from the
// repository, with a few dims bound.
#pragma once

#include <string>

#include "lang/frontend.h"

namespace presk::lang::testing {

inline std::shared_ptr<const SourceFile> source_of(std::string text, std::string path = "test.psk") {
  return std::make_shared<SourceFile>(SourceFile{std::move(path), std::move(text)});
}

inline std::string repo_path(const std::string& relative) { return std::string(PRESK_SOURCE_DIR) + "/" + relative; }

inline FrontendOptions options_with(std::vector<Binding> dims, std::vector<Binding> consts = {}, std::string entry = {},
                                    bool training = false) {
  FrontendOptions options;
  options.dims = std::move(dims);
  options.consts = std::move(consts);
  options.entry = std::move(entry);
  options.training = training;
  return options;
}

// The program compiled, or the text of its diagnostics (for failure messages).
inline ir::Program compile_text(const std::string& text, const FrontendOptions& options) {
  return compile(source_of(text), options);
}

}  // namespace presk::lang::testing
