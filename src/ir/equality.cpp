// Structural comparison of programs (ir/equality.h).
#include "ir/equality.h"

namespace presk::ir {
namespace {

bool all_empty(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (!name.empty()) return false;
  }
  return true;
}

bool same_names(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return a == b || (all_empty(a) && all_empty(b));
}

bool same_type(const Type& a, const Type& b) {
  return a == b && same_names(a.axes, b.axes);
}

std::string let_difference(const Let& a, const Let& b) {
  if (a.op != b.op) return "ops differ";
  if (!same_type(a.type, b.type)) return "types differ";
  if (a.operands != b.operands) return "operands differ";
  if (!(a.attrs == b.attrs)) return "attrs differ";
  if (a.adjoint_of != b.adjoint_of) return "adjoint sites differ";
  return {};
}

std::string signature_difference(const Function& a, const Function& b) {
  if (a.name != b.name) return "names differ (`" + b.name + "`)";
  if (a.module != b.module) return "modules differ";
  if (a.is_entry != b.is_entry) return "entry flags differ";
  if (a.budget != b.budget) return "precision budgets differ";
  if (!same_names(a.argument_names, b.argument_names)) return "argument names differ";
  if (a.argument_types.size() != b.argument_types.size()) return "argument counts differ";
  for (size_t i = 0; i < a.argument_types.size(); ++i) {
    if (!same_type(a.argument_types[i], b.argument_types[i])) return "argument types differ";
  }
  if (a.results != b.results) return "results differ";
  if (a.cotangent_adjoint_of != b.cotangent_adjoint_of) return "cotangent adjoint sites differ";
  if (!same_names(a.result_names, b.result_names)) return "result names differ";
  if (a.lets.size() != b.lets.size()) return "let counts differ";
  return {};
}

std::string function_difference(const Function& a, const Function& b) {
  std::string difference = signature_difference(a, b);
  for (size_t i = 0; difference.empty() && i < a.lets.size(); ++i) {
    difference = let_difference(a.lets[i], b.lets[i]);
    if (!difference.empty()) difference = "let %" + std::to_string(i) + ": " + difference;
  }
  return difference.empty() ? "" : "function `" + a.name + "`: " + difference;
}

std::string param_difference(const Param& a, const Param& b) {
  if (a.path != b.path || !same_type(a.type, b.type) || !(a.init == b.init) ||
      a.stack_depth != b.stack_depth) {
    return "parameter `" + a.path + "` differs";
  }
  return {};
}

}  // namespace

std::string program_difference(const Program& a, const Program& b) {
  if (a.consts != b.consts) return "consts differ";
  if (a.dims != b.dims) return "dims differ";
  if (a.params.size() != b.params.size()) return "parameter counts differ";
  for (size_t i = 0; i < a.params.size(); ++i) {
    std::string difference = param_difference(a.params[i], b.params[i]);
    if (!difference.empty()) return difference;
  }
  if (a.functions.size() != b.functions.size()) return "function counts differ";
  for (size_t i = 0; i < a.functions.size(); ++i) {
    std::string difference = function_difference(a.functions[i], b.functions[i]);
    if (!difference.empty()) return difference;
  }
  return {};
}

}  // namespace presk::ir
