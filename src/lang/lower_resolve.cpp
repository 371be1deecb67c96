// Resolution of dotted names against the parameter tree: `ln1.apply`, `attn.wq.w`,
// `p.blocks`, `blocks.apply`. A path is relative to the calling function's context (its
// module), or to the root module through an entry's parameter-tree argument.
#include <algorithm>

#include "lang/lower.h"

namespace presk::lang {
namespace {

std::string join_path(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

std::string members_of(const ModuleInfo& module) {
  std::string text;
  for (const ParamInfo& param : module.params) text += (text.empty() ? "" : ", ") + param.decl->name;
  for (const auto& [name, fn] : module.functions) text += (text.empty() ? "" : ", ") + name + "()";
  return text.empty() ? "(none)" : text;
}

Resolved from_param(const ParamInfo& param, std::string path) {
  Resolved resolved;
  resolved.kind = param.kind == ParamInfo::Kind::Tensor   ? Resolved::Kind::Tensor
                  : param.kind == ParamInfo::Kind::Module ? Resolved::Kind::Module
                                                          : Resolved::Kind::Stack;
  resolved.path = std::move(path);
  resolved.param = &param;
  resolved.module = param.module;
  return resolved;
}

}  // namespace

std::optional<Resolved> FunctionLowerer::resolve(const Expr& expr) {
  std::vector<std::pair<std::string, Loc>> segments;
  const Expr* at = &expr;
  while (at->kind == ExprKind::Member) {
    const auto& member = at->as<MemberExpr>();
    segments.emplace_back(member.name, member.name_loc);
    at = member.object.get();
  }
  if (at->kind != ExprKind::Name) {
    report("E0324", expr.loc, "only module parameters have members",
           "a member is a parameter or function of a module parameter: ln1.g, ln1.apply");
    return std::nullopt;
  }
  segments.emplace_back(at->as<NameExpr>().name, at->loc);
  std::reverse(segments.begin(), segments.end());
  return resolve_path(segments);
}

std::optional<Resolved> FunctionLowerer::resolve_path(const std::vector<std::pair<std::string, Loc>>& segments) {
  const auto& [first, first_loc] = segments.front();
  std::optional<Resolved> current;
  if (locals_.count(first)) {
    report(segments.size() > 1 ? "E0324" : "E0325", first_loc,
           "`" + first + "` is a tensor value, not a module parameter",
           segments.size() > 1 ? "tensors have no members" : "fold applies a stacked parameter");
    return std::nullopt;
  }
  if (first == info_.tree_argument && info_.root) {
    current = Resolved{Resolved::Kind::Module, "", nullptr, info_.root, nullptr, false};
  } else if (info_.module) {
    Resolved self{Resolved::Kind::Module, "", nullptr, info_.module, nullptr, false};
    current = step(self, first, first_loc);
    if (!current) return std::nullopt;
  } else {
    report("E0301", first_loc, "unknown name `" + first + "`",
           info_.decl->is_entry ? "an entry reads parameters through its first argument: p.apply(x)"
                                : "a free function has no parameters");
    return std::nullopt;
  }
  for (size_t i = 1; i < segments.size() && current; ++i) {
    current = step(*current, segments[i].first, segments[i].second);
  }
  // A module or stack of an unknown module type: reported where it was declared.
  bool is_module = current && (current->kind == Resolved::Kind::Module ||
                               current->kind == Resolved::Kind::Stack);
  if (is_module && current->module == nullptr) return std::nullopt;
  return current;
}

std::optional<Resolved> FunctionLowerer::step(const Resolved& from, const std::string& name, Loc loc) {
  if (from.kind == Resolved::Kind::Tensor || from.kind == Resolved::Kind::Function) {
    report("E0324", loc, "`" + from.path + "` is a " + (from.kind == Resolved::Kind::Tensor ? "tensor" : "function") +
                             "; it has no member `" + name + "`");
    return std::nullopt;
  }
  // A parameter of an unknown module type: that error was reported where it was declared.
  if (from.module == nullptr) return std::nullopt;
  const ModuleInfo& module = *from.module;
  if (const ParamInfo* param = module.find_param(name)) {
    if (from.kind == Resolved::Kind::Stack) {
      report("E0326", loc, "`" + from.path + "` is stacked: its parameters are read layer by layer with `fold`",
             "read `" + name + "` inside a function of module `" + module.decl->name + "` and fold it");
      return std::nullopt;
    }
    return from_param(*param, join_path(from.path, name));
  }
  auto fn = module.functions.find(name);
  if (fn != module.functions.end()) {
    const ParamInfo* stack = from.kind == Resolved::Kind::Stack ? from.param : nullptr;  // its layer count
    Resolved resolved{Resolved::Kind::Function, from.path, stack, &module, fn->second, false};
    resolved.through_stack = from.kind == Resolved::Kind::Stack;
    return resolved;
  }
  report(from.path.empty() && from.module == info_.module ? "E0301" : "E0324", loc,
         "module `" + module.decl->name + "` has no parameter or function `" + name + "`",
         "its members are: " + members_of(module));
  return std::nullopt;
}

}  // namespace presk::lang
