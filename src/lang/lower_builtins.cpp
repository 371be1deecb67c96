// The primitives called by name. Plain elementwise ops come straight from the op list
// (src/ir/ops.def: `exp(x)`, `max(a, b)`, `lt(a, b)`, … by their IR names, `gelu` for
// gelu_tanh); the others have a rule here: reductions, normalizations, gathers, layout,
// dropout, losses, einsum and where. docs/language.md gives each one's meaning.
#include <algorithm>
#include <functional>

#include "lang/lower.h"

namespace presk::lang {
namespace {

// The arguments of a primitive's call, split into positional and named ones.
struct Args {
  const CallExpr& call;
  std::string name;
  std::vector<const Expr*> positional;
  std::map<std::string, const Argument*> named;
  const Expr* get(const std::string& key) const {
    auto it = named.find(key);
    return it == named.end() ? nullptr : it->second->value.get();
  }
};

bool check_args(FunctionLowerer& lowerer, const Args& args, size_t min, size_t max,
                std::initializer_list<const char*> allowed) {
  if (args.positional.size() < min || args.positional.size() > max) {
    std::string count = min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
    lowerer.report("E0316", args.call.loc, "`" + args.name + "` takes " + count + " positional argument(s), given " +
                                               std::to_string(args.positional.size()),
                   "docs/language.md lists each primitive's arguments");
    return false;
  }
  for (const auto& entry : args.named) {
    const std::string& key = entry.first;
    if (std::find_if(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; }) == allowed.end()) {
      lowerer.report("E0317", entry.second->name_loc, "`" + args.name + "` has no argument named `" + key + "`");
      return false;
    }
  }
  return true;
}

std::string axes_text(const ir::Type& type) {
  std::string text;
  for (size_t i = 0; i < type.shape.size(); ++i) {
    std::string name = i < type.axes.size() ? type.axes[i] : "";
    text += (i ? ", " : "") + (name.empty() ? std::to_string(i) : name);
  }
  return "[" + text + "]";
}

// One axis: the name of the const or dim that sized it, or an index (negative from the end).
std::optional<int64_t> resolve_axis(FunctionLowerer& lowerer, const Expr& expr, const ir::Type& type) {
  int64_t rank = static_cast<int64_t>(type.shape.size());
  if (expr.kind == ExprKind::Name) {
    const std::string& name = expr.as<NameExpr>().name;
    auto count = std::count(type.axes.begin(), type.axes.end(), name);
    if (count == 1) return std::find(type.axes.begin(), type.axes.end(), name) - type.axes.begin();
    lowerer.report("E0313", expr.loc, count == 0 ? "no axis of " + ir::type_to_string(type) + " is named `" + name + "`"
                                                 : "two axes of " + ir::type_to_string(type) + " are named `" + name + "`",
                   "its axes are " + axes_text(type) + "; name one, or give its index");
    return std::nullopt;
  }
  bool negative = expr.kind == ExprKind::Unary;
  const Expr& number = negative ? *expr.as<UnaryExpr>().operand : expr;
  if (number.kind != ExprKind::Number || !number.as<NumberExpr>().integer || number.as<NumberExpr>().text.size() > 6) {
    lowerer.report("E0313", expr.loc, "an axis is a name (axis: D) or an integer index (axis: -1)");
    return std::nullopt;
  }
  int64_t index = std::stoll(number.as<NumberExpr>().text) * (negative ? -1 : 1);
  if (index < -rank || index >= rank) {
    lowerer.report("E0313", expr.loc, "axis " + std::to_string(index) + " is out of range for " + ir::type_to_string(type),
                   "its axes are " + axes_text(type));
    return std::nullopt;
  }
  return index < 0 ? index + rank : index;
}

// `axis: D`, `axis: -1` or `axis: [T, D]`, sorted.
std::optional<std::vector<int64_t>> resolve_axes(FunctionLowerer& lowerer, const Expr& expr, const ir::Type& type) {
  std::vector<const Expr*> items;
  if (expr.kind == ExprKind::List) {
    for (const ExprPtr& e : expr.as<ListExpr>().elements) items.push_back(e.get());
  } else {
    items.push_back(&expr);
  }
  std::vector<int64_t> axes;
  for (const Expr* item : items) {
    auto axis = resolve_axis(lowerer, *item, type);
    if (!axis) return std::nullopt;
    axes.push_back(*axis);
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    lowerer.report("E0313", expr.loc, "an axis is named twice");
    return std::nullopt;
  }
  return axes;
}

bool require_rank(FunctionLowerer& lowerer, const Args& args, const Value& value, size_t rank) {
  if (!value.ok || value.type.shape.size() >= rank) return value.ok;
  lowerer.report("E0338", args.call.loc, "`" + args.name + "` needs an operand of rank " + std::to_string(rank) +
                                             " or more, given " + ir::type_to_string(value.type));
  return false;
}

// sum, mean, max along axes (kept with extent 1); without `axis`, over every axis to a scalar.
Value reduce(FunctionLowerer& lowerer, const Args& args, ir::Op op) {
  if (!check_args(lowerer, args, 1, 1, {"axis"})) return Value{};
  Value x = lowerer.lower_expr(*args.positional[0]);
  if (x.ok && x.type.kind != ir::ElemKind::Int) x = lowerer.to_real(x, args.call.loc);
  if (!x.ok) return Value{};
  ir::Attrs attrs;
  const Expr* axis = args.get("axis");
  if (axis) {
    auto axes = resolve_axes(lowerer, *axis, x.type);
    if (!axes) return Value{};
    attrs.axes = *axes;
  } else {
    if (x.type.shape.empty()) return x;
    for (size_t i = 0; i < x.type.shape.size(); ++i) attrs.axes.push_back(static_cast<int64_t>(i));
  }
  if (op == ir::Op::mean) x = lowerer.to_real(x, args.call.loc);
  ir::Type type = x.type;
  for (int64_t a : attrs.axes) type.shape[a] = 1;
  Value reduced = lowerer.emit(op, type, {x}, std::move(attrs), args.call.loc);
  if (axis) return reduced;
  ir::Type scalar;
  scalar.kind = type.kind;
  return lowerer.emit(ir::Op::reshape, scalar, {reduced}, {}, args.call.loc);
}

// softmax(x, axis: V) and log_softmax: along one axis, the last by default.
Value normalize(FunctionLowerer& lowerer, const Args& args, ir::Op op) {
  if (!check_args(lowerer, args, 1, 1, {"axis"})) return Value{};
  Value x = lowerer.to_real(lowerer.lower_expr(*args.positional[0]), args.call.loc);
  if (!require_rank(lowerer, args, x, 1)) return Value{};
  int64_t axis = static_cast<int64_t>(x.type.shape.size()) - 1;
  if (const Expr* named = args.get("axis")) {
    auto resolved = resolve_axis(lowerer, *named, x.type);
    if (!resolved) return Value{};
    axis = *resolved;
  }
  ir::Attrs attrs;
  attrs.axes = {axis};
  return lowerer.emit(op, x.type, {x}, std::move(attrs), args.call.loc);
}

}  // namespace

