// The weights loader of weights.h.
#include "exec/reference/weights.h"

#include <set>
#include <sstream>

#include "support/diagnostics.h"
#include "support/safetensors.h"

namespace presk::reference {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

// Reports what is wrong with the tensor of `param` in the file; true when it is usable.
bool check_tensor(const ir::Param& param, const SafetensorsEntry& entry, const std::string& file,
                  DiagnosticSink& sink) {
  bool usable = true;
  if (entry.shape != param.type.shape) {
    sink.report("E0512", {}, "tensor `" + param.path + "` in " + file + " has shape " +
                shape_text(entry.shape) + ", the program's parameter is " +
                ir::type_to_string(param.type),
                "export the weights of this program (a transposed or resized tensor is refused)");
    usable = false;
  }
  if (!facts(entry.type).is_float) {
    sink.report("E0513", {}, "tensor `" + param.path + "` in " + file + " has dtype " +
                entry.file_dtype + "; a parameter of R must be F64, F32 or BF16",
                "store real parameters in a float dtype");
    usable = false;
  }
  return usable;
}

}  // namespace

ParameterStore load_weights(const ir::Program& program, const std::string& path) {
  SafetensorsFile file = SafetensorsFile::open(path);
  DiagnosticSink sink;
  ParameterStore store;
  std::set<std::string> expected;
  for (const ir::Param& param : program.params) {
    expected.insert(param.path);
    const SafetensorsEntry* entry = file.find(param.path);
    if (entry == nullptr) {
      sink.report("E0510", {}, "parameter `" + param.path + "` (" + ir::type_to_string(param.type) +
                  ") has no tensor in " + path,
                  "write every parameter of the program, named by its path");
      continue;
    }
    if (!check_tensor(param, *entry, path, sink)) continue;
    std::vector<double> values(entry->element_count);
    for (uint64_t i = 0; i < entry->element_count; ++i) values[i] = file.value(*entry, i);
    store.set(param.path, std::move(values));
  }
  for (const SafetensorsEntry& entry : file.entries()) {
    if (expected.count(entry.name) == 0) {
      sink.report("E0511", {}, "tensor `" + entry.name + "` in " + path +
                  " is not a parameter of the program",
                  "remove it, or check that the file belongs to this program and these --const values");
    }
  }
  sink.throw_if_errors();
  return store;
}

namespace {

// The tensor of data argument k, checked; its first element's index in the file.
uint64_t check_input(const ir::Function& entry, size_t k, const SafetensorsEntry& tensor,
                     const std::string& path, int64_t offset) {
  const ir::Type& type = entry.argument_types[k];
  const std::string& name = entry.argument_names[k];
  bool is_float = facts(tensor.type).is_float;
  if (is_float != (type.kind == ir::ElemKind::Real)) {
    user_error("E0516").hint("R arguments are stored as F64/F32/BF16, Z and B as integers")
        << "tensor `" << name << "` in " << path << " has dtype " << tensor.file_dtype
        << ", argument `" << name << "` is " << ir::type_to_string(type);
  }
  std::vector<int64_t> sample_shape = tensor.shape;
  int64_t samples = 1;
  if (sample_shape.size() == type.shape.size() + 1) {
    samples = sample_shape.front();
    sample_shape.erase(sample_shape.begin());
  }
  if (sample_shape != type.shape || offset < 0 || offset >= samples) {
    user_error("E0515").hint("store the argument with its shape, or [samples, ...shape] and pick one with --offset")
        << "tensor `" << name << "` in " << path << " has shape " << shape_text(tensor.shape)
        << "; argument `" << name << "` is " << ir::type_to_string(type)
        << (offset > 0 ? ", sample " + std::to_string(offset) + " requested" : std::string());
  }
  return static_cast<uint64_t>(offset * type.element_count());
}

}  // namespace

std::vector<HostTensor> load_inputs(const ir::Function& entry, const std::string& path,
                                    int64_t offset) {
  SafetensorsFile file = SafetensorsFile::open(path);
  std::vector<HostTensor> inputs;
  for (size_t k = 0; k < entry.argument_types.size(); ++k) {
    const SafetensorsEntry* tensor = file.find(entry.argument_names[k]);
    if (tensor == nullptr) {
      user_error("E0514").hint("name each tensor of the data file after its argument")
          << path << " has no tensor `" << entry.argument_names[k] << "` for argument "
          << k << " of `" << entry.name << "`";
    }
    uint64_t first = check_input(entry, k, *tensor, path, offset);
    HostTensor host;
    host.type = entry.argument_types[k];
    auto count = static_cast<uint64_t>(host.type.element_count());
    for (uint64_t i = 0; i < count; ++i) {
      double value = file.value(*tensor, first + i);
      if (host.type.kind == ir::ElemKind::Real) host.reals.push_back(value);
      else host.integers.push_back(static_cast<int64_t>(value));
    }
    inputs.push_back(std::move(host));
  }
  return inputs;
}

}  // namespace presk::reference
