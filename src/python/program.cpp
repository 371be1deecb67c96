// A program from Python: what its entries take and return (describe), and an entry run exactly
// on the reference (run_exact) or natively under a realization (run_native) on numpy arrays.
// The run is prepared as `presk run` prepares one (cli/pipeline.h): the bindings, --weights or
// parameters synthesized from the seed; the data arguments are the arrays given.
#include "python/program.h"

#include <pybind11/stl.h>

#include <cstring>
#include <thread>

#include "cli/pipeline.h"
#include "exec/native/executor.h"
#include "exec/native/realization.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/output_file.h"
#include "python/arrays.h"
#include "python/interruptible.h"
#include "support/diagnostics.h"
#include "support/safetensors.h"

namespace presk::python {

cli::GlobalOptions global_of(const RunRequest& request) {
  cli::GlobalOptions global;
  global.threads = request.threads > 0 ? request.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  global.seed = request.seed;
  return global;
}

cli::PreparedRun prepare(const RunRequest& request, const cli::GlobalOptions& global, uint64_t reference_bytes,
                         uint64_t native_bytes) {
  cli::RunInputOptions input;
  input.program_path = request.path;
  input.entry = request.entry;
  input.bindings = {request.consts, request.dims};
  input.weights = request.weights;
  input.memory.reference_bytes = reference_bytes;
  input.memory.native_bytes = native_bytes;
  input.memory.keeps_outputs = true;
  return cli::prepare_run(input, global);
}

namespace {

py::dict type_dict(const ir::Type& type) {
  py::dict out;
  out["kind"] = type.kind == ir::ElemKind::Real ? "R" : type.kind == ir::ElemKind::Int ? "Z" : "B";
  out["shape"] = py::tuple(py::cast(type.shape));
  out["type"] = ir::type_to_string(type);
  return out;
}

// {"entries": {name: {"arguments": [{"name", "kind", "shape", "type"}…], "results": […]}},
//  "params": [{"path", "kind", "shape", "type"}…]}
py::dict describe(const std::string& path, const std::vector<std::string>& consts, const std::vector<std::string>& dims) {
  const ir::Program program = lang::compile(lang::read_source(path), cli::frontend_options({consts, dims}, ""));
  py::dict entries;
  for (const ir::Function& function : program.functions) {
    if (!function.is_entry) continue;
    py::list arguments, results;
    for (size_t i = 0; i < function.argument_types.size(); ++i) {
      py::dict argument = type_dict(function.argument_types[i]);
      argument["name"] = function.argument_names.at(i);
      arguments.append(argument);
    }
    for (const ir::ValueRef& result : function.results) results.append(type_dict(function.type_of(result)));
    py::dict entry;
    entry["arguments"] = arguments;
    entry["results"] = results;
    entries[py::str(function.name)] = entry;
  }
  py::list params;
  for (const ir::Param& param : program.params) {
    py::dict row = type_dict(param.type);
    row["path"] = param.path;
    params.append(row);
  }
  py::dict out;
  out["entries"] = entries;
  out["params"] = params;
  return out;
}

// [(float64 or int64 array, [decimal string per element])…], one pair per result.
py::list run_exact(const RunRequest& request, const std::vector<py::array>& arrays, long bits) {
  using reference::MpfrArith;
  const cli::GlobalOptions global = global_of(request);
  cli::PreparedRun prepared =
      run_interruptible([&] { return prepare(request, global, cli::reference_bytes_per_element(bits, false), 0); });
  const std::vector<reference::HostTensor> hosts = host_arguments(*prepared.entry, arrays);
  MpfrArith arith(std::clamp(bits, reference::kMinBits, reference::kMaxBits));
  std::vector<reference::Value<MpfrArith>> results = run_interruptible([&] {
    std::vector<reference::Value<MpfrArith>> arguments;
    for (const reference::HostTensor& host : hosts) arguments.push_back(reference::to_value(arith, host));
    reference::RunOptions options;
    options.bits = bits;
    options.threads = global.threads;
    return reference::run_function<MpfrArith>(prepared.program, *prepared.entry, prepared.parameters, arguments, options);
  });
  const int digits = reference::exact_digits(arith.bits());
  py::list out;
  for (const reference::Value<MpfrArith>& value : results) {
    out.append(py::make_tuple(to_numpy(arith, value), py::cast(decimals(arith, value, digits))));
  }
  return out;
}

// One numpy array per result, in its realized type (python/arrays.h).
py::list run_native(const RunRequest& request, const std::vector<py::array>& arrays, const std::string& realize,
                    bool scalar) {
  const cli::GlobalOptions global = global_of(request);
  cli::PreparedRun prepared =
      run_interruptible([&] { return prepare(request, global, 0, cli::kNativeBytesPerElement); });
  const std::vector<reference::HostTensor> hosts = host_arguments(*prepared.entry, arrays);
  const std::vector<Tensor> results = run_interruptible([&] {
    const exec::native::Realization realization = exec::native::load_realization(realize, prepared.program);
    const exec::native::PreparedParameters parameters = exec::native::prepare_parameters(
        prepared.program, realization, [&](const std::string& path) { return prepared.parameters.view(path); });
    return exec::native::execute(prepared.program, prepared.entry->name, realization, reference::to_tensors(hosts),
                                 parameters, exec::native::ExecuteOptions{global.threads, scalar});
  });
  py::list out;
  for (const Tensor& tensor : results) out.append(to_numpy(tensor));
  return out;
}

// A tensor file from numpy arrays (float64, float32, int64 as themselves; E1351 for another dtype).
void save_tensors(const std::string& path, const std::vector<std::pair<std::string, py::array>>& arrays) {
  std::vector<Tensor> tensors;
  for (const auto& [name, array] : arrays) {
    const py::dtype dtype = array.dtype();
    const bool f64 = dtype.kind() == 'f' && dtype.itemsize() == 8, f32 = dtype.kind() == 'f' && dtype.itemsize() == 4;
    const bool i64 = dtype.kind() == 'i' && dtype.itemsize() == 8;
    if (!f64 && !f32 && !i64) {
      user_error("E1351").hint("convert it: np.asarray(x, dtype=np.float32) (or float64, int64)")
          << "tensor `" << name << "` is a numpy array of dtype " << py::str(static_cast<const py::handle&>(dtype)).cast<std::string>()
          << "; presk.save_tensors takes float64, float32 and int64";
    }
    Tensor tensor(f64 ? ElementType::f64 : f32 ? ElementType::f32 : ElementType::i64,
                  std::vector<int64_t>(array.shape(), array.shape() + array.ndim()));
    auto contiguous = py::array::ensure(array, py::array::c_style);
    std::memcpy(tensor.data(), contiguous.data(), tensor.byte_size());
    tensors.push_back(std::move(tensor));
  }
  std::vector<NamedTensor> named;
  for (size_t i = 0; i < arrays.size(); ++i) named.push_back({arrays[i].first, tensors[i]});
  write_safetensors(path, named);
}

// E1355 when `path` is a program `presk import` wrote (its first line says so): its parameters
// are declared `zeros`, and a run without its weights file would be a silent all-zero model.
void require_weights(const std::string& path) {
  const std::string text = lang::read_source(path)->text;
  if (text.rfind("# Imported from ", 0) != 0) return;
  user_error("E1355").hint("pass the weights presk import wrote: presk.Program(path, weights=\"model.safetensors\"), "
                           "or use presk.import_onnx(\"model.onnx\")")
      << path << " was imported from ONNX (its parameters are zeros until loaded) and was given no weights=";
}

RunRequest request_of(std::string path, std::vector<std::string> consts, std::vector<std::string> dims,
                      std::string entry, std::string weights, uint64_t seed, int threads) {
  return {std::move(path), std::move(consts), std::move(dims), std::move(entry), std::move(weights), seed, threads};
}

}  // namespace

void bind_program(py::module_& module) {
  module.def("save_tensors", &save_tensors, py::arg("path"), py::arg("arrays"),
             "Writes (name, array) pairs to a safetensors file, atomically.");
  module.def("require_weights", &require_weights, py::arg("path"),
             "Raises presk.Error E1355 when the program was written by presk import (it needs its weights).");
  module.def("describe", &describe, py::arg("path"), py::arg("consts"), py::arg("dims"),
             "The entries (arguments and results with their types) and the parameters of a program.");
  module.def(
      "run",
      [](std::string path, std::vector<std::string> consts, std::vector<std::string> dims, std::string entry,
         std::vector<py::array> arrays, long bits, std::string realize, bool scalar, std::string weights,
         uint64_t seed, int threads) -> py::list {
        const RunRequest request = request_of(path, consts, dims, entry, weights, seed, threads);
        if (bits >= 0 && !realize.empty()) {
          user_error("E1350").hint("run(entry, …, bits=256) runs exactly; run(entry, …, realize=\"f32\") natively")
              << "Program.run takes bits= (the exact reference) or realize= (the native executor), not both";
        }
        if (realize.empty()) return run_exact(request, arrays, bits < 0 ? 256 : bits);
        return run_native(request, arrays, realize, scalar);
      },
      py::arg("path"), py::arg("consts"), py::arg("dims"), py::arg("entry"), py::arg("arrays"), py::arg("bits"),
      py::arg("realize"), py::arg("scalar"), py::arg("weights"), py::arg("seed"), py::arg("threads"),
      "Runs an entry exactly (bits >= 0, or no realize: MPFR, [(float64 array, decimals)…]) or natively under "
      "`realize` (f64, f32, bf16 or @file.json: [array…]).");
}

}  // namespace presk::python