// Defined in lower_layout.cpp: the primitives that move values or pick them.
Value lower_embed(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional);
Value lower_reshape(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional);
Value lower_transpose(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional);
Value lower_iota(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional,
                 const Expr* axis);
Value lower_concat(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional,
                   const Expr* axis);
Value lower_dropout(FunctionLowerer& lowerer, const CallExpr& call, const Expr& operand, const Expr& rate);
Value lower_cross_entropy(FunctionLowerer& lowerer, const CallExpr& call, const Expr& logits, const Expr& targets);
Value lower_einsum(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional);
Value lower_where(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional);
Value lower_causal_mask(FunctionLowerer& lowerer, const CallExpr& call, const Expr& operand);
// Defined in lower_decode.cpp.
Value lower_cache_write(FunctionLowerer& lowerer, const CallExpr& call, const std::vector<const Expr*>& positional,
                        const std::function<std::optional<int64_t>(const ir::Type&)>& axis_of);
Value lower_causal_mask_at(FunctionLowerer& lowerer, const CallExpr& call, const Expr& operand, const Expr& position);

namespace {

// cache_write(cache, rows, at, axis: A): the axis named or indexed in the cache's type.
Value cache_write(FunctionLowerer& lowerer, const Args& args) {
  auto axis = [&](const ir::Type& cache) -> std::optional<int64_t> {
    const Expr* named = args.get("axis");
    return named ? resolve_axis(lowerer, *named, cache) : std::optional<int64_t>(0);
  };
  return lower_cache_write(lowerer, args.call, args.positional, axis);
}

using Rule = std::function<Value(FunctionLowerer&, const Args&)>;

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> table = {
      {"sum", [](auto& l, const Args& a) { return reduce(l, a, ir::Op::sum); }},
      {"mean", [](auto& l, const Args& a) { return reduce(l, a, ir::Op::mean); }},
      {"softmax", [](auto& l, const Args& a) { return normalize(l, a, ir::Op::softmax); }},
      {"log_softmax", [](auto& l, const Args& a) { return normalize(l, a, ir::Op::log_softmax); }},
      {"embed", [](auto& l, const Args& a) { return check_args(l, a, 2, 2, {}) ? lower_embed(l, a.call, a.positional) : Value{}; }},
      {"reshape", [](auto& l, const Args& a) { return check_args(l, a, 2, 2, {}) ? lower_reshape(l, a.call, a.positional) : Value{}; }},
      {"iota", [](auto& l, const Args& a) { return check_args(l, a, 1, 1, {"axis"}) ? lower_iota(l, a.call, a.positional, a.get("axis")) : Value{}; }},
      {"transpose", [](auto& l, const Args& a) { return check_args(l, a, 1, 2, {}) ? lower_transpose(l, a.call, a.positional) : Value{}; }},
      {"concat", [](auto& l, const Args& a) { return check_args(l, a, 2, 64, {"axis"}) ? lower_concat(l, a.call, a.positional, a.get("axis")) : Value{}; }},
      {"causal_mask", [](auto& l, const Args& a) {
         if (!check_args(l, a, 1, 2, {})) return Value{};
         return a.positional.size() == 1 ? lower_causal_mask(l, a.call, *a.positional[0])
                                         : lower_causal_mask_at(l, a.call, *a.positional[0], *a.positional[1]);
       }},
      {"cache_write", [](auto& l, const Args& a) { return check_args(l, a, 3, 3, {"axis"}) ? cache_write(l, a) : Value{}; }},
      {"cross_entropy", [](auto& l, const Args& a) { return check_args(l, a, 2, 2, {}) ? lower_cross_entropy(l, a.call, *a.positional[0], *a.positional[1]) : Value{}; }},
      {"einsum", [](auto& l, const Args& a) { return check_args(l, a, 3, 3, {}) ? lower_einsum(l, a.call, a.positional) : Value{}; }},
      {"where", [](auto& l, const Args& a) { return check_args(l, a, 3, 3, {}) ? lower_where(l, a.call, a.positional) : Value{}; }},
      {"dropout", [](auto& l, const Args& a) {
         const Expr* rate = a.positional.size() == 2 ? a.positional[1] : a.get("rate");
         bool ok = check_args(l, a, 1 + (a.get("rate") ? 0 : 1), 2 - (a.get("rate") ? 1 : 0), {"rate"});
         return ok && rate ? lower_dropout(l, a.call, *a.positional[0], *rate) : Value{};
       }},
  };
  return table;
}

