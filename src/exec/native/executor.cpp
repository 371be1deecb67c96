// The executor's walk over a program: functions, call and fold contexts, parameters, and the
// dispatch of each let to its op family (ops_*.cpp).
#include "exec/native/executor.h"

#include <cstring>

#include "exec/native/ops.h"
#include "support/diagnostics.h"

namespace presk::exec::native {

const Value* PreparedParameters::find(const std::string& path) const {
  auto it = values_.find(path);
  return it == values_.end() ? nullptr : &it->second;
}

namespace {

Value prepare_one(const ir::Param& param, const Realization& realization, const std::vector<double>& values) {
  if (param.type.kind != ir::ElemKind::Real) {
    std::vector<int64_t> ints(values.begin(), values.end());
    return make_integers(std::move(ints), param.type.shape);
  }
  if (const QuantSpec* spec = realization.param_quant(param.path)) {
    const int64_t rank = param.type.rank();
    const int64_t over = spec->over < 0 ? spec->over + rank : spec->over;
    auto storage = std::make_shared<Storage>();
    storage->quant = std::make_shared<QuantizedWeights>(
        quantize(values, param.type.shape, spec->bits, over, spec->scheme == QuantScheme::pow2));
    return Value{Value::Kind::quantized, RealType::f32, param.type.shape, std::move(storage), 0};
  }
  // Rounded once into the parameter's type: what a realization means by "at rest".
  Value f64 = store_f64(values, param.type.shape);
  return convert_real(f64, realization.param_type(param.path));
}

}  // namespace

PreparedParameters prepare_parameters(const ir::Program& program, const Realization& realization,
                                      const ParameterSource& source) {
  PreparedParameters prepared;
  for (const ir::Param& param : program.params) {
    const std::vector<double>* values = source(param.path);
    if (!values) user_error("E0620") << "parameter `" << param.path << "` has no values";
    if (values->size() != static_cast<size_t>(param.type.element_count())) {
      user_error("E0620") << "parameter `" << param.path << "` has " << values->size()
                          << " values; its type " << ir::type_to_string(param.type) << " needs "
                          << param.type.element_count();
    }
    prepared.set(param.path, prepare_one(param, realization, *values));
  }
  return prepared;
}

namespace {

// Where a function runs: its module path and the layer indices of the stacks it is inside.
struct CallContext {
  std::string path;
  std::vector<int64_t> layers;
};

std::string join_path(const std::string& context, const std::string& path) {
  if (path.empty()) return context;
  return context.empty() ? path : context + "." + path;
}

class Runner {
 public:
  Runner(const ir::Program& program, const Realization& realization, const PreparedParameters& parameters,
         const ExecuteOptions& options)
      : program_(program), realization_(realization), parameters_(parameters), options_(options) {}

  std::vector<Value> run_function(const ir::Function& function, const std::vector<Value>& arguments,
                                  const CallContext& context) {
    std::vector<Value> lets;
    lets.reserve(function.lets.size());
    for (uint32_t i = 0; i < function.lets.size(); ++i) lets.push_back(run_let(function, i, arguments, lets, context));
    std::vector<Value> results;
    for (const ir::ValueRef& ref : function.results) results.push_back(resolve(ref, arguments, lets));
    return results;
  }

 private:
  static const Value& resolve(const ir::ValueRef& ref, const std::vector<Value>& arguments, const std::vector<Value>& lets) {
    return ref.kind == ir::ValueRef::Kind::Argument ? arguments.at(ref.index) : lets.at(ref.index);
  }

  const ir::Function& callee(const ir::Let& let) const {
    const ir::Function* function = program_.find_function(let.attrs.callee);
    internal_assert(function != nullptr);
    return *function;
  }

  Value param_value(const ir::Let& let, const CallContext& context) const {
    const std::string path = join_path(context.path, let.attrs.path);
    const Value* full = parameters_.find(path);
    if (!full) user_error("E0620") << "parameter `" << path << "` was not prepared";
    Value slice = *full;
    const size_t depth = context.layers.size();
    internal_assert(full->shape.size() >= depth);
    const std::vector<size_t> strides = strides_of(full->shape);
    for (size_t d = 0; d < depth; ++d) slice.offset += static_cast<size_t>(context.layers[d]) * strides[d];
    slice.shape.assign(full->shape.begin() + static_cast<long>(depth), full->shape.end());
    return slice;
  }

  // L of the stack at `stack_path` at nesting `depth`: the extent of axis `depth` of its params.
  int64_t stack_extent(const std::string& stack_path, size_t depth) const {
    const std::string prefix = stack_path + ".";
    for (const ir::Param& param : program_.params) {
      if (param.path.compare(0, prefix.size(), prefix) == 0 && param.stack_depth > static_cast<int>(depth)) {
        return param.type.shape[depth];
      }
    }
    internal_assert(false && "fold over a stack without parameters");
    return 0;
  }

