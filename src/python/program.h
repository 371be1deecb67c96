// The module's program functions: describe, run_exact, run_native (python/program.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace presk::python {

void bind_program(pybind11::module_& module);

}  // namespace presk::python
