// A loaded session (presk.Program.session, docs/python.md): an entry compiled, its parameters
// loaded and converted to their realized types once, then run natively on many batches — what
// Program.run(realize=…) redoes on every call (compile, read the weights, convert them).
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "exec/native/executor.h"
#include "exec/native/realization.h"
#include "python/arrays.h"
#include "python/interruptible.h"
#include "python/program.h"

namespace presk::python {
namespace {

class NativeSession {
 public:
  NativeSession(const RunRequest& request, const std::string& realize, bool scalar)
      : global_(global_of(request)), scalar_(scalar) {
    run_interruptible([&] {
      prepared_ = std::make_unique<cli::PreparedRun>(prepare(request, global_, 0, cli::kNativeBytesPerElement));
      realization_.emplace(exec::native::load_realization(realize, prepared_->program));
      parameters_.emplace(exec::native::prepare_parameters(
          prepared_->program, *realization_, [&](const std::string& path) { return prepared_->parameters.view(path); }));
      return 0;
    });
  }

  // One numpy array per result, as Program.run(realize=…) returns them, bit for bit.
  py::list run(const std::vector<py::array>& arrays) const {
    const std::vector<reference::HostTensor> hosts = host_arguments(*prepared_->entry, arrays);
    const std::vector<Tensor> results = run_interruptible([&] {
      return exec::native::execute(prepared_->program, prepared_->entry->name, *realization_,
                                   reference::to_tensors(hosts), *parameters_,
                                   exec::native::ExecuteOptions{global_.threads, scalar_});
    });
    py::list out;
    for (const Tensor& tensor : results) out.append(to_numpy(tensor));
    return out;
  }

 private:
  cli::GlobalOptions global_;
  bool scalar_ = false;
  std::unique_ptr<cli::PreparedRun> prepared_;  // its entry points into its program: never moved
  std::optional<exec::native::Realization> realization_;
  std::optional<exec::native::PreparedParameters> parameters_;
};

}  // namespace

void bind_session(py::module_& module) {
  py::class_<NativeSession>(module, "NativeSession")
      .def(py::init([](std::string path, std::vector<std::string> consts, std::vector<std::string> dims,
                       std::string entry, std::string weights, uint64_t seed, int threads, std::string realize,
                       bool scalar) {
             return std::make_unique<NativeSession>(
                 RunRequest{std::move(path), std::move(consts), std::move(dims), std::move(entry), std::move(weights),
                            seed, threads},
                 realize, scalar);
           }),
           py::arg("path"), py::arg("consts"), py::arg("dims"), py::arg("entry"), py::arg("weights"), py::arg("seed"),
           py::arg("threads"), py::arg("realize"), py::arg("scalar"))
      .def("run", &NativeSession::run, py::arg("arrays"),
           "Runs the session's entry natively on one array per argument: [array…], one per result.");
}

}  // namespace presk::python
