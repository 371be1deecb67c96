// The typing rules of broadcasting and contraction. Broadcasting is numpy's: shapes align
// on the right, and each axis's extents are equal or 1. A contraction is an einsum spec
// over two operands ("td,dv->tv"): a label names one extent; labels absent from the output
// are summed over. `a @ b` is numpy's matmul written as such a spec.
#include "lang/lower.h"

namespace presk::lang {
namespace {

std::string axis_name(const ir::Type& type, size_t axis) {
  return axis < type.axes.size() ? type.axes[axis] : "";
}

struct Spec {
  std::string lhs, rhs, out;
};

std::optional<Spec> split_spec(const std::string& text) {
  std::string spec;
  for (char c : text) {
    if (c != ' ') spec += c;
  }
  size_t comma = spec.find(',');
  size_t arrow = spec.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || comma > arrow) return std::nullopt;
  Spec result{spec.substr(0, comma), spec.substr(comma + 1, arrow - comma - 1), spec.substr(arrow + 2)};
  for (const std::string* part : {&result.lhs, &result.rhs, &result.out}) {
    for (char c : *part) {
      if (c < 'a' || c > 'z') return std::nullopt;
    }
  }
  return result;
}

bool has_repeats(const std::string& labels) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels.find(labels[i], i + 1) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::optional<ir::Type> broadcast_types(FunctionLowerer& lowerer, const std::vector<ir::Type>& types, Loc loc) {
  size_t rank = 0;
  for (const ir::Type& type : types) rank = std::max(rank, type.shape.size());
  ir::Type result;
  result.kind = types.front().kind;
  result.shape.assign(rank, 1);
  result.axes.assign(rank, "");
  for (size_t back = 1; back <= rank; ++back) {
    int64_t& extent = result.shape[rank - back];
    for (const ir::Type& type : types) {
      if (type.shape.size() < back) continue;
      int64_t e = type.shape[type.shape.size() - back];
      if (e == 1 || e == extent) continue;
      if (extent != 1) {
        std::string list;
        for (const ir::Type& t : types) list += (list.empty() ? "" : " and ") + ir::type_to_string(t);
        lowerer.report("E0312", loc, "shapes " + list + " do not broadcast",
                       "aligned on the right, each axis's extents must be equal or 1");
        return std::nullopt;
      }
      extent = e;
    }
    for (const ir::Type& type : types) {
      size_t axis = type.shape.size() - back;
      if (type.shape.size() >= back && type.shape[axis] == extent && !axis_name(type, axis).empty()) {
        result.axes[rank - back] = axis_name(type, axis);
        break;
      }
    }
  }
  return result;
}

std::optional<ir::Type> contract_type(FunctionLowerer& lowerer, const std::string& text, const ir::Type& a,
                                      const ir::Type& b, Loc loc) {
  auto spec = split_spec(text);
  const char* hint = "a spec is `lhs,rhs->out` over labels a–z, e.g. \"td,dv->tv\"";
  if (!spec) {
    lowerer.report("E0315", loc, "malformed einsum spec \"" + text + "\"", hint);
    return std::nullopt;
  }
  if (spec->lhs.size() != a.shape.size() || spec->rhs.size() != b.shape.size()) {
    lowerer.report("E0315", loc, "einsum spec \"" + text + "\" does not match the ranks of " +
                                     ir::type_to_string(a) + " and " + ir::type_to_string(b), hint);
    return std::nullopt;
  }
  if (has_repeats(spec->lhs) || has_repeats(spec->rhs) || has_repeats(spec->out)) {
    lowerer.report("E0315", loc, "einsum spec \"" + text + "\" repeats a label within one operand", hint);
    return std::nullopt;
  }
  ir::Type result;
  result.kind = ir::ElemKind::Real;
  for (char label : spec->out) {
    size_t i = spec->lhs.find(label), j = spec->rhs.find(label);
    if (i == std::string::npos && j == std::string::npos) {
      lowerer.report("E0315", loc, std::string("output label `") + label + "` appears in no operand", hint);
      return std::nullopt;
    }
    result.shape.push_back(i != std::string::npos ? a.shape[i] : b.shape[j]);
    result.axes.push_back(i != std::string::npos ? axis_name(a, i) : axis_name(b, j));
  }
  for (size_t i = 0; i < spec->lhs.size(); ++i) {
    size_t j = spec->rhs.find(spec->lhs[i]);
    if (j != std::string::npos && a.shape[i] != b.shape[j]) {
      lowerer.report("E0314", loc, std::string("contracted label `") + spec->lhs[i] + "` has extent " +
                                       std::to_string(a.shape[i]) + " in " + ir::type_to_string(a) + " but " +
                                       std::to_string(b.shape[j]) + " in " + ir::type_to_string(b),
                     "the axes a contraction pairs must have equal extents");
      return std::nullopt;
    }
  }
  return result;
}

// numpy matmul: a[…, m, k] @ b[k, n] or b[…, k, n] with the same leading axes; a vector
// operand contributes no m (or no n).
std::optional<std::string> matmul_spec(FunctionLowerer& lowerer, const ir::Type& a, const ir::Type& b, Loc loc) {
  size_t ra = a.shape.size(), rb = b.shape.size();
  if (ra == 0 || rb == 0 || ra > 20 || rb > 20) {
    lowerer.report("E0314", loc, "`@` needs operands of rank 1 to 20, given " + ir::type_to_string(a) + " and " +
                                     ir::type_to_string(b), "scale by a scalar with `*`");
    return std::nullopt;
  }
  size_t batch = ra >= 2 ? ra - 2 : 0;
  if (rb > 2 && (ra != rb || !std::equal(a.shape.begin(), a.shape.begin() + batch, b.shape.begin()))) {
    lowerer.report("E0314", loc, "`@` of " + ir::type_to_string(a) + " and " + ir::type_to_string(b) +
                                     ": leading axes differ",
                   "the right operand is a matrix, or has the same leading axes as the left one");
    return std::nullopt;
  }
  std::string leading;
  for (size_t i = 0; i < std::max(batch, rb > 2 ? rb - 2 : 0); ++i) leading += static_cast<char>('a' + i);
  std::string lhs = (ra >= 2 ? leading + "x" : "") + "y";
  std::string rhs = (rb > 2 ? leading : "") + "y" + (rb >= 2 ? "z" : "");
  std::string out = (ra >= 2 ? leading + "x" : (rb > 2 ? leading : "")) + (rb >= 2 ? "z" : "");
  if (ra < 2) lhs = "y";
  return lhs + "," + rhs + "->" + out;
}

}  // namespace presk::lang
