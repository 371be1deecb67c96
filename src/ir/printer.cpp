// The printed form of the IR (docs/ir.md): bindings, parameters, then functions, one let a
// line. Every field is printed, so ir/parser.h reads the text back to the same Program.
// The printer never fails: IR that does not verify still prints (with `?` for a result
// that refers to nothing), so a broken pass can be dumped.
#include "ir/printer.h"

#include <sstream>

#include "ir/printed_form.h"

namespace presk::ir {
namespace {

void print_int_list(std::ostream& out, const std::vector<int64_t>& values) {
  out << '[';
  for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  out << ']';
}

bool refers(const Function& function, ValueRef value) {
  return value.kind == ValueRef::Kind::Argument ? value.index < function.argument_types.size()
                                                : value.index < function.lets.size();
}

// The op's operand-free argument printed right after its name, if it has one:
// literal "1e-5", param "ln1.g", call @Block.apply.
void print_primary(std::ostream& out, const Let& let) {
  if (let.op == Op::literal) out << ' ' << quote_string(let.attrs.literal);
  if (let.op == Op::param) out << ' ' << quote_string(let.attrs.path);
  if (is_calling(let.op)) out << " @" << name_text(let.attrs.callee);
}

// Every attribute field that is set and not printed as the primary, as key=value.
void print_attrs(std::ostream& out, const Let& let) {
  const Attrs& a = let.attrs;
  bool primary_literal = let.op == Op::literal;
  bool primary_path = let.op == Op::param;
  bool primary_callee = is_calling(let.op);
  auto list = [&](const char* key, const std::vector<int64_t>& values) {
    if (values.empty()) return;
    out << ' ' << key << '=';
    print_int_list(out, values);
  };
  list("axes", a.axes);
  list("starts", a.starts);
  list("stops", a.stops);
  if (!a.literal.empty() && !primary_literal) out << " literal=" << quote_string(a.literal);
  if (!a.spec.empty()) out << " spec=" << quote_string(a.spec);
  if (!a.callee.empty() && !primary_callee) out << " callee=" << quote_string(a.callee);
  if (!a.path.empty() && !primary_path) out << " path=" << quote_string(a.path);
  if (a.rate != 0) out << " rate=" << real_to_string(a.rate);
}

void print_adjoint_sites(std::ostream& out, const std::vector<uint32_t>& sites) {
  for (uint32_t site : sites) out << " adjoint %" << site;
}

void print_let(std::ostream& out, const Let& let, uint32_t index) {
  out << "  %" << index << " = " << op_name(let.op);
  print_primary(out, let);
  if (!let.operands.empty()) {
    out << '(';
    for (size_t i = 0; i < let.operands.size(); ++i) {
      out << (i ? ", " : "") << value_ref_text(let.operands[i]);
    }
    out << ')';
  }
  print_attrs(out, let);
  out << " : " << type_text(let.type);
  print_adjoint_sites(out, let.adjoint_of);
  out << '\n';
}

void print_signature(std::ostream& out, const Function& function) {
  out << (function.is_entry ? "entry " : "fn ") << name_text(function.name);
  if (!function.module.empty()) out << " module " << name_text(function.module);
  out << " (";
  for (size_t i = 0; i < function.argument_types.size(); ++i) {
    out << (i ? ", " : "") << '$' << i;
    if (i < function.argument_names.size() && !function.argument_names[i].empty()) {
      out << ' ' << name_text(function.argument_names[i]);
    }
    out << " : " << type_text(function.argument_types[i]);
    if (i + 1 == function.argument_types.size()) print_adjoint_sites(out, function.cotangent_adjoint_of);
  }
  out << ") -> ";
  bool one = function.results.size() == 1 && function.result_names.empty();
  if (!one) out << '(';
  bool named = function.result_names.size() == function.results.size();
  for (size_t i = 0; i < function.results.size(); ++i) {
    ValueRef result = function.results[i];
    out << (i ? ", " : "");
    if (named) out << quote_string(function.result_names[i]) << " : ";
    out << (refers(function, result) ? type_text(function.type_of(result)) : std::string("?"));
  }
  if (!one) out << ')';
  for (const auto& [key, value] : function.budget) out << " precision " << key << ' ' << quote_string(value);
  out << " {\n";
}

void print_param(std::ostream& out, const Param& param) {
  out << "param " << name_text(param.path) << " : " << type_text(param.type) << " = "
      << initializer_to_string(param.init);
  if (param.stack_depth != 0) out << " stack " << param.stack_depth;
  out << '\n';
}

}  // namespace

std::string print_function(const Function& function) {
  std::ostringstream out;
  print_signature(out, function);
  for (uint32_t i = 0; i < function.lets.size(); ++i) print_let(out, function.lets[i], i);
  out << "  return";
  for (size_t i = 0; i < function.results.size(); ++i) {
    out << (i ? ", " : " ") << value_ref_text(function.results[i]);
  }
  out << "\n}\n";
  return out.str();
}

std::string print_program(const Program& program) {
  std::ostringstream out;
  for (const auto& [name, value] : program.consts)
    out << "const " << name_text(name) << " = " << value << '\n';
  for (const auto& [name, value] : program.dims)
    out << "dim " << name_text(name) << " = " << value << '\n';
  if (!program.consts.empty() || !program.dims.empty()) out << '\n';
  for (const Param& param : program.params) print_param(out, param);
  if (!program.params.empty()) out << '\n';
  for (size_t i = 0; i < program.functions.size(); ++i) {
    out << (i ? "\n" : "") << print_function(program.functions[i]);
  }
  return out.str();
}

}  // namespace presk::ir
