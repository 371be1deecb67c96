// The verifier's program-level and per-let checks: names unique, types well formed,
// operands defined before use, arities, attributes, callees, and each let's type against
// its op's rule (ir/type_rules.h). Parameter reads are checked in verifier_contexts.cpp.
#include "ir/verifier.h"

#include <cmath>
#include <set>
#include <unordered_map>

#include "ir/type_rules.h"
#include "ir/verifier_detail.h"

namespace presk::ir {
namespace detail {

void ViolationReporter::report(const char* code, const Span& span, const std::string& message) {
  if (mode_ == VerifyMode::AfterPass) {
    internal_failure(__FILE__, __LINE__, "the IR verifies",
                     message + " (would be " + code + " in IR read from a file)");
  }
  if (sink_.diagnostics().size() < kMaxReported) sink_.report(code, span, message);
}

void ViolationReporter::throw_if_any() const {
  sink_.throw_if_errors();
}

std::string join_path(const std::string& context, const std::string& relative) {
  if (context.empty()) return relative;
  if (relative.empty()) return context;
  return context + "." + relative;
}

}  // namespace detail

namespace {

using detail::ViolationReporter;

constexpr int64_t kMaxElements = int64_t{1} << 62;
constexpr int kMaxRank = 64;

// What is wrong with a type's structure (not its meaning), or "".
std::string type_problem(const Type& type) {
  if (type.rank() > kMaxRank) return "has rank " + std::to_string(type.rank()) + " (at most 64)";
  if (!type.axes.empty() && type.axes.size() != type.shape.size()) {
    return "names " + std::to_string(type.axes.size()) + " axes of " +
           std::to_string(type.shape.size());
  }
  int64_t count = 1;
  for (int64_t extent : type.shape) {
    if (extent < 0) return "has a negative extent " + std::to_string(extent);
    if (extent > 0 && count > kMaxElements / extent) return "has more than 2^62 elements";
    count *= extent;
  }
  return {};
}

// The user-error code for a type rule violated by an op of `family`.
const char* rule_code(OpFamily family) {
  switch (family) {
    case OpFamily::Elementwise:
      return "E0452";
    case OpFamily::Reduction:
      return "E0453";
    case OpFamily::Contraction:
      return "E0454";
    case OpFamily::Layout:
      return "E0455";
    case OpFamily::Normalization:
    case OpFamily::Gather:
    case OpFamily::Loss:
      return "E0456";
    case OpFamily::Source:
      return "E0457";
    case OpFamily::Control:
      return "E0462";
  }
  return "E0452";
}

std::string initializer_problem(const Initializer& init) {
  if (!std::isfinite(init.a) || !std::isfinite(init.b)) return "has a non-finite argument";
  bool takes_a = init.kind == Initializer::Kind::Normal || init.kind == Initializer::Kind::Uniform;
  bool takes_b = init.kind == Initializer::Kind::Uniform;
  if ((!takes_a && init.a != 0) || (!takes_b && init.b != 0)) return "sets an unused argument";
  if (init.kind == Initializer::Kind::Normal && init.a < 0) return "has a negative σ";
  if (init.kind == Initializer::Kind::Uniform && init.a > init.b) return "has low > high";
  return {};
}

void verify_params(const Program& program, ViolationReporter& reporter) {
  std::set<std::string> seen;
  for (const Param& param : program.params) {
    if (!seen.insert(param.path).second) {
      reporter.report("E0466", {}, "parameter path `" + param.path + "` appears twice");
    }
    if (param.path.empty()) reporter.report("E0473", {}, "a parameter has an empty path");
    std::string problem = type_problem(param.type);
    if (!problem.empty()) {
      reporter.report("E0470", {}, "the type of parameter `" + param.path + "` " + problem);
    }
    if (param.stack_depth < 0 || param.stack_depth > param.type.rank()) {
      reporter.report("E0473", {},
                      "parameter `" + param.path + "` has stack depth " +
                          std::to_string(param.stack_depth) + " outside 0…rank");
    }
    problem = initializer_problem(param.init);
    if (!problem.empty()) {
      reporter.report("E0473", {}, "the initializer of parameter `" + param.path + "` " + problem);
    }
  }
}

void verify_bindings(const Program& program, ViolationReporter& reporter) {
  std::set<std::string> seen;
  for (const auto* list : {&program.consts, &program.dims}) {
    for (const auto& [name, value] : *list) {
      if (name.empty() || !seen.insert(name).second) {
        reporter.report("E0474", {}, "const or dim `" + name + "` is empty or bound twice");
      }
    }
  }
}

// Checks one function's lets in order; `defined` maps the names of earlier functions to
// their index (a callee must come before its caller).
class FunctionChecker {
 public:
  FunctionChecker(const Program& program, const Function& function,
                  const std::unordered_map<std::string, size_t>& defined,
                  ViolationReporter& reporter)
      : program_(program), function_(function), defined_(defined), reporter_(reporter) {}

