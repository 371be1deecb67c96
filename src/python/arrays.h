// numpy arrays in and out of presk: an entry's arguments checked against its types (dtype,
// shape) and made host tensors; native results and exact values made numpy arrays.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "exec/reference/arith_mpfr.h"
#include "exec/reference/value.h"
#include "ir/ir.h"
#include "support/tensor.h"

namespace presk::python {

namespace py = pybind11;

// One array per argument of `entry`, in order: R takes float64 or float32 (widened exactly),
// Z takes a signed integer dtype, B takes bool. Another dtype is E1351, a shape other than the
// argument's E1352, another count of arrays E1353.
std::vector<reference::HostTensor> host_arguments(const ir::Function& entry, const std::vector<py::array>& arrays);

// A native result: f64 and f32 as themselves, bf16 as float32 (exactly), i64 as int64, bool as bool.
py::array to_numpy(const Tensor& tensor);

// An exact result: each element rounded to nearest float64 (R) or as int64 (Z, B).
py::array to_numpy(const reference::MpfrArith& arith, const reference::Value<reference::MpfrArith>& value);

// Every element of an exact result as a decimal string of `digits` significant digits (an integer exactly).
std::vector<std::string> decimals(const reference::MpfrArith& arith,
                                  const reference::Value<reference::MpfrArith>& value, int digits);

}  // namespace presk::python
