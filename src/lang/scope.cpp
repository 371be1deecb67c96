// Declares and resolves the program's names: consts (with --const overrides), dims (with
// --dim bindings), modules and their parameters, and every function's signature; checks
// what needs the whole program (entries' root modules, modules that contain themselves).
#include "lang/scope.h"

#include <set>

namespace presk::lang {
namespace {

// Whether an expression denotes an integer (no real literal, no real const in it).
bool is_integer_expr(const Expr& expr, const std::map<std::string, ConstInfo>& consts) {
  switch (expr.kind) {
    case ExprKind::Number: return expr.as<NumberExpr>().integer;
    case ExprKind::Name: {
      auto c = consts.find(expr.as<NameExpr>().name);
      return c == consts.end() || c->second.integer;
    }
    case ExprKind::Unary: return is_integer_expr(*expr.as<UnaryExpr>().operand, consts);
    case ExprKind::Binary:
      return is_integer_expr(*expr.as<BinaryExpr>().lhs, consts) &&
             is_integer_expr(*expr.as<BinaryExpr>().rhs, consts);
    default: return true;
  }
}

}  // namespace

const ParamInfo* ModuleInfo::find_param(const std::string& name) const {
  for (const ParamInfo& param : params) {
    if (param.decl->name == name) return &param;
  }
  return nullptr;
}

ProgramScope::ProgramScope(const ProgramAst& ast, std::shared_ptr<const SourceFile> source,
                           const FrontendOptions& options, DiagnosticSink& sink)
    : ast_(ast), source_(std::move(source)), sink_(sink) {
  declare_consts(options);
  declare_dims(options);
  declare_modules();
  declare_functions();
  check_roots();
  check_module_cycles();
}

void ProgramScope::report(const std::string& code, Loc loc, std::string message, std::string hint) {
  sink_.report(code, span(loc), std::move(message), std::move(hint));
}

bool ProgramScope::claim_name(const std::string& name, Loc loc, const char* what) {
  auto [it, inserted] = value_names_.emplace(name, loc);
  if (!inserted) report("E0303", loc, std::string(what) + " `" + name + "` is declared twice", "rename one of them");
  return inserted;
}

const ConstInfo* ProgramScope::find_const(const std::string& name) const {
  auto it = consts_.find(name);
  return it == consts_.end() ? nullptr : &it->second;
}
const DimInfo* ProgramScope::find_dim(const std::string& name) const {
  auto it = dims_.find(name);
  return it == dims_.end() ? nullptr : &it->second;
}
const ModuleInfo* ProgramScope::find_module(const std::string& name) const {
  auto it = modules_.find(name);
  return it == modules_.end() ? nullptr : &it->second;
}
const FunctionInfo* ProgramScope::find_free_function(const std::string& name) const {
  auto it = free_functions_.find(name);
  return it == free_functions_.end() ? nullptr : it->second;
}

void ProgramScope::declare_consts(const FrontendOptions& options) {
  for (const Binding& binding : options.consts) {
    bool found = false;
    for (const ConstDecl& decl : ast_.consts) found = found || decl.name == binding.name;
    if (!found) {
      sink_.report("E0305", {}, "--const " + binding.name + ": the program declares no const `" + binding.name + "`",
                   "its consts are: " + [&] {
                     std::string names;
                     for (const ConstDecl& d : ast_.consts) names += (names.empty() ? "" : ", ") + d.name;
                     return names.empty() ? std::string("(none)") : names;
                   }());
    }
  }
  for (const ConstDecl& decl : ast_.consts) {
    if (!claim_name(decl.name, decl.loc, "const")) continue;
    ConstInfo info;
    info.decl = &decl;
    const Binding* override_binding = nullptr;
    for (const Binding& b : options.consts) override_binding = b.name == decl.name ? &b : override_binding;
    if (override_binding) {
      info.valid = true;
      info.value = override_binding->value;
    } else if (is_integer_expr(*decl.value, consts_)) {
      auto value = eval_integer(*decl.value);
      info.valid = value.has_value();
      info.value = value.value_or(0);
    } else {
      auto value = eval_exact_real(*decl.value);
      info.valid = value.has_value();
      info.integer = false;
      info.real = value.value_or(ExactReal());
      // The exact value as the IR's literal: a bare literal as written, anything else folded.
      bool literal = decl.value->kind == ExprKind::Number;
      info.text = literal ? decl.value->as<NumberExpr>().text : info.real.text();
    }
    if (info.integer) {
      info.real = ExactReal(static_cast<long>(info.value));
      info.text = std::to_string(info.value);
    }
    consts_.emplace(decl.name, std::move(info));
  }
}

void ProgramScope::declare_dims(const FrontendOptions& options) {
  for (const Binding& binding : options.dims) {
    bool found = false;
    for (const DimDecl& decl : ast_.dims) found = found || decl.name == binding.name;
    if (!found) {
      std::string names;
      for (const DimDecl& d : ast_.dims) names += (names.empty() ? "" : ", ") + d.name;
      sink_.report("E0306", {}, "--dim " + binding.name + ": the program declares no dim `" + binding.name + "`",
                   "its dims are: " + (names.empty() ? std::string("(none)") : names));
    } else if (binding.value <= 0) {
      sink_.report("E0308", {}, "--dim " + binding.name + "=" + std::to_string(binding.value) + ": a dim must be positive");
    }
  }
  for (const DimDecl& decl : ast_.dims) {
    if (!claim_name(decl.name, decl.loc, "dim")) continue;
    DimInfo info;
    info.decl = &decl;
    for (const Binding& b : options.dims) {
      if (b.name == decl.name && b.value > 0) info.value = b.value;
    }
    dims_.emplace(decl.name, info);
  }
}

void ProgramScope::declare_modules() {
  for (const ModuleDecl& decl : ast_.modules) {
    if (decl.name == "R" || decl.name == "Z" || decl.name == "B") {
      report("E0303", decl.loc, "`" + decl.name + "` names an element kind and cannot name a module");
      continue;
    }
    ModuleInfo info;
    info.decl = &decl;
    if (!modules_.emplace(decl.name, std::move(info)).second) {
      report("E0303", decl.loc, "module `" + decl.name + "` is declared twice", "rename one of them");
    }
  }
  for (auto& [name, module] : modules_) {
    std::set<std::string> seen;
    for (const ParamDecl& decl : module.decl->params) {
      if (!seen.insert(decl.name).second) {
        report("E0303", decl.loc, "module `" + name + "` declares parameter `" + decl.name + "` twice");
        continue;
      }
      ParamInfo param;
      param.decl = &decl;
      resolve_param(param);
      module.params.push_back(std::move(param));
    }
  }
}

void ProgramScope::resolve_param(ParamInfo& param) {
  const ParamDecl& decl = *param.decl;
  const TypeExpr& type = decl.type;
  if (type.kind == TypeExpr::Kind::Tensor) {
    param.kind = ParamInfo::Kind::Tensor;
    auto tensor = eval_tensor_type(type);
    std::optional<ir::Initializer> init;
    if (!decl.init) {
      report("E0333", decl.loc, "tensor parameter `" + decl.name + "` has no initializer",
             "give it one: `= zeros`, `= ones`, `= normal(0.02)` or `= uniform(-0.1, 0.1)`");
    } else {
      init = eval_initializer(decl);
    }
    param.valid = tensor && init;
    if (tensor) param.type = *tensor;
    if (init) param.init = *init;
    return;
  }
  param.kind = type.kind == TypeExpr::Kind::Stack ? ParamInfo::Kind::Stack : ParamInfo::Kind::Module;
  param.module = find_module(type.name);
  if (!param.module) {
    report("E0302", type.loc, "unknown module `" + type.name + "`",
           "a parameter's type is a tensor type (R[…], Z[…], B[…]) or a declared module");
  }
  if (decl.init) {
    report("E0332", decl.init->loc, "module parameter `" + decl.name + "` takes no initializer",
           "the parameters inside module `" + type.name + "` carry their own initializers");
  }
  std::optional<int64_t> layers = 1;
  if (param.kind == ParamInfo::Kind::Stack) {
    layers = eval_extent(*type.count);
    param.layers = layers.value_or(1);
    param.layers_name = type.count->kind == ExprKind::Name ? type.count->as<NameExpr>().name : "";
  }
  param.valid = param.module && layers && !decl.init;
}

std::optional<ir::Initializer> ProgramScope::eval_initializer(const ParamDecl& param) {
  const Expr& init = *param.init;
  const char* hint = "initializers are zeros, ones, normal(σ) with σ ≥ 0, uniform(a, b) with a < b";
  std::string name;
  std::vector<const Expr*> arguments;
  if (init.kind == ExprKind::Name) {
    name = init.as<NameExpr>().name;
  } else if (init.kind == ExprKind::Call && init.as<CallExpr>().callee->kind == ExprKind::Name) {
    name = init.as<CallExpr>().callee->as<NameExpr>().name;
    for (const Argument& a : init.as<CallExpr>().arguments) arguments.push_back(a.value.get());
  }
  ir::Initializer result;
  size_t arity = 0;
  if (name == "zeros" || name == "ones") {
    result.kind = name == "zeros" ? ir::Initializer::Kind::Zeros : ir::Initializer::Kind::Ones;
  } else if (name == "normal" || name == "uniform") {
    result.kind = name == "normal" ? ir::Initializer::Kind::Normal : ir::Initializer::Kind::Uniform;
    arity = name == "normal" ? 1 : 2;
  } else {
    report("E0332", init.loc, "unknown initializer for `" + param.name + "`", hint);
    return std::nullopt;
  }
  if (arguments.size() != arity || (arity == 0 && init.kind != ExprKind::Name)) {
    report("E0332", init.loc, "`" + name + "` takes " + std::to_string(arity) + " argument(s)", hint);
    return std::nullopt;
  }
  std::vector<double> values;
  for (const Expr* argument : arguments) {
    auto value = eval_real(*argument);
    if (!value) return std::nullopt;
    values.push_back(*value);
  }
  if (arity >= 1) result.a = values[0];
  if (arity == 2) result.b = values[1];
  bool ok = result.kind == ir::Initializer::Kind::Normal ? result.a >= 0
            : result.kind == ir::Initializer::Kind::Uniform ? result.a < result.b : true;
  if (!ok) {
    report("E0332", init.loc, "invalid arguments for `" + name + "`", hint);
    return std::nullopt;
  }
  return result;
}

}  // namespace presk::lang
