// The streamed parameter cotangents of cotangent_stream.h.
#include "ir/cotangent_stream.h"

#include <algorithm>

namespace presk::ir {

std::vector<uint8_t> parameter_results(const Program& program, const Function& entry) {
  std::vector<uint8_t> finals(entry.results.size(), 0);
  for (size_t r = 0; r < entry.results.size() && r < entry.result_names.size(); ++r) {
    const std::string& name = entry.result_names[r];
    finals[r] = std::any_of(program.params.begin(), program.params.end(), [&](const Param& param) { return param.path == name; });
  }
  return finals;
}

CotangentStream cotangent_stream(const Function& function, const std::vector<uint8_t>& finals) {
  const size_t n = function.lets.size();
  CotangentStream stream{std::vector<uint8_t>(n, 0), std::vector<std::vector<uint8_t>>(n), false};
  std::vector<uint32_t> reads(n, 0), returned(n, 0);
  for (const Let& let : function.lets) {
    for (const ValueRef& ref : let.operands) {
      if (ref.kind == ValueRef::Kind::Let) ++reads[ref.index];
    }
  }
  for (const ValueRef& ref : function.results) {
    if (ref.kind == ValueRef::Kind::Let) ++returned[ref.index];
  }
  for (size_t r = 0; r < function.results.size() && r < finals.size(); ++r) {
    const ValueRef& ref = function.results[r];
    if (!finals[r] || ref.kind != ValueRef::Kind::Let || reads[ref.index] != 0 || returned[ref.index] != 1) continue;
    const Let& let = function.lets[ref.index];
    if (let.op != Op::get) {
      if (let.type.kind == ElemKind::Real && !let.type.is_tuple()) stream.emits[ref.index] = 1, stream.any = true;
      continue;
    }
    const ValueRef& tuple = let.operands.at(0);
    const auto k = static_cast<size_t>(let.attrs.axes.at(0));
    if (tuple.kind != ValueRef::Kind::Let || !let.adjoint_of.empty()) continue;
    const Let& caller = function.lets[tuple.index];
    if ((caller.op != Op::call && caller.op != Op::fold_vjp) || (caller.op == Op::fold_vjp && k == 0)) continue;
    const auto gets = std::count_if(function.lets.begin(), function.lets.end(), [&](const Let& other) {
      return other.op == Op::get && other.operands.at(0) == tuple && static_cast<size_t>(other.attrs.axes.at(0)) == k;
    });
    if (gets != 1) continue;
    std::vector<uint8_t>& callee = stream.callee_finals[tuple.index];
    callee.resize(caller.type.elements.size(), 0);
    callee.at(k) = 1;
    stream.any = true;
  }
  return stream;
}

}  // namespace presk::ir
