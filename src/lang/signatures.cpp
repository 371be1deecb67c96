// Function signatures (argument and result types, the parameter-tree argument of an entry)
// and the whole-program checks on them: every entry has the same root module or none, and
// no module contains itself through its parameters.
#include <set>

#include "lang/scope.h"

namespace presk::lang {

void ProgramScope::declare_functions() {
  for (auto& [name, module] : modules_) {
    for (const FnDecl& decl : module.decl->functions) {
      FunctionInfo& info = functions_.emplace_back();
      info.decl = &decl;
      info.module = &module;
      info.ir_name = name + "." + decl.name;
      if (module.functions.count(decl.name) || module.find_param(decl.name)) {
        report("E0303", decl.loc, "module `" + name + "` already has a member named `" + decl.name + "`",
               "rename the function");
        continue;
      }
      module.functions[decl.name] = &info;
    }
  }
  for (const FnDecl& decl : ast_.functions) {
    FunctionInfo& info = functions_.emplace_back();
    info.decl = &decl;
    info.ir_name = decl.name;
    if (!free_functions_.emplace(decl.name, &info).second) {
      report("E0303", decl.loc, std::string(decl.is_entry ? "entry" : "function") + " `" + decl.name +
                                    "` is declared twice", "rename one of them");
    }
  }
  for (FunctionInfo& info : functions_) resolve_signature(info);
}

bool ProgramScope::resolve_tree_argument(FunctionInfo& info, const ArgumentDecl& argument, size_t index) {
  const TypeExpr& type = argument.type;
  if (type.kind == TypeExpr::Kind::Module && index == 0 && info.decl->is_entry) {
    info.root = find_module(type.name);
    info.tree_argument = argument.name;
    if (!info.root) report("E0302", type.loc, "unknown module `" + type.name + "`", "declare `module " + type.name + " { … }`");
    return info.root != nullptr;
  }
  if (type.kind == TypeExpr::Kind::Module && !find_module(type.name)) {
    report("E0302", type.loc, "unknown type `" + type.name + "`", "a type is R[…], Z[…], B[…] or, for an entry's first argument, a module");
  } else {
    report("E0329", type.loc, "argument `" + argument.name + "` cannot have a module type",
           "only an entry's first argument is a parameter tree (a module); other arguments are tensors");
  }
  return false;
}

void ProgramScope::resolve_signature(FunctionInfo& info) {
  const FnDecl& decl = *info.decl;
  bool valid = true;
  std::set<std::string> seen;
  for (size_t i = 0; i < decl.arguments.size(); ++i) {
    const ArgumentDecl& argument = decl.arguments[i];
    if (!seen.insert(argument.name).second) {
      report("E0303", argument.loc, "argument `" + argument.name + "` is declared twice", "rename one of them");
      valid = false;
    }
    if (argument.type.kind != TypeExpr::Kind::Tensor) {
      valid = resolve_tree_argument(info, argument, i) && valid;
      continue;
    }
    auto type = eval_tensor_type(argument.type);
    valid = valid && type.has_value();
    info.argument_names.push_back(argument.name);
    info.argument_types.push_back(type.value_or(ir::Type{}));
    info.argument_locs.push_back(argument.loc);
    info.argument_valid.push_back(type.has_value());
  }
  std::vector<const TypeExpr*> results{&decl.result_type};
  for (const TypeExpr& more : decl.more_results) results.push_back(&more);
  for (const TypeExpr* result : results) {
    if (result->kind != TypeExpr::Kind::Tensor) {
      report("E0329", result->loc, "`" + decl.name + "` must return tensors", "a result type is R[…], Z[…] or B[…]");
      valid = false;
    } else if (auto type = eval_tensor_type(*result)) {
      info.result_types.push_back(*type);
    } else {
      valid = false;
    }
  }
  if (valid) info.result_type = info.result_types.front();
  if (decl.budget) {
    for (const auto& [key, value] : decl.budget->terms) {
      double number = std::strtod(value.c_str(), nullptr);
      if ((key != "rel_error" && key != "abs_error") || !(number > 0) || number > 1e300) {
        report("E0337", decl.budget->loc, "invalid budget term `" + key + " = " + value + "`",
               "a budget is rel_error = ε and/or abs_error = ε, with ε > 0");
      }
    }
    if (!decl.is_entry) report("E0337", decl.budget->loc, "only an entry takes a precision budget");
  }
  info.valid = valid;
}

void ProgramScope::check_roots() {
  const FunctionInfo* first = nullptr;
  for (const FunctionInfo& info : functions_) {
    if (!info.root) continue;
    if (!first) {
      first = &info;
    } else if (info.root != first->root) {
      report("E0329", info.decl->arguments[0].type.loc,
             "entry `" + info.decl->name + "` takes a `" + info.root->decl->name + "`, but entry `" +
                 first->decl->name + "` takes a `" + first->root->decl->name + "`",
             "every entry of a program has the same root module (or none)");
    }
  }
}

namespace {

// Depth-first search over module parameters; `state`: 1 on the path, 2 done.
void visit_module(const ModuleInfo& module, std::map<const ModuleInfo*, int>& state, ProgramScope& scope) {
  state[&module] = 1;
  for (const ParamInfo& param : module.params) {
    if (!param.module) continue;
    int& s = state[param.module];
    if (s == 1) {
      scope.report("E0328", param.decl->loc, "module `" + param.module->decl->name +
                                                 "` contains itself through parameter `" + param.decl->name + "`",
                   "a parameter tree is finite: a module cannot hold itself, directly or not");
    } else if (s == 0) {
      visit_module(*param.module, state, scope);
    }
  }
  state[&module] = 2;
}

}  // namespace

void ProgramScope::check_module_cycles() {
  std::map<const ModuleInfo*, int> state;
  for (const auto& [name, module] : modules_) {
    if (state[&module] == 0) visit_module(module, state, *this);
  }
}

}  // namespace presk::lang
