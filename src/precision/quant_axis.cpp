// The scale axis of each parameter (quant_axis.h).
#include "precision/quant_axis.h"

#include <cmath>
#include <optional>
#include <set>
#include <utility>

namespace presk::precision {
namespace {

// The axis (from the end) operand `p` of a contraction sums over, when it sums over one label.
std::optional<int64_t> contracted_axis(const std::string& spec, size_t p) {
  const size_t arrow = spec.find("->");
  if (arrow == std::string::npos) return std::nullopt;
  const std::string inputs = spec.substr(0, arrow), output = spec.substr(arrow + 2);
  std::vector<std::string> operands{""};
  for (char c : inputs) {
    if (c == ',') operands.emplace_back();
    else if (c != ' ') operands.back() += c;
  }
  if (p >= operands.size()) return std::nullopt;
  const std::string& labels = operands[p];
  std::optional<int64_t> axis;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (output.find(labels[i]) != std::string::npos) continue;
    if (axis) return std::nullopt;  // several contracted labels
    axis = static_cast<int64_t>(i) - static_cast<int64_t>(labels.size());
  }
  return axis;
}

struct Reads {
  std::set<int64_t> axes;
  std::string other;  // a reader that does not contract it, or a contraction over several labels
  std::string first;  // the first contraction, for `why`
};

// The param let `index` of `function`: how each of its readers reads it.
void add_reads(const ir::Function& function, uint32_t index, Reads& reads) {
  for (uint32_t j = 0; j < function.lets.size(); ++j) {
    const ir::Let& let = function.lets[j];
    for (size_t p = 0; p < let.operands.size(); ++p) {
      if (!(let.operands[p] == ir::ValueRef::let(index))) continue;
      const std::optional<int64_t> axis =
          let.op == ir::Op::contract ? contracted_axis(let.attrs.spec, p) : std::nullopt;
      if (axis) {
        reads.axes.insert(*axis);
        if (reads.first.empty()) reads.first = function.site_name(j);
      } else if (reads.other.empty()) {
        reads.other = std::string(ir::op_name(let.op)) + " (" + function.site_name(j) + ")";
      }
    }
  }
}

}  // namespace

std::map<std::string, QuantAxis> quant_axes(const ir::Program& program, const ir::Function& entry) {
  std::map<std::string, Reads> reads;
  ir::for_each_param_let(program, entry, [&](const ir::Function& function, uint32_t i, const std::string& path) {
    add_reads(function, i, reads[path]);
  });
  std::map<std::string, QuantAxis> axes;
  for (const ir::Param& param : program.params) {
    if (param.type.kind != ir::ElemKind::Real) continue;
    QuantAxis axis;
    const auto found = reads.find(param.path);
    if (found == reads.end()) {
      axis.why = "not read by the entry";
    } else if (!found->second.other.empty()) {
      axis.why = "read by " + found->second.other;
    } else if (found->second.axes.size() != 1) {
      axis.why = found->second.axes.empty() ? "not read by a contraction" : "contracted along two different axes";
    } else {
      axis.over = *found->second.axes.begin();
      axis.contracted = true;
      axis.why = "contracted by " + found->second.first;
    }
    axes[param.path] = axis;
  }
  return axes;
}

double bytes_at_rest(const ir::Param& param, int bits, int64_t over, int64_t group) {
  const double elements = static_cast<double>(param.type.element_count());
  if (bits >= 16) return elements * bits / 8;
  const int64_t axis = over < 0 ? over + param.type.rank() : over;
  const double scales = elements / static_cast<double>(group != 0 ? group : param.type.shape[axis]);
  return std::ceil(elements * bits / 8) + 4 * scales;
}

}  // namespace presk::precision
