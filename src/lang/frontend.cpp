// The front end as one call: read, lex, parse, check and lower, verify.
#include "lang/frontend.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/verifier.h"
#include "lang/lower.h"
#include "lang/parser.h"
#include "support/input_file.h"

namespace presk::lang {
namespace {

ProgramAst parse_source(const std::shared_ptr<const SourceFile>& source, DiagnosticSink& sink) {
  std::vector<Token> tokens = lex(source, sink);
  return parse(source, tokens, sink);
}

}  // namespace

std::shared_ptr<const SourceFile> read_source(const std::string& path) {
  std::string text = read_input_file(
      path, {"source file", "E0003", "check the path and that the file is readable", kProgramFileLimit});
  return std::make_shared<SourceFile>(SourceFile{path, std::move(text)});
}

std::string dump_ast(std::shared_ptr<const SourceFile> source) {
  DiagnosticSink sink;
  ProgramAst ast = parse_source(source, sink);
  sink.throw_if_errors();
  return print_ast(ast);
}

ir::Program compile(std::shared_ptr<const SourceFile> source, const FrontendOptions& options) {
  internal_assert(source != nullptr);
  DiagnosticSink sink;
  ProgramAst ast = parse_source(source, sink);
  sink.throw_if_errors();
  ProgramScope scope(ast, source, options, sink);
  ir::Program program = lower_program(scope, options);
  sink.throw_if_errors();
  ir::verify_program(program);
  return program;
}

}  // namespace presk::lang