  Value run_control(const ir::Let& let, const std::vector<const Value*>& operands, const CallContext& context) {
    if (let.op != ir::Op::call && let.op != ir::Op::fold) {
      user_error("E0623") << "the native executor does not run `" << ir::op_name(let.op) << "` (training ops) yet";
    }
    const ir::Function& function = callee(let);
    if (let.op == ir::Op::call) {
      std::vector<Value> arguments;
      for (const Value* v : operands) arguments.push_back(*v);
      CallContext inner{join_path(context.path, let.attrs.path), context.layers};
      return run_function(function, arguments, inner).at(0);
    }
    CallContext inner{join_path(context.path, let.attrs.path), context.layers};
    inner.layers.push_back(0);
    const int64_t layers = stack_extent(inner.path, context.layers.size());
    Value carried = *operands.at(0);
    for (int64_t l = 0; l < layers; ++l) {
      inner.layers.back() = l;
      carried = run_function(function, {carried}, inner).at(0);
    }
    return carried;
  }

  Value run_let(const ir::Function& function, uint32_t index, const std::vector<Value>& arguments,
                const std::vector<Value>& lets, const CallContext& context) {
    const ir::Let& let = function.lets[index];
    if (let.type.is_tuple() || let.op == ir::Op::get || let.op == ir::Op::gelu_tanh_grad || let.op == ir::Op::gelu_erf_grad)
      user_error("E0623") << "the native executor does not run `" << ir::op_name(let.op) << "` (reverse mode) yet";
    std::vector<const Value*> operands;
    for (const ir::ValueRef& ref : let.operands) operands.push_back(&resolve(ref, arguments, lets));
    const OpContext ctx{realization_, options_, realization_.site_type(function.site_name(index))};
    switch (ir::op_info(let.op).family) {
      case ir::OpFamily::Source:
        if (let.op == ir::Op::param) return param_value(let, context);
        if (let.op == ir::Op::iota) return run_iota(let);
        return run_literal(let, ctx);
      case ir::OpFamily::Elementwise: return run_elementwise(let, operands, ctx);
      case ir::OpFamily::Reduction: return run_reduction(let, *operands.at(0), ctx);
      case ir::OpFamily::Contraction: return run_contract(let, *operands.at(0), *operands.at(1), ctx);
      case ir::OpFamily::Normalization: return run_normalization(let, *operands.at(0), ctx);
      case ir::OpFamily::Gather: return run_embed(let, *operands.at(0), *operands.at(1), ctx);
      case ir::OpFamily::Layout: return run_layout(let, operands, ctx);
      case ir::OpFamily::Loss: return run_cross_entropy(let, *operands.at(0), *operands.at(1), ctx);
      case ir::OpFamily::Control: return run_control(let, operands, context);
    }
    internal_assert(false && "unknown op family");
    return {};
  }

  const ir::Program& program_;
  const Realization& realization_;
  const PreparedParameters& parameters_;
  const ExecuteOptions& options_;
};

Value input_value(const Tensor& tensor, const ir::Type& type, RealType real_type) {
  const size_t n = tensor.element_count();
  if (type.kind == ir::ElemKind::Real) {
    std::vector<double> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = tensor.get(i);
    return convert_real(store_f64(std::move(values), type.shape), real_type);
  }
  if (type.kind == ir::ElemKind::Int) {
    std::vector<int64_t> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = tensor.get_integer(i);
    return make_integers(std::move(values), type.shape);
  }
  std::vector<uint8_t> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = tensor.get(i) != 0;
  return make_booleans(std::move(values), type.shape);
}

Tensor output_tensor(const Value& value) {
  if (value.kind == Value::Kind::integer || value.kind == Value::Kind::boolean) {
    const bool ints = value.kind == Value::Kind::integer;
    Tensor out(ints ? ElementType::i64 : ElementType::boolean, value.shape);
    for (size_t i = 0; i < value.count(); ++i) out.set_integer(i, static_cast<int64_t>(element(value, i)));
    return out;
  }
  const Value real = convert_real(value, value.kind == Value::Kind::quantized ? RealType::f32 : value.type);
  Tensor out(element_type_of(real.type), real.shape);
  const size_t n = real.count();
  const Storage& s = *real.storage;
  switch (real.type) {
    case RealType::f64: std::memcpy(out.data(), s.f64.data() + real.offset, n * 8); break;
    case RealType::f32: std::memcpy(out.data(), s.f32.data() + real.offset, n * 4); break;
    case RealType::bf16: std::memcpy(out.data(), s.bf16.data() + real.offset, n * 2); break;
  }
  return out;
}

}  // namespace

std::vector<Tensor> execute(const ir::Program& program, const std::string& entry, const Realization& realization,
                            const std::vector<Tensor>& inputs, const PreparedParameters& parameters,
                            const ExecuteOptions& options) {
  const ir::Function* function = program.find_function(entry);
  if (!function) user_error("E0621") << "the program has no function `" << entry << "`";
  if (inputs.size() != function->argument_types.size()) {
    user_error("E0622") << "`" << entry << "` takes " << function->argument_types.size() << " inputs, got "
                        << inputs.size();
  }
  std::vector<Value> arguments;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Type& type = function->argument_types[i];
    if (inputs[i].shape() != type.shape) {
      user_error("E0622") << "input `" << function->argument_names[i] << "` has shape "
                          << format_shape(inputs[i].shape()) << "; `" << entry << "` expects "
                          << ir::type_to_string(type);
    }
    arguments.push_back(input_value(inputs[i], type, realization.default_type));
  }
  Runner runner(program, realization, parameters, options);
  std::vector<Value> results = runner.run_function(*function, arguments, CallContext{});
  std::vector<Tensor> outputs;
  for (const Value& value : results) outputs.push_back(output_tensor(value));
  return outputs;
}

}  // namespace presk::exec::native
