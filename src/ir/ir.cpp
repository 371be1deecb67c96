// The op table and the small queries on IR types.
#include "ir/ir.h"

#include <array>
#include <charconv>
#include <set>
#include <sstream>

namespace presk::ir {
namespace {

constexpr std::array kOps = {
#define PRESK_OP(name, arity, family) OpInfo{#name, arity, OpFamily::family},
#include "ir/ops.def"
#undef PRESK_OP
};

}  // namespace

const OpInfo& op_info(Op op) {
  auto i = static_cast<size_t>(op);
  internal_assert(i < kOps.size());
  return kOps[i];
}

std::optional<Op> op_from_name(std::string_view name) {
  for (size_t i = 0; i < kOps.size(); ++i) {
    if (name == kOps[i].name) return static_cast<Op>(i);
  }
  return std::nullopt;
}

int op_count() { return static_cast<int>(kOps.size()); }

const char* elem_kind_name(ElemKind kind) {
  switch (kind) {
    case ElemKind::Real: return "R";
    case ElemKind::Int: return "Z";
    case ElemKind::Bool: return "B";
  }
  internal_assert(false);
  return "";
}

int64_t Type::element_count() const {
  if (is_tuple()) {
    int64_t total = 0;
    for (const Type& element : elements) total += element.element_count();
    return total;
  }
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

Type tuple_type(std::vector<Type> elements) {
  Type type;
  type.elements = std::move(elements);
  return type;
}

std::string type_to_string(const Type& type) {
  std::ostringstream out;
  if (type.is_tuple()) {
    out << '(';
    for (size_t i = 0; i < type.elements.size(); ++i)
      out << (i ? ", " : "") << type_to_string(type.elements[i]);
    out << ')';
    return out.str();
  }
  out << elem_kind_name(type.kind);
  if (!type.shape.empty()) {
    out << '[';
    for (size_t i = 0; i < type.shape.size(); ++i) out << (i ? ", " : "") << type.shape[i];
    out << ']';
  }
  return out.str();
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

std::string initializer_to_string(const Initializer& init) {
  std::ostringstream out;
  switch (init.kind) {
    case Initializer::Kind::Zeros: return "zeros";
    case Initializer::Kind::Ones: return "ones";
    case Initializer::Kind::Normal: out << "normal(" << real_to_string(init.a) << ")"; break;
    case Initializer::Kind::Uniform:
      out << "uniform(" << real_to_string(init.a) << ", " << real_to_string(init.b) << ")";
      break;
  }
  return out.str();
}

std::string real_to_string(double value) {
  char text[64];
  auto [end, error] = std::to_chars(text, text + sizeof text, value);
  internal_assert(error == std::errc());
  return std::string(text, end);
}

std::string value_ref_text(ValueRef value) {
  std::string text(1, value.kind == ValueRef::Kind::Argument ? '$' : '%');
  text += std::to_string(value.index);
  return text;
}

std::string Function::site_name(uint32_t let_index) const {
  uint32_t dropouts = 0;
  uint32_t quantizes = 0;
  for (uint32_t i = 0; i < let_index && i < lets.size(); ++i) {
    dropouts += lets[i].op == Op::dropout ? 1 : 0;
    quantizes += lets[i].op == Op::quantize ? 1 : 0;
  }
  if (let_index < lets.size() && lets[let_index].op == Op::dropout) return name + "/dropout" + std::to_string(dropouts);
  if (let_index < lets.size() && lets[let_index].op == Op::quantize) return name + "/quantize" + std::to_string(quantizes);
  return name + "/%" + std::to_string(let_index - dropouts - quantizes);
}

const Type& Function::type_of(ValueRef value) const {
  if (value.kind == ValueRef::Kind::Argument) {
    internal_assert(value.index < argument_types.size());
    return argument_types[value.index];
  }
  internal_assert(value.index < lets.size());
  return lets[value.index].type;
}

const Function* Program::find_function(std::string_view name) const {
  for (const Function& f : functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const Param* Program::find_param(std::string_view path) const {
  for (const Param& p : params) {
    if (p.path == path) return &p;
  }
  return nullptr;
}

std::string join_path(const std::string& context, const std::string& path) {
  if (path.empty()) return context;
  return context.empty() ? path : context + "." + path;
}

namespace {

void walk_param_lets(const Program& program, const Function& function, const std::string& context,
                     const std::function<void(const Function&, uint32_t, const std::string&)>& visit,
                     std::set<std::pair<std::string, std::string>>& walked) {
  if (!walked.insert({function.name, context}).second) return;
  for (uint32_t i = 0; i < function.lets.size(); ++i) {
    const Let& let = function.lets[i];
    if (let.op == Op::param) {
      visit(function, i, join_path(context, let.attrs.path));
    } else if (is_calling(let.op)) {
      if (const Function* callee = program.find_function(let.attrs.callee)) {
        walk_param_lets(program, *callee, join_path(context, let.attrs.path), visit, walked);
      }
    }
  }
}

}  // namespace

void for_each_param_let(const Program& program, const Function& entry,
                        const std::function<void(const Function&, uint32_t, const std::string&)>& visit) {
  std::set<std::pair<std::string, std::string>> walked;
  walk_param_lets(program, entry, "", visit, walked);
}

}  // namespace presk::ir
