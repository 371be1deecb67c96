// Helpers shared by the files that implement ir/verifier.h; not part of its interface.
#pragma once

#include <string>
#include <vector>

#include "ir/verifier.h"

namespace presk::ir::detail {

// Where violations go: in VerifyMode::AfterPass the first one is an internal failure (a bug
// in the pass); in VerifyMode::UserInput each is a coded user error, collected and thrown
// together at the end (at most kMaxReported).
class ViolationReporter {
 public:
  explicit ViolationReporter(VerifyMode mode) : mode_(mode) {}
  void report(const char* code, const Span& span, const std::string& message);
  void throw_if_any() const;
  bool any() const { return !sink_.diagnostics().empty(); }

 private:
  static constexpr size_t kMaxReported = 20;
  VerifyMode mode_;
  DiagnosticSink sink_;
};

// The module path and stack depth a function runs in (ir.h, above `struct Program`).
struct CallContext {
  std::string path;  // "" at an entry, "blocks.ln1" inside a block
  int depth = 0;     // number of enclosing stacks (fold layers)
  bool operator<(const CallContext& other) const {
    return path != other.path ? path < other.path : depth < other.depth;
  }
};

// `<context>.<relative>` without a dot at the root or for an empty relative path.
std::string join_path(const std::string& context, const std::string& relative);

// Checks every `param` let against the parameters it reads in every context its function
// runs in, and every `fold` against the stack it folds over. Assumes the per-let checks
// (operands, callees defined earlier) have run.
void verify_parameter_reads(const Program& program, ViolationReporter& reporter);

}  // namespace presk::ir::detail
