// The module's `command`: a presk command run in-process (python/commands.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace presk::python {

void bind_commands(pybind11::module_& module);

}  // namespace presk::python
