// Constructors of the AST nodes that have lists, and the AST printer: declarations one per
// line, indented by nesting; expressions as prefix forms, `(add (name x) (number 1))`.
#include "lang/ast.h"

#include <sstream>

namespace presk::lang {

const char* binary_op_text(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::MatMul: return "@";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
  }
  return "?";
}

CallExpr::CallExpr(Loc l, ExprPtr c, std::vector<Argument> a)
    : Expr(ExprKind::Call, l), callee(std::move(c)), arguments(std::move(a)) {
  depth = callee->depth;
  for (const Argument& argument : arguments) depth = std::max(depth, argument.value->depth);
  ++depth;
}

IndexExpr::IndexExpr(Loc l, ExprPtr o, std::vector<SliceItem> i)
    : Expr(ExprKind::Index, l), object(std::move(o)), items(std::move(i)) {
  depth = object->depth;
  for (const SliceItem& item : items) {
    if (item.start) depth = std::max(depth, item.start->depth);
    if (item.stop) depth = std::max(depth, item.stop->depth);
  }
  ++depth;
}

ListExpr::ListExpr(Loc l, std::vector<ExprPtr> e) : Expr(ExprKind::List, l), elements(std::move(e)) {
  depth = 0;
  for (const ExprPtr& element : elements) depth = std::max(depth, element->depth);
  ++depth;
}

TupleExpr::TupleExpr(Loc l, std::vector<ExprPtr> e) : Expr(ExprKind::Tuple, l), elements(std::move(e)) {
  depth = 0;
  for (const ExprPtr& element : elements) depth = std::max(depth, element->depth);
  ++depth;
}

namespace {

void print_expr(std::ostream& out, const Expr& expr);

void print_optional(std::ostream& out, const ExprPtr& expr) {
  if (expr) {
    print_expr(out, *expr);
  } else {
    out << "_";
  }
}

void print_call(std::ostream& out, const CallExpr& call) {
  out << "(call ";
  print_expr(out, *call.callee);
  for (const Argument& argument : call.arguments) {
    out << ' ';
    if (!argument.name.empty()) out << argument.name << ": ";
    print_expr(out, *argument.value);
  }
  out << ')';
}

void print_index(std::ostream& out, const IndexExpr& index) {
  out << "(index ";
  print_expr(out, *index.object);
  for (const SliceItem& item : index.items) {
    out << ' ';
    if (item.range) {
      out << "(range ";
      print_optional(out, item.start);
      out << ' ';
      print_optional(out, item.stop);
      out << ')';
    } else {
      print_expr(out, *item.start);
    }
  }
  out << ')';
}

void print_expr(std::ostream& out, const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::Number: out << expr.as<NumberExpr>().text; return;
    case ExprKind::String: out << '"' << expr.as<StringExpr>().text << '"'; return;
    case ExprKind::Name: out << expr.as<NameExpr>().name; return;
    case ExprKind::Unary:
      out << "(neg ";
      print_expr(out, *expr.as<UnaryExpr>().operand);
      out << ')';
      return;
    case ExprKind::Binary: {
      const auto& binary = expr.as<BinaryExpr>();
      out << '(' << binary_op_text(binary.op) << ' ';
      print_expr(out, *binary.lhs);
      out << ' ';
      print_expr(out, *binary.rhs);
      out << ')';
      return;
    }
    case ExprKind::Call: print_call(out, expr.as<CallExpr>()); return;
    case ExprKind::Member: {
      const auto& member = expr.as<MemberExpr>();
      out << "(. ";
      print_expr(out, *member.object);
      out << ' ' << member.name << ')';
      return;
    }
    case ExprKind::Index: print_index(out, expr.as<IndexExpr>()); return;
    case ExprKind::Tuple: {
      out << "(tuple";
      for (const ExprPtr& element : expr.as<TupleExpr>().elements) {
        out << ' ';
        print_expr(out, *element);
      }
      out << ")";
      return;
    }
    case ExprKind::List: {
      out << "[";
      const auto& list = expr.as<ListExpr>();
      for (size_t i = 0; i < list.elements.size(); ++i) {
        out << (i ? " " : "");
        print_expr(out, *list.elements[i]);
      }
      out << "]";
      return;
    }
    case ExprKind::Fold: {
      const auto& fold = expr.as<FoldExpr>();
      out << "(fold ";
      for (size_t i = 0; i < fold.path.size(); ++i) out << (i ? "." : "") << fold.path[i];
      out << ' ';
      print_expr(out, *fold.initial);
      out << ')';
      return;
    }
  }
}

std::string expr_text(const ExprPtr& expr) {
  std::ostringstream out;
  print_optional(out, expr);
  return out.str();
}

std::string type_text(const TypeExpr& type) {
  std::string text;
  if (type.kind == TypeExpr::Kind::Stack) text = "stack{" + expr_text(type.count) + "} ";
  text += type.name;
  if (type.kind == TypeExpr::Kind::Tensor && !type.shape.empty()) {
    text += '[';
    for (size_t i = 0; i < type.shape.size(); ++i) text += (i ? ", " : "") + expr_text(type.shape[i]);
    text += ']';
  }
  return text;
}

void print_function(std::ostream& out, const FnDecl& fn, const std::string& indent) {
  out << indent << (fn.is_entry ? "entry " : "fn ") << fn.name << '\n';
  for (const ArgumentDecl& argument : fn.arguments) {
    out << indent << "  arg " << argument.name << " : " << type_text(argument.type) << '\n';
  }
  out << indent << "  result : " << type_text(fn.result_type);
  for (const TypeExpr& more : fn.more_results) out << ", " << type_text(more);
  out << '\n';
  if (fn.budget) {
    out << indent << "  precision budget";
    for (const auto& [key, value] : fn.budget->terms) out << ' ' << key << '=' << value;
    out << '\n';
  }
  for (const LetStmt& let : fn.lets) {
    std::string names = let.name;
    if (!let.names.empty()) {
      names = "(";
      for (size_t i = 0; i < let.names.size(); ++i) names += (i ? ", " : "") + let.names[i];
      names += ")";
    }
    out << indent << "  let " << names << " = " << expr_text(let.value) << '\n';
  }
  out << indent << "  return " << expr_text(fn.result) << '\n';
}

}  // namespace

std::string print_ast(const ProgramAst& program) {
  std::ostringstream out;
  for (const ConstDecl& c : program.consts) out << "const " << c.name << " = " << expr_text(c.value) << '\n';
  for (const DimDecl& d : program.dims) out << "dim " << d.name << '\n';
  for (const ModuleDecl& module : program.modules) {
    out << "module " << module.name << '\n';
    for (const ParamDecl& param : module.params) {
      out << "  param " << param.name << " : " << type_text(param.type);
      if (param.init) out << " = " << expr_text(param.init);
      out << '\n';
    }
    for (const FnDecl& fn : module.functions) print_function(out, fn, "  ");
  }
  for (const FnDecl& fn : program.functions) print_function(out, fn, "");
  return out.str();
}

}  // namespace presk::lang
