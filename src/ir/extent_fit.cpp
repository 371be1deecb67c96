// The binding a stored shape would need (extent_fit.h).
#include "ir/extent_fit.h"

#include <algorithm>

namespace presk::ir {
namespace {

bool binds(const std::vector<std::pair<std::string, int64_t>>& bindings, const std::string& name) {
  return std::any_of(bindings.begin(), bindings.end(), [&](const auto& binding) { return binding.first == name; });
}

}  // namespace

std::string extent_fit_note(const Type& wanted, const std::vector<int64_t>& found, const Program* program) {
  if (found.size() != wanted.shape.size() || wanted.axes.size() != wanted.shape.size()) return "";
  std::string note;
  for (size_t axis = 0; axis < found.size(); ++axis) {
    const std::string& name = wanted.axes[axis];
    if (name.empty() || found[axis] == wanted.shape[axis]) continue;
    std::string kind = "the binding";
    std::string option;
    if (program != nullptr && binds(program->consts, name)) {
      kind = "const";
      option = ": `--const " + name + "=" + std::to_string(found[axis]) + "`";
    } else if (program != nullptr && binds(program->dims, name)) {
      kind = "dim";
      option = ": `--dim " + name + "=" + std::to_string(found[axis]) + "`";
    }
    note += note.empty() ? "" : "; ";
    note += "the file fits " + kind + " " + name + " = " + std::to_string(found[axis]) + " (the program has " + name +
            " = " + std::to_string(wanted.shape[axis]) + option + ")";
  }
  return note;
}

}  // namespace presk::ir
