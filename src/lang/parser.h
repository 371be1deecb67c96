// The parser: tokens → AST, with error recovery. A syntax error is reported (E0210–E0218)
// and the parser resynchronizes at the next statement, member or declaration, so one run
// reports several errors. Nesting is depth-limited (E0214), so hostile input cannot exhaust
// the stack of this or any later pass.
#pragma once

#include "lang/ast.h"

namespace presk::lang {

// The deepest expression tree the front end accepts.
inline constexpr int kMaxExpressionDepth = 200;

ProgramAst parse(const std::shared_ptr<const SourceFile>& source, const std::vector<Token>& tokens,
                 DiagnosticSink& sink);

}  // namespace presk::lang