  void run() {
    check_signature();
    for (uint32_t i = 0; i < function_.lets.size(); ++i) check_let(i);
    check_results();
  }

 private:
  void violation(const char* code, const Span& span, const std::string& message) {
    reporter_.report(code, span, message);
  }

  bool defined(ValueRef value, uint32_t lets_before) const {
    if (value.kind == ValueRef::Kind::Argument)
      return value.index < function_.argument_types.size();
    return value.index < lets_before;
  }

  void check_signature() {
    const Function& f = function_;
    if (f.name.empty()) violation("E0475", f.span, "a function has an empty name");
    check_adjoint_sites(f.cotangent_adjoint_of, f.span, "the cotangent argument of `" + f.name + "`");
    if (!f.argument_names.empty() && f.argument_names.size() != f.argument_types.size()) {
      violation("E0471", f.span,
                "`" + f.name + "` names " + std::to_string(f.argument_names.size()) +
                    " arguments but types " + std::to_string(f.argument_types.size()));
    }
    for (size_t i = 0; i < f.argument_types.size(); ++i) {
      if (f.argument_types[i].is_tuple())
        violation("E0476", f.span, "argument $" + std::to_string(i) + " of `" + f.name + "` is a tuple");
      std::string problem = type_problem(f.argument_types[i]);
      if (!problem.empty()) {
        violation("E0470", f.span,
                  "argument $" + std::to_string(i) + " of `" + f.name + "` " + problem);
      }
    }
  }

  void check_results() {
    const Function& f = function_;
    if (f.results.empty()) violation("E0464", f.span, "`" + f.name + "` returns nothing");
    for (ValueRef result : f.results) {
      if (!defined(result, static_cast<uint32_t>(f.lets.size()))) {
        violation("E0464", f.span,
                  "`" + f.name + "` returns " + value_ref_text(result) + ", which is not defined");
      } else if (f.type_of(result).is_tuple()) {
        violation("E0476", f.span, "`" + f.name + "` returns the tuple " + value_ref_text(result));
      }
    }
    if (!f.result_names.empty() && f.result_names.size() != f.results.size()) {
      violation("E0471", f.span,
                "`" + f.name + "` names " + std::to_string(f.result_names.size()) +
                    " results but returns " + std::to_string(f.results.size()));
    }
  }

  // A tuple is read by `get` only, and `get` reads only a tuple; an argument is never one.
  bool check_tuple_use(uint32_t index, const std::string& site) {
    const Let& let = function_.lets[index];
    for (ValueRef operand : let.operands) {
      bool tuple = function_.type_of(operand).is_tuple();
      if (tuple != (let.op == Op::get)) {
        violation("E0476", let.span,
                  site + " (" + op_name(let.op) + ") " +
                      (tuple ? "reads the tuple " + value_ref_text(operand) + "; only get may"
                             : "reads " + value_ref_text(operand) + ", which is not a tuple"));
        return false;
      }
    }
    return check_adjoint_site(index, site);
  }

  // adjoint_of: only in a `F.vjp`, naming sites of F.
  bool check_adjoint_site(uint32_t index, const std::string& site) {
    const Let& let = function_.lets[index];
    return check_adjoint_sites(let.adjoint_of, let.span, site);
  }

  // Each forward site that `holder` (a let, or the cotangent argument) is marked the adjoint of.
  bool check_adjoint_sites(const std::vector<uint32_t>& sites, const Span& span, const std::string& holder) {
    if (sites.empty()) return true;
    const std::string& name = function_.name;
    const Function* forward =
        name.size() > 4 && name.ends_with(".vjp")
            ? program_.find_function(std::string_view(name).substr(0, name.size() - 4))
            : nullptr;
    for (uint32_t forward_site : sites) {
      if (forward != nullptr && forward_site < forward->lets.size()) continue;
      violation("E0477", span,
                holder + " is marked the adjoint of %" + std::to_string(forward_site) +
                    ", which is no site of the function `" + name + "` differentiates");
      return false;
    }
    return true;
  }

