// The front end as one call: source text → tokens → AST → typed AST → IR, verified.
// `presk dump --stage ast|ir|sites` stops after the stage it names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace presk::lang {

struct Binding {
  std::string name;
  int64_t value = 0;
};

struct FrontendOptions {
  std::vector<Binding> consts;  // --const K=V: overrides a `const` declared in the program
  std::vector<Binding> dims;    // --dim N=V: binds a `dim`
  std::string entry;            // only this entry (and what it calls); empty: every entry
  bool training = false;        // keep dropout (a training run); otherwise dropout is removed
};

// Reads a program from disk (E0003 when it cannot be read).
std::shared_ptr<const SourceFile> read_source(const std::string& path);

// Parses `source` and prints its AST (every syntax error reported at once, as a UserError).
std::string dump_ast(std::shared_ptr<const SourceFile> source);

// Parses, type-checks and lowers `source` under `options`, then verifies the IR.
// Throws a UserError holding every front-end diagnostic found.
ir::Program compile(std::shared_ptr<const SourceFile> source, const FrontendOptions& options);

}  // namespace presk::lang
