// Lowering of a function body: arguments, lets, names, operators, calls of module functions,
// parameter reads, slices and folds. Primitives called by name are in lower_builtins.cpp.
#include "lang/lower.h"

#include <charconv>
#include <utility>

namespace presk::lang {
namespace {

bool same_type(const ir::Type& a, const ir::Type& b) { return a.kind == b.kind && a.shape == b.shape; }

std::string type_string(const ir::Type& type) { return ir::type_to_string(type); }

}  // namespace

FunctionLowerer::FunctionLowerer(ProgramScope& scope, const FunctionInfo& info, const FrontendOptions& options)
    : scope_(scope), info_(info), options_(options) {}

void FunctionLowerer::report(const std::string& code, Loc loc, std::string message, std::string hint) {
  scope_.report(code, loc, std::move(message), std::move(hint));
}

ir::Function FunctionLowerer::lower() {
  const FnDecl& decl = *info_.decl;
  function_.name = info_.ir_name;
  function_.module = info_.module ? info_.module->decl->name : info_.root ? info_.root->decl->name : "";
  function_.is_entry = decl.is_entry;
  if (decl.budget) function_.budget = decl.budget->terms;
  function_.argument_names = info_.argument_names;
  function_.argument_types = info_.argument_types;
  function_.span = scope_.span(decl.loc);
  for (size_t i = 0; i < info_.argument_names.size(); ++i) {
    // An argument whose type did not evaluate (reported there) is not ok: what reads it reports nothing more.
    const bool ok = i >= info_.argument_valid.size() || info_.argument_valid[i];
    locals_[info_.argument_names[i]] = Value{ir::ValueRef::argument(static_cast<uint32_t>(i)), info_.argument_types[i], ok};
  }
  for (const LetStmt& let : decl.lets) {
    if (let.name == info_.tree_argument) {
      report("E0303", let.loc, "`" + let.name + "` already names the parameter tree", "choose another name");
    }
    if (!let.names.empty()) {
      allow_tuple_ = true;
      bind_results(let, lower_expr(*let.value));
      continue;
    }
    locals_[let.name] = lower_expr(*let.value);
  }
  if (!info_.valid) return std::move(function_);
  if (info_.result_types.size() > 1 || decl.result->kind == ExprKind::Tuple) {
    lower_results(decl);
    return std::move(function_);
  }
  Value result = lower_expr(*decl.result);
  if (result.ok && !same_type(result.type, info_.result_type)) {
    report("E0322", decl.result->loc,
           "`" + decl.name + "` returns " + type_string(result.type) + ", but its signature says " +
               type_string(info_.result_type),
           "make the body's value match the declared result type");
  }
  if (result.ok) function_.results.push_back(result.ref);
  return std::move(function_);
}

Value FunctionLowerer::emit(ir::Op op, ir::Type type, const std::vector<Value>& operands, ir::Attrs attrs, Loc loc) {
  for (const Value& operand : operands) {
    if (!operand.ok) return Value{};
  }
  if (type.axes.size() != type.shape.size()) type.axes.assign(type.shape.size(), "");
  if (!scope_.check_size(type, loc)) return Value{};
  ir::Let let{op, type, {}, std::move(attrs), scope_.span(loc)};
  for (const Value& operand : operands) let.operands.push_back(operand.ref);
  function_.lets.push_back(std::move(let));
  return Value{ir::ValueRef::let(static_cast<uint32_t>(function_.lets.size() - 1)), std::move(type), true};
}

Value FunctionLowerer::convert(Value value, ir::ElemKind kind, Loc loc) {
  if (!value.ok || value.type.kind == kind) return value;
  if (kind != ir::ElemKind::Real) {
    report("E0311", loc, std::string("expected ") + ir::elem_kind_name(kind) + " values, found " + type_string(value.type),
           "only Z and B values convert, and only to R");
    return Value{};
  }
  ir::Type type = value.type;
  type.kind = kind;
  return emit(ir::Op::convert, std::move(type), {value}, {}, loc);
}

Value FunctionLowerer::literal(std::string text, ir::ElemKind kind, Loc loc) {
  ir::Attrs attrs;
  attrs.literal = std::move(text);
  ir::Type scalar;
  scalar.kind = kind;
  return emit(ir::Op::literal, scalar, {}, std::move(attrs), loc);
}

Value FunctionLowerer::lower_expr(const Expr& expr, std::optional<ir::ElemKind> literal_kind) {
  const bool tuple_allowed = std::exchange(allow_tuple_, false);
  Value value = lower_value(expr, literal_kind);
  if (value.ok && value.type.is_tuple() && !tuple_allowed) {
    report("E1503", expr.loc, "this gives " + std::to_string(value.type.elements.size()) + " results, not one value",
           "name them: let (a, b) = …, or return them as the function's results");
    return Value{};
  }
  return value;
}

Value FunctionLowerer::lower_value(const Expr& expr, std::optional<ir::ElemKind> literal_kind) {
  switch (expr.kind) {
    case ExprKind::Number: return lower_number(expr.as<NumberExpr>(), literal_kind);
    case ExprKind::Name: return lower_name(expr.as<NameExpr>());
    case ExprKind::Unary: return lower_unary(expr.as<UnaryExpr>(), literal_kind);
    case ExprKind::Binary: return lower_binary(expr.as<BinaryExpr>());
    case ExprKind::Call: return lower_call(expr.as<CallExpr>());
    case ExprKind::Member: return lower_member(expr);
    case ExprKind::Index: return lower_index(expr.as<IndexExpr>());
    case ExprKind::Fold: return lower_fold(expr.as<FoldExpr>());
    case ExprKind::Tuple:
      report("E1502", expr.loc, "a tuple (a, b, …) is only a function's results or a fold's state",
             "return it as the body's last expression (-> (A, B)), or fold over (x, state…)");
      return Value{};
    case ExprKind::String:
    case ExprKind::List:
      report("E0336", expr.loc, expr.kind == ExprKind::String ? "a string is not a value" : "a list is not a value",
             "strings are einsum specs and lists are shapes or permutations, given to a primitive");
      return Value{};
  }
  return Value{};
}

// An integer literal takes the element kind of what it meets (Z with Z); any other is R.
// A Z literal must fit in 64 bits (E0343): Z arithmetic is exact, never saturated or wrapped.
Value FunctionLowerer::lower_number(const NumberExpr& number, std::optional<ir::ElemKind> kind) {
  bool integer = number.integer && kind == ir::ElemKind::Int;
  int64_t value = 0;
  const char* end = number.text.data() + number.text.size();
  auto [stop, error] = std::from_chars(number.text.data(), end, value);
  if (integer && (error != std::errc() || stop != end)) {
    report("E0343", number.loc, "the Z literal `" + number.text + "` does not fit in 64 bits",
           "Z values lie within ±9223372036854775807; for a real, convert the other operand to R");
    return Value{};
  }
  return literal(number.text, integer ? ir::ElemKind::Int : ir::ElemKind::Real, number.loc);
}

Value FunctionLowerer::lower_name(const NameExpr& name) {
  auto local = locals_.find(name.name);
  if (local != locals_.end()) return local->second;
  if (info_.module && (info_.module->find_param(name.name) || info_.module->functions.count(name.name))) {
    auto resolved = resolve(name);
    return resolved ? read_param(*resolved, name.loc) : Value{};
  }
  if (name.name == info_.tree_argument) {
    report("E0336", name.loc, "`" + name.name + "` is the parameter tree, not a value",
           "read a parameter (" + name.name + ".w) or call a function (" + name.name + ".apply(x))");
    return Value{};
  }
  if (const ConstInfo* c = scope_.find_const(name.name)) {
    return c->valid ? literal(c->text, ir::ElemKind::Real, name.loc) : Value{};
  }
  if (scope_.find_dim(name.name)) {
    auto value = scope_.eval_integer(name);
    return value ? literal(std::to_string(*value), ir::ElemKind::Real, name.loc) : Value{};
  }
  report("E0301", name.loc, "unknown name `" + name.name + "`",
         "a name is a let, an argument, a parameter of the module, a const or a dim");
  return Value{};
}

Value FunctionLowerer::lower_unary(const UnaryExpr& unary, std::optional<ir::ElemKind> literal_kind) {
  Value operand = lower_expr(*unary.operand, literal_kind);
  if (operand.ok && operand.type.kind == ir::ElemKind::Bool) operand = to_real(operand, unary.loc);
  return emit(ir::Op::neg, operand.type, {operand}, {}, unary.loc);
}

Value FunctionLowerer::lower_member(const Expr& expr) {
  auto resolved = resolve(expr);
  return resolved ? read_param(*resolved, expr.loc) : Value{};
}

Value FunctionLowerer::read_param(const Resolved& resolved, Loc loc) {
  if (resolved.kind != Resolved::Kind::Tensor) {
    const char* what = resolved.kind == Resolved::Kind::Function ? "a function" : "a module parameter";
    report("E0336", loc, std::string("this is ") + what + ", not a value",
           resolved.kind == Resolved::Kind::Function ? "call it: f(x)" : "read one of its tensors or call one of its functions");
    return Value{};
  }
  if (!resolved.param->valid) return Value{};
  ir::Attrs attrs;
  attrs.path = resolved.path;
  return emit(ir::Op::param, resolved.param->type, {}, std::move(attrs), loc);
}

Value FunctionLowerer::lower_call(const CallExpr& call) {
  const Expr& callee = *call.callee;
  if (callee.kind == ExprKind::Name) {
    const std::string& name = callee.as<NameExpr>().name;
    if (info_.module) {
      auto it = info_.module->functions.find(name);
      if (it != info_.module->functions.end()) return call_function(*it->second, "", call);
    }
    if (const FunctionInfo* free = scope_.find_free_function(name)) {
      if (free->decl->is_entry) {
        report("E0324", callee.loc, "`" + name + "` is an entry; entries are not called", "move its body into a fn");
        return Value{};
      }
      return call_function(*free, "", call);
    }
    if (auto value = lower_builtin(*this, name, call)) return *value;
    if (locals_.count(name) || scope_.find_const(name) || scope_.find_dim(name)) {
      report("E0336", callee.loc, "`" + name + "` is a value, not a function");
    } else {
      report("E0301", callee.loc, "unknown function `" + name + "`",
             "docs/language.md lists the primitives; module functions are called as field.fn(x)");
    }
    return Value{};
  }
  auto resolved = resolve(callee);
  if (!resolved) return Value{};
  if (resolved->kind != Resolved::Kind::Function) {
    report("E0336", callee.loc, "this is not a function", "call a function of a module parameter: ln1.apply(x)");
    return Value{};
  }
  if (resolved->through_stack) {
    report("E0326", callee.loc, "a function of a stacked parameter is applied with `fold`",
           "write `fold " + resolved->path + " over x`");
    return Value{};
  }
  return call_function(*resolved->function, resolved->path, call);
}

Value FunctionLowerer::call_function(const FunctionInfo& callee, const std::string& path, const CallExpr& call) {
  std::vector<Value> operands;
  bool named = false;
  for (const Argument& argument : call.arguments) {
    named = named || !argument.name.empty();
    operands.push_back(lower_expr(*argument.value));
  }
  if (named) {
    report("E0317", call.loc, "`" + callee.ir_name + "` takes positional arguments only");
    return Value{};
  }
  if (operands.size() != callee.argument_types.size()) {
    report("E0316", call.loc, "`" + callee.ir_name + "` takes " + std::to_string(callee.argument_types.size()) +
                                  " argument(s), given " + std::to_string(operands.size()));
    return Value{};
  }
  if (!callee.valid) return Value{};
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].ok && !same_type(operands[i].type, callee.argument_types[i])) {
      report("E0323", call.arguments[i].value->loc,
             "argument `" + callee.argument_names[i] + "` of `" + callee.ir_name + "` is " +
                 type_string(callee.argument_types[i]) + ", given " + type_string(operands[i].type),
             "pass a value of exactly the declared type");
      return Value{};
    }
  }
  callees_.insert(callee.ir_name);
  ir::Attrs attrs;
  attrs.callee = callee.ir_name;
  attrs.path = path;
  if (callee.result_types.size() > 1) {
    return emit(ir::Op::call, ir::tuple_type(callee.result_types), operands, std::move(attrs), call.loc);
  }
  return emit(ir::Op::call, callee.result_type, operands, std::move(attrs), call.loc);
}

