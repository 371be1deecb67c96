// The run-time error of a Z let whose result leaves 64 bits (E0550 in the reference executor,
// E0670 in the native one), worded for what the let means: the zero-divisor guard that `presk
// import` writes before an integer division (a let named `…_divisor_is_zero`, which overflows
// exactly where a divisor is 0) says that a divisor was zero; any other let, an overflow.
#pragma once

#include <string>

#include "ir/ir.h"

namespace presk::ir {

struct IntegerOverflowText {
  std::string message;
  std::string hint;
};

// `operation` names the operation and its operands ("`add` of 1 and 2").
IntegerOverflowText integer_overflow_text(const Let& let, const std::string& operation);

}  // namespace presk::ir