  // The callee of a call or fold, when it exists and comes before this function.
  const Function* resolve_callee(const Let& let, const std::string& site) {
    auto found = defined_.find(let.attrs.callee);
    if (found != defined_.end()) return &program_.functions[found->second];
    if (program_.find_function(let.attrs.callee)) {
      violation("E0461", let.span,
                site + " calls `" + let.attrs.callee + "`, which is not defined before `" +
                    function_.name + "` (callees come before callers; no recursion)");
    } else {
      violation("E0460", let.span,
                site + " calls `" + let.attrs.callee + "`, which is not a function of the program");
    }
    return nullptr;
  }

  bool check_let_structure(uint32_t index, const std::string& site) {
    const Let& let = function_.lets[index];
    if (static_cast<int>(let.op) >= op_count()) {
      violation("E0451", let.span, site + " has an unknown op");
      return false;
    }
    bool sound = true;
    std::string problem = type_problem(let.type);
    if (!problem.empty()) {
      violation("E0470", let.span, site + "'s type " + problem);
      sound = false;
    }
    for (ValueRef operand : let.operands) {
      if (!defined(operand, index)) {
        violation("E0450", let.span,
                  site + " uses " + value_ref_text(operand) +
                      ", which is not an argument or an earlier let");
        sound = false;
      }
    }
    std::string unread = unread_attr_fields(let.op, let.attrs);
    if (!unread.empty()) {
      violation("E0459", let.span,
                site + " (" + op_name(let.op) + ") sets attributes it does not read: " + unread);
    }
    return sound;
  }

  void check_let(uint32_t index) {
    const Let& let = function_.lets[index];
    std::string site = function_.site_name(index);
    if (!check_let_structure(index, site)) return;
    if (let.op == Op::param) return;  // checked per context in verifier_contexts.cpp
    TypeRuleContext context;
    context.declared = &let.type;
    if (!check_tuple_use(index, site)) return;
    if (is_calling(let.op)) {
      context.callee = resolve_callee(let, site);
      if (!context.callee) return;
    }
    std::vector<Type> operands;
    for (ValueRef operand : let.operands) {
      operands.push_back(function_.type_of(operand));
      if (!type_problem(operands.back()).empty()) return;  // reported where it was defined
    }
    InferredType inferred = infer_result_type(let.op, operands, let.attrs, context);
    if (!inferred) {
      bool arity = op_info(let.op).arity >= 0 &&
                   let.operands.size() != static_cast<size_t>(op_info(let.op).arity);
      const char* code = arity                ? "E0451"
                         : is_folding(let.op) ? "E0463"
                                              : rule_code(op_info(let.op).family);
      violation(code, let.span, site + " (" + op_name(let.op) + "): " + inferred.error);
    } else if (!(*inferred.type == let.type)) {
      violation("E0458", let.span,
                site + " (" + op_name(let.op) + ") is declared " + type_to_string(let.type) +
                    " but its operands give " + type_to_string(*inferred.type));
    }
  }

  const Program& program_;
  const Function& function_;
  const std::unordered_map<std::string, size_t>& defined_;
  ViolationReporter& reporter_;
};

void verify_functions(const Program& program, ViolationReporter& reporter) {
  std::unordered_map<std::string, size_t> defined;
  for (size_t i = 0; i < program.functions.size(); ++i) {
    const Function& function = program.functions[i];
    FunctionChecker(program, function, defined, reporter).run();
    if (!defined.emplace(function.name, i).second) {
      reporter.report("E0465", function.span, "function `" + function.name + "` is defined twice");
    }
  }
}

}  // namespace

void verify_program(const Program& program, VerifyMode mode) {
  ViolationReporter reporter(mode);
  verify_bindings(program, reporter);
  verify_params(program, reporter);
  verify_functions(program, reporter);
  // Parameter reads rely on sound operands and callees; skip them after such errors.
  if (!reporter.any()) detail::verify_parameter_reads(program, reporter);
  reporter.throw_if_any();
}

}  // namespace presk::ir
