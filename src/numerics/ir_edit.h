// A function's lets with new ones inserted before old ones, and old lets' operands redirected:
// the edit the quantize pass (quantize_insert.cpp) and the attention's forms (attention_forms.h)
// make to the IR.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace presk::numerics {

// A function's lets with new ones inserted: new let k is referred to as index base + k until
// `finish` renumbers every reference.
struct Edit {
  const ir::Function& f;
  uint32_t base;
  std::vector<ir::Let> added;
  std::map<uint32_t, std::vector<uint32_t>> before;  // old let index → added lets, in order
  std::map<uint32_t, ir::ValueRef> operand_of;          // (let · 4 + operand) → its new operand

  ir::ValueRef add(uint32_t position, ir::Let let) {
    added.push_back(std::move(let));
    const uint32_t k = static_cast<uint32_t>(added.size() - 1);
    before[position].push_back(k);
    return ir::ValueRef::let(base + k);
  }

  void finish(ir::Function& out) const {
    std::vector<uint32_t> old_to_new(f.lets.size()), added_to_new(added.size());
    std::vector<std::pair<bool, uint32_t>> order;  // (added?, index)
    for (uint32_t i = 0; i < f.lets.size(); ++i) {
      if (auto it = before.find(i); it != before.end()) {
        for (uint32_t k : it->second) order.push_back({true, k});
      }
      order.push_back({false, i});
    }
    for (uint32_t n = 0; n < order.size(); ++n) (order[n].first ? added_to_new : old_to_new)[order[n].second] = n;
    auto renumber = [&](ir::ValueRef v) {
      if (v.kind != ir::ValueRef::Kind::Let) return v;
      return ir::ValueRef::let(v.index >= base ? added_to_new[v.index - base] : old_to_new[v.index]);
    };
    out.lets.clear();
    for (const auto& [is_added, i] : order) {
      ir::Let let = is_added ? added[i] : f.lets[i];
      if (!is_added) {
        for (size_t o = 0; o < let.operands.size(); ++o) {
          if (auto it = operand_of.find(i * 4 + static_cast<uint32_t>(o)); it != operand_of.end()) let.operands[o] = it->second;
        }
      }
      for (ir::ValueRef& v : let.operands) v = renumber(v);
      out.lets.push_back(std::move(let));
    }
    for (ir::ValueRef& r : out.results) r = renumber(r);
  }
};

}  // namespace presk::numerics
