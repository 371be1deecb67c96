// Builds small ir::Programs by hand for the reference interpreter's tests, so they depend
// only on ir.h (not on the front end). Every program is checked by the IR verifier.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/verifier.h"

namespace presk::testing {

inline ir::Type real_type(std::vector<int64_t> shape = {}) {
  return ir::Type{ir::ElemKind::Real, std::move(shape), {}, {}};
}
inline ir::Type int_type(std::vector<int64_t> shape = {}) {
  return ir::Type{ir::ElemKind::Int, std::move(shape), {}, {}};
}
inline ir::Type bool_type(std::vector<int64_t> shape = {}) {
  return ir::Type{ir::ElemKind::Bool, std::move(shape), {}, {}};
}

class FunctionBuilder {
 public:
  explicit FunctionBuilder(std::string name, std::string module = {}, bool is_entry = false) {
    function_.name = std::move(name);
    function_.module = std::move(module);
    function_.is_entry = is_entry;
  }

  ir::ValueRef argument(std::string name, ir::Type type) {
    function_.argument_names.push_back(std::move(name));
    function_.argument_types.push_back(std::move(type));
    return ir::ValueRef::argument(static_cast<uint32_t>(function_.argument_types.size() - 1));
  }

  ir::ValueRef let(ir::Op op, ir::Type type, std::vector<ir::ValueRef> operands,
                   ir::Attrs attrs = {}) {
    function_.lets.push_back(ir::Let{op, std::move(type), std::move(operands), std::move(attrs), {}});
    return ir::ValueRef::let(static_cast<uint32_t>(function_.lets.size() - 1));
  }

  ir::ValueRef literal(const std::string& text, ir::Type type = real_type()) {
    ir::Attrs attrs;
    attrs.literal = text;
    return let(ir::Op::literal, std::move(type), {}, attrs);
  }
  ir::ValueRef param(const std::string& path, ir::Type type) {
    ir::Attrs attrs;
    attrs.path = path;
    return let(ir::Op::param, std::move(type), {}, attrs);
  }
  ir::ValueRef axes_op(ir::Op op, ir::Type type, ir::ValueRef x, std::vector<int64_t> axes) {
    ir::Attrs attrs;
    attrs.axes = std::move(axes);
    return let(op, std::move(type), {x}, attrs);
  }
  ir::ValueRef contract(const std::string& spec, ir::Type type, ir::ValueRef x, ir::ValueRef w) {
    ir::Attrs attrs;
    attrs.spec = spec;
    return let(ir::Op::contract, std::move(type), {x, w}, attrs);
  }
  ir::ValueRef call(ir::Op op, const std::string& callee, const std::string& path, ir::Type type,
                    std::vector<ir::ValueRef> operands) {
    ir::Attrs attrs;
    attrs.callee = callee;
    attrs.path = path;
    return let(op, std::move(type), std::move(operands), attrs);
  }

  void result(ir::ValueRef value) { function_.results.push_back(value); }
  ir::Function build() { return std::move(function_); }

 private:
  ir::Function function_;
};

inline ir::Param make_param(std::string path, ir::Type type, int stack_depth = 0,
                            ir::Initializer init = {}) {
  return ir::Param{std::move(path), std::move(type), init, stack_depth};
}

// A program of the given functions (callees first) and parameters, verified.
inline ir::Program make_program(std::vector<ir::Function> functions,
                                std::vector<ir::Param> params = {}) {
  ir::Program program;
  program.functions = std::move(functions);
  program.params = std::move(params);
  ir::verify_program(program, ir::VerifyMode::UserInput);
  return program;
}

// A one-entry program `f` of one let applied to its arguments.
inline ir::Program single_op_program(ir::Op op, std::vector<ir::Type> arguments, ir::Type result,
                                     ir::Attrs attrs = {}) {
  FunctionBuilder f("f", "", true);
  std::vector<ir::ValueRef> operands;
  for (size_t i = 0; i < arguments.size(); ++i) {
    operands.push_back(f.argument("x" + std::to_string(i), arguments[i]));
  }
  f.result(f.let(op, std::move(result), operands, std::move(attrs)));
  return make_program({f.build()});
}

}  // namespace presk::testing
