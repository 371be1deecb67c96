// Assembles the IR program: lowers every function (so every error is reported, reachable or
// not), refuses recursion, selects the entries, orders the reachable functions callees
// first, and lists the root module's parameter tensors by path, in declaration order.
#include "lang/lower.h"

namespace presk::lang {
namespace {

struct Lowered {
  const FunctionInfo* info = nullptr;
  ir::Function function;
  std::set<std::string> callees;
};

// Depth-first over calls; `state`: 1 on the current path, 2 done. Appends in post-order
// (callees before callers) and reports a call cycle once.
void visit(const std::string& name, std::map<std::string, Lowered>& lowered, std::map<std::string, int>& state,
           std::vector<std::string>& order, ProgramScope& scope) {
  state[name] = 1;
  Lowered& node = lowered.at(name);
  for (const std::string& callee : node.callees) {
    int& s = state[callee];
    if (s == 1) {
      scope.report("E0327", node.info->decl->loc, "`" + name + "` calls `" + callee + "`, which calls it back",
                   "functions cannot be recursive; a loop over layers is a `fold`");
    } else if (s == 0 && lowered.count(callee)) {
      visit(callee, lowered, state, order, scope);
    }
  }
  state[name] = 2;
  order.push_back(name);
}

struct ParamWalk {
  ProgramScope& scope;
  std::vector<ir::Param>& params;
  bool overflowed = false;
};

// Every tensor below `module`, with the stack axes of the stacks it is inside.
void collect_params(ParamWalk& walk, const ModuleInfo& module, const std::string& prefix, const ir::Type& stacks, int depth) {
  for (const ParamInfo& param : module.params) {
    if (walk.overflowed || !param.valid) continue;
    std::string path = prefix.empty() ? param.decl->name : prefix + "." + param.decl->name;
    if (param.kind == ParamInfo::Kind::Module) {
      collect_params(walk, *param.module, path, stacks, depth);
      continue;
    }
    if (param.kind == ParamInfo::Kind::Stack) {
      ir::Type inner = stacks;
      inner.shape.push_back(param.layers);
      inner.axes.push_back(param.layers_name);
      if (walk.scope.check_size(inner, param.decl->loc)) collect_params(walk, *param.module, path, inner, depth + 1);
      continue;
    }
    if (walk.params.size() >= kMaxParams) {
      walk.scope.report("E0341", param.decl->loc, "the parameter tree holds more than " + std::to_string(kMaxParams) + " tensors",
                        "a module used many times over nests exponentially; simplify the tree");
      walk.overflowed = true;
      return;
    }
    ir::Param result{path, stacks, param.init, depth};
    result.type.kind = param.type.kind;
    result.type.shape.insert(result.type.shape.end(), param.type.shape.begin(), param.type.shape.end());
    result.type.axes.insert(result.type.axes.end(), param.type.axes.begin(), param.type.axes.end());
    if (!walk.scope.check_size(result.type, param.decl->loc)) {
      walk.overflowed = true;
      return;
    }
    walk.params.push_back(std::move(result));
  }
}

std::vector<const FunctionInfo*> select_entries(ProgramScope& scope, const FrontendOptions& options) {
  std::vector<const FunctionInfo*> entries;
  std::string names;
  for (const FunctionInfo& info : scope.functions()) {
    if (!info.decl->is_entry) continue;
    names += (names.empty() ? "" : ", ") + info.decl->name;
    if (options.entry.empty() || options.entry == info.decl->name) entries.push_back(&info);
  }
  if (names.empty() && !scope.sink().has_errors()) {
    scope.sink().report("E0331", {}, "the program declares no entry", "declare one: entry loss(p : Model, x : R[N]) -> R = …");
  } else if (!names.empty() && entries.empty()) {
    scope.sink().report("E0330", {}, "--entry " + options.entry + ": the program has no entry `" + options.entry + "`",
                        "its entries are: " + names);
  }
  return entries;
}

}  // namespace

ir::Program lower_program(ProgramScope& scope, const FrontendOptions& options) {
  std::map<std::string, Lowered> lowered;
  for (const FunctionInfo& info : scope.functions()) {
    FunctionLowerer lowerer(scope, info, options);
    Lowered node{&info, lowerer.lower(), lowerer.callees()};
    lowered.emplace(info.ir_name, std::move(node));
  }
  std::map<std::string, int> state;
  std::vector<std::string> order;
  for (const FunctionInfo& info : scope.functions()) {
    if (state[info.ir_name] == 0) visit(info.ir_name, lowered, state, order, scope);
  }
  std::vector<const FunctionInfo*> entries = select_entries(scope, options);
  ir::Program program;
  if (scope.sink().has_errors()) return program;
  // The functions the selected entries reach, callees first.
  state.clear();
  order.clear();
  for (const FunctionInfo* entry : entries) {
    if (state[entry->ir_name] == 0) visit(entry->ir_name, lowered, state, order, scope);
  }
  for (const std::string& name : order) program.functions.push_back(std::move(lowered.at(name).function));
  for (const FunctionInfo* entry : entries) {
    if (!entry->root) continue;
    ParamWalk walk{scope, program.params};
    collect_params(walk, *entry->root, "", ir::Type{}, 0);
    break;
  }
  for (const ConstDecl& decl : scope.ast().consts) {
    const ConstInfo* c = scope.find_const(decl.name);
    if (c && c->decl == &decl && c->integer) program.consts.emplace_back(decl.name, c->value);
  }
  for (const DimDecl& decl : scope.ast().dims) {
    const DimInfo* d = scope.find_dim(decl.name);
    if (d && d->decl == &decl && d->value) program.dims.emplace_back(decl.name, *d->value);
  }
  return program;
}

}  // namespace presk::lang
