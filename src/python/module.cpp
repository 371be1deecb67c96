// The extension module presk._presk (docs/python.md): the program functions
// (python/program.cpp), the in-process commands (python/commands.cpp), and presk's errors as
// Python exceptions: a user error raises presk.Error with .code ("E0201"), .message, .hint and
// the formatted text as str(); a cancelled call raises KeyboardInterrupt (python/interruptible.h).
#include <pybind11/pybind11.h>

#include "python/commands.h"
#include "python/interruptible.h"
#include "python/program.h"
#include "support/cancel.h"
#include "support/diagnostics.h"

namespace py = pybind11;

namespace {

// presk.Error, created once with the module.
PyObject* error_type = nullptr;

void raise_user_error(const presk::UserError& error) {
  const presk::Diagnostic& first = error.diagnostics().front();
  py::object instance = py::reinterpret_borrow<py::object>(error_type)(error.what());
  instance.attr("code") = first.code;
  instance.attr("message") = first.message;
  instance.attr("hint") = first.hint;
  py::list codes;
  for (const presk::Diagnostic& diagnostic : error.diagnostics()) codes.append(diagnostic.code);
  instance.attr("codes") = codes;
  PyErr_SetObject(error_type, instance.ptr());
}

}  // namespace

PYBIND11_MODULE(_presk, module) {
  module.doc() = "presk's C++ core; use the package `presk` (docs/python.md)";
  error_type = PyErr_NewExceptionWithDoc(
      "presk.Error", "A presk user error: .code is its E#### (docs/errors.md), .message what is wrong, .hint the fix.",
      PyExc_Exception, nullptr);
  module.attr("Error") = py::handle(error_type);
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const presk::UserError& error) {
      raise_user_error(error);
    } catch (const presk::Cancelled&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    } catch (const presk::InternalError& error) {
      PyErr_SetString(PyExc_RuntimeError, (std::string("internal error (a bug in presk): ") + error.what()).c_str());
    }
  });
  module.def("calls_in_flight", [] { return presk::python::calls_in_flight.load(); },
             "Calls now running with the GIL released (for tests).");
  presk::python::bind_program(module);
  presk::python::bind_session(module);
  presk::python::bind_commands(module);
}
