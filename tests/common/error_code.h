// The code of the user error an action throws: `EXPECT_EQ(error_code([&] { … }), "E0123")`.
#pragma once

#include <string>

#include "support/diagnostics.h"

namespace presk::testing {

// The code of the UserError `action` throws, or "none" when it throws none.
template <class Action>
std::string error_code(Action action) {
  try {
    action();
  } catch (const UserError& error) {
    return error.code();
  }
  return "none";
}

}  // namespace presk::testing
