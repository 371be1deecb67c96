// numpy arrays in and out of presk (python/arrays.h).
#include "python/arrays.h"

#include <cstring>

#include "support/diagnostics.h"

namespace presk::python {
namespace {

std::string kind_text(ir::ElemKind kind) {
  return kind == ir::ElemKind::Real ? "R (float64 or float32)" : kind == ir::ElemKind::Int ? "Z (int64)" : "B (bool)";
}

std::vector<int64_t> shape_of(const py::array& array) {
  return std::vector<int64_t>(array.shape(), array.shape() + array.ndim());
}

// E1351 unless `array`'s dtype is one `type`'s kind takes.
void check_dtype(const ir::Function& entry, size_t i, const ir::Type& type, const py::array& array) {
  const py::dtype dtype = array.dtype();
  const char kind = dtype.kind();
  bool accepted = false;
  if (type.kind == ir::ElemKind::Real) accepted = kind == 'f' && (dtype.itemsize() == 8 || dtype.itemsize() == 4);
  else if (type.kind == ir::ElemKind::Int) accepted = kind == 'i';
  else accepted = kind == 'b';
  if (accepted) return;
  const std::string hint = type.kind == ir::ElemKind::Real ? "convert it: np.asarray(x, dtype=np.float64)"
                           : type.kind == ir::ElemKind::Int ? "convert it: np.asarray(x, dtype=np.int64)"
                                                            : "convert it: np.asarray(x, dtype=bool)";
  user_error("E1351").hint(hint) << "argument " << i << " (`" << entry.argument_names.at(i) << "`) of `" << entry.name
                                 << "` is " << ir::type_to_string(type) << ", which takes " << kind_text(type.kind)
                                 << ", not a numpy array of dtype " << py::str(static_cast<const py::handle&>(dtype)).cast<std::string>();
}

reference::HostTensor host_tensor(const ir::Type& type, const py::array& array) {
  reference::HostTensor host{type, {}, {}};
  const auto count = static_cast<size_t>(type.element_count());
  if (type.kind == ir::ElemKind::Real) {
    auto values = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(array);
    host.reals.assign(values.data(), values.data() + count);
  } else if (type.kind == ir::ElemKind::Int) {
    auto values = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(array);
    host.integers.assign(values.data(), values.data() + count);
  } else {
    auto values = py::array_t<bool, py::array::c_style | py::array::forcecast>::ensure(array);
    for (size_t k = 0; k < count; ++k) host.integers.push_back(values.data()[k] ? 1 : 0);
  }
  return host;
}

}  // namespace

std::vector<reference::HostTensor> host_arguments(const ir::Function& entry, const std::vector<py::array>& arrays) {
  if (arrays.size() != entry.argument_types.size()) {
    std::string names;
    for (size_t i = 0; i < entry.argument_names.size(); ++i) {
      names += (i ? ", " : "") + entry.argument_names[i] + " : " + ir::type_to_string(entry.argument_types[i]);
    }
    user_error("E1353").hint("pass one numpy array per argument, in order: " + (names.empty() ? "none" : names))
        << "`" << entry.name << "` takes " << entry.argument_types.size() << " argument"
        << (entry.argument_types.size() == 1 ? "" : "s") << ", not " << arrays.size();
  }
  std::vector<reference::HostTensor> hosts;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const ir::Type& type = entry.argument_types[i];
    check_dtype(entry, i, type, arrays[i]);
    if (shape_of(arrays[i]) != type.shape) {
      user_error("E1352").hint("give an array of shape " + ir::shape_text(type.shape) +
                               " (bind the dims with dims={…} when the program is loaded)")
          << "argument " << i << " (`" << entry.argument_names.at(i) << "`) of `" << entry.name << "` is "
          << ir::type_to_string(type) << ", not an array of shape " << ir::shape_text(shape_of(arrays[i]));
    }
    hosts.push_back(host_tensor(type, arrays[i]));
  }
  return hosts;
}

py::array to_numpy(const Tensor& tensor) {
  const std::vector<int64_t>& shape = tensor.shape();
  const uint64_t count = tensor.element_count();
  switch (tensor.type()) {
    case ElementType::f64: {
      py::array_t<double> out(shape);
      std::memcpy(out.mutable_data(), tensor.data(), count * sizeof(double));
      return out;
    }
    case ElementType::f32:
    case ElementType::bf16: {
      py::array_t<float> out(shape);
      for (uint64_t i = 0; i < count; ++i) out.mutable_data()[i] = static_cast<float>(tensor.get(i));
      return out;
    }
    case ElementType::boolean: {
      py::array_t<bool> out(shape);
      for (uint64_t i = 0; i < count; ++i) out.mutable_data()[i] = tensor.get_integer(i) != 0;
      return out;
    }
    default: {
      py::array_t<int64_t> out(shape);
      for (uint64_t i = 0; i < count; ++i) out.mutable_data()[i] = tensor.get_integer(i);
      return out;
    }
  }
}

py::array to_numpy(const reference::MpfrArith& arith, const reference::Value<reference::MpfrArith>& value) {
  if (!value.is_real()) {
    py::array_t<int64_t> out(value.shape);
    std::copy(value.integers.begin(), value.integers.end(), out.mutable_data());
    return out;
  }
  py::array_t<double> out(value.shape);
  for (int64_t i = 0; i < value.size(); ++i) out.mutable_data()[i] = arith.to_double(value.real(i));
  return out;
}

std::vector<std::string> decimals(const reference::MpfrArith& arith,
                                  const reference::Value<reference::MpfrArith>& value, int digits) {
  std::vector<std::string> texts;
  for (int64_t i = 0; i < value.size(); ++i) {
    texts.push_back(value.is_real() ? arith.to_decimal(value.real(i), digits) : std::to_string(value.integers[i]));
  }
  return texts;
}

}  // namespace presk::python