// An elementwise op of the op list called by its name (or `gelu`, the tanh form).
std::optional<ir::Op> elementwise_op(const std::string& name) {
  auto op = ir::op_from_name(name == "gelu" ? "gelu_tanh" : name);
  if (!op || ir::op_info(*op).family != ir::OpFamily::Elementwise) return std::nullopt;
  if (*op == ir::Op::where || *op == ir::Op::convert || *op == ir::Op::dropout) return std::nullopt;
  return op;
}

}  // namespace

std::optional<Value> lower_builtin(FunctionLowerer& lowerer, const std::string& name, const CallExpr& call) {
  Args args{call, name, {}, {}};
  for (const Argument& argument : call.arguments) {
    if (argument.name.empty()) {
      args.positional.push_back(argument.value.get());
    } else if (!args.named.emplace(argument.name, &argument).second) {
      lowerer.report("E0317", argument.name_loc, "argument `" + argument.name + "` is given twice");
      return Value{};
    }
  }
  if (name == "max" && args.positional.size() == 1) return reduce(lowerer, args, ir::Op::reduce_max);
  auto rule = rules().find(name);
  if (rule != rules().end()) return rule->second(lowerer, args);
  auto op = elementwise_op(name);
  if (!op) return std::nullopt;
  size_t arity = static_cast<size_t>(ir::op_info(*op).arity);
  if (!check_args(lowerer, args, arity, arity, {})) return Value{};
  // An integer literal takes the kind of the first operand that is not one (`max(i, 2)` of a
  // Z `i` is Z), as in `i + 2`; that operand is lowered first.
  std::vector<Value> operands(args.positional.size());
  size_t first = 0;
  while (first < args.positional.size() && is_integer_literal(*args.positional[first])) ++first;
  std::optional<ir::ElemKind> kind;
  if (first < args.positional.size()) {
    operands[first] = lowerer.lower_expr(*args.positional[first]);
    if (operands[first].ok) kind = operands[first].type.kind;
  }
  for (size_t i = 0; i < args.positional.size(); ++i) {
    if (i == first) continue;
    const Expr& expr = *args.positional[i];
    operands[i] = is_integer_literal(expr) ? lowerer.lower_expr(expr, kind) : lowerer.lower_expr(expr);
  }
  return lowerer.elementwise(*op, std::move(operands), call.loc);
}

}  // namespace presk::lang
