// The executor's inputs and outputs as tensors (executor.h: argument_value, output_tensor,
// execute).
#include <cstring>

#include "exec/native/executor.h"
#include "support/diagnostics.h"

namespace presk::exec::native {
namespace {

Value input_value(const Tensor& tensor, const ir::Type& type, RealType real_type) {
  const size_t n = tensor.element_count();
  if (type.kind == ir::ElemKind::Real && tensor.type() == element_type_of(real_type) && real_type != RealType::bf16) {
    if (real_type == RealType::f64) {  // already in the argument's type: copied as it lies
      Buffer<double> values(n);
      std::memcpy(values.data(), tensor.data(), n * 8);
      return store_f64(std::move(values), type.shape);
    }
    Buffer<float> values(n);
    std::memcpy(values.data(), tensor.data(), n * 4);
    return store_f32(std::move(values), type.shape, RealType::f32);
  }
  if (type.kind == ir::ElemKind::Real) {
    Buffer<double> values(n);
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

}  // namespace

Tensor output_tensor(const Value& value) {
  if (value.kind == Value::Kind::integer || value.kind == Value::Kind::boolean) {
    const bool ints = value.kind == Value::Kind::integer;
    Tensor out(ints ? ElementType::i64 : ElementType::boolean, value.shape);
    const std::vector<int64_t> values = load_integers(value);  // exact (never through a double)
    for (size_t i = 0; i < values.size(); ++i) out.set_integer(i, values[i]);
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

Value argument_value(const ir::Program& program, const std::string& entry, size_t index, const Tensor& tensor,
                     const Realization& realization) {
  const ir::Function* function = program.find_function(entry);
  if (!function) user_error("E0621") << "the program has no function `" << entry << "`";
  if (index >= function->argument_types.size()) {
    user_error("E0622") << "`" << entry << "` takes " << function->argument_types.size() << " inputs, got "
                        << index + 1;
  }
  const ir::Type& type = function->argument_types[index];
  if (tensor.shape() != type.shape) {
    user_error("E0622") << "input `" << function->argument_names[index] << "` has shape "
                        << format_shape(tensor.shape()) << "; `" << entry << "` expects " << ir::type_to_string(type);
  }
  return input_value(tensor, type, realization.default_type);
}

std::vector<Tensor> execute(const ir::Program& program, const std::string& entry, const Realization& realization,
                            const std::vector<Tensor>& inputs, const PreparedParameters& parameters,
                            const ExecuteOptions& options) {
  const ir::Function* function = program.find_function(entry);
  if (function && inputs.size() != function->argument_types.size()) {
    user_error("E0622") << "`" << entry << "` takes " << function->argument_types.size() << " inputs, got "
                        << inputs.size();
  }
  std::vector<Value> arguments;
  for (size_t i = 0; i < inputs.size(); ++i) arguments.push_back(argument_value(program, entry, i, inputs[i], realization));
  std::vector<Tensor> outputs;
  for (const Value& value : execute_values(program, entry, realization, std::move(arguments), parameters, options)) {
    outputs.push_back(output_tensor(value));
  }
  return outputs;
}

}  // namespace presk::exec::native