Value FunctionLowerer::lower_fold(const FoldExpr& fold) {
  const bool scan = fold.initial->kind == ExprKind::Tuple;
  Value initial = scan ? Value{} : lower_expr(*fold.initial);
  std::vector<std::pair<std::string, Loc>> segments;
  for (const std::string& name : fold.path) segments.emplace_back(name, fold.path_loc);
  auto resolved = resolve_path(segments);
  if (!resolved) return Value{};
  const FunctionInfo* callee = resolved->function;
  if (resolved->kind == Resolved::Kind::Stack) {
    auto it = resolved->module->functions.find("apply");
    callee = it == resolved->module->functions.end() ? nullptr : it->second;
    if (!callee) {
      report("E0325", fold.path_loc, "module `" + resolved->module->decl->name + "` has no function `apply` to fold",
             "name the function: fold " + resolved->path + ".fn over x");
      return Value{};
    }
  } else if (resolved->kind != Resolved::Kind::Function || !resolved->through_stack) {
    report("E0325", fold.path_loc, "`fold` applies a stacked parameter (declared `stack{N} Module`)",
           "declare the parameter as `param blocks : stack{L} Block`");
    return Value{};
  }
  if (scan) {
    const int64_t layers = resolved->param ? resolved->param->layers : -1;
    return callee->valid ? lower_scan(fold, *callee, resolved->path, layers) : Value{};
  }
  if (!callee->valid || !initial.ok) return Value{};
  if (callee->argument_types.size() != 1 || !same_type(callee->argument_types[0], callee->result_type)) {
    report("E0325", fold.path_loc, "the folded function `" + callee->ir_name + "` must take one argument and return its type",
           "fold feeds each layer's result to the next: fn apply(x : R[T, D]) -> R[T, D]");
    return Value{};
  }
  if (!same_type(initial.type, callee->result_type)) {
    report("E0325", fold.initial->loc, "`" + callee->ir_name + "` maps " + type_string(callee->result_type) +
                                           ", but fold starts from " + type_string(initial.type));
    return Value{};
  }
  callees_.insert(callee->ir_name);
  ir::Attrs attrs;
  attrs.callee = callee->ir_name;
  attrs.path = resolved->path;
  return emit(ir::Op::fold, callee->result_type, {initial}, std::move(attrs), fold.loc);
}

}  // namespace presk::lang
