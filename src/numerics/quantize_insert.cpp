// The quantize pass's IR (quantize.h, chip_program): each placement made a `quantize` let.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "ir/verifier.h"
#include "numerics/attention_forms.h"
#include "numerics/ir_edit.h"
#include "numerics/quantize.h"
#include "support/diagnostics.h"

namespace presk::numerics {
namespace {

using ir::ValueRef;

ir::Let quantize_let(const ir::Function& f, ValueRef value, const QuantizeSite& site) {
  ir::Let let;
  let.op = ir::Op::quantize;
  let.type = f.type_of(value);
  let.operands = {value};
  let.attrs.axes = {let.type.rank() - 1};
  let.attrs.starts = {site.block};
  let.attrs.spec = scheme_spec(site.scheme);
  return let;
}

// The view lets from `root` to `operand` (a chain of one-operand views), root's reader first.
std::vector<uint32_t> view_chain(const ir::Function& f, ValueRef root, ValueRef operand) {
  std::vector<uint32_t> chain;
  for (ValueRef v = operand; !(v == root); v = f.lets[v.index].operands[0]) {
    internal_assert(v.kind == ValueRef::Kind::Let);
    chain.push_back(v.index);
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// Whether only `readers` (through views) read the let v, and no result is v.
bool read_only_by(const ir::Function& f, uint32_t v, const std::set<uint32_t>& readers) {
  if (std::find(f.results.begin(), f.results.end(), ValueRef::let(v)) != f.results.end()) return false;
  for (uint32_t r = v + 1; r < f.lets.size(); ++r) {
    const auto& ops = f.lets[r].operands;
    if (std::find(ops.begin(), ops.end(), ValueRef::let(v)) == ops.end() || readers.count(r)) continue;
    if (f.lets[r].operands.size() != 1 || !read_only_by(f, r, readers)) return false;
  }
  return true;
}

// Where the quantize of `site` goes: right after its producer (on entry for an argument), or
// right before its first reader for a table assembled a row at a time.
uint32_t position_of(const QuantizeSite& site) {
  if (site.where == Placement::before_first_reader || site.where == Placement::per_row_by_producers) return site.first_reader;
  return site.value.kind == ValueRef::Kind::Argument ? 0 : site.value.index + 1;
}

void insert_site(Edit& edit, const QuantizeSite& site, const std::vector<QuantizedProduct>& products) {
  const ir::Function& f = edit.f;
  std::set<uint32_t> readers;
  for (const QuantizedProduct& q : products) {
    if (q.product.function == site.function && std::count(site.readers.begin(), site.readers.end(), q.product.site)) readers.insert(q.product.let);
  }
  struct Reader {
    uint32_t let, operand;
    std::vector<uint32_t> chain;
    bool in_place;
  };
  std::vector<Reader> list;
  uint32_t position = position_of(site);
  for (const QuantizedProduct& q : products) {
    if (!readers.count(q.product.let) || q.product.function != site.function) continue;
    const uint32_t p = q.product.let, a = static_cast<uint32_t>(q.product.activation);
    Reader r{p, a, view_chain(f, site.value, f.lets[p].operands[a]), false};
    r.in_place = std::all_of(r.chain.begin(), r.chain.end(), [&](uint32_t v) { return read_only_by(f, v, readers); });
    if (r.in_place && !r.chain.empty()) position = std::min(position, r.chain.front());
    list.push_back(std::move(r));
  }
  std::optional<ValueRef> at_root;
  for (const Reader& r : list) {
    if (!r.in_place) {  // a view something else reads too: the product's own operand, right before it
      edit.operand_of[r.let * 4 + r.operand] = edit.add(r.let, quantize_let(f, f.lets[r.let].operands[r.operand], site));
      continue;
    }
    if (!at_root) at_root = edit.add(position, quantize_let(f, site.value, site));
    edit.operand_of[r.chain.empty() ? r.let * 4 + r.operand : r.chain.front() * 4] = *at_root;
  }
}

// Each cache_write whose cache the contract keeps otherwise than as computed writes its rows kept:
// a `quantize` with spec "keep/<mode>" and the row (the last axis) as its block, right before it.
void insert_keeps(Edit& edit, const Contract& contract) {
  const ir::Function& f = edit.f;
  for (uint32_t i = 0; i < f.lets.size(); ++i) {
    const Keep keep = contract.keep_of(f.site_name(i));
    if (f.lets[i].op != ir::Op::cache_write || keep.kind == Keep::Kind::as_computed) continue;
    ir::Let let;
    let.op = ir::Op::quantize;
    let.type = f.type_of(f.lets[i].operands[1]);
    let.operands = {f.lets[i].operands[1]};
    let.attrs.axes = {let.type.rank() - 1};
    let.attrs.starts = {let.type.shape.empty() ? 1 : let.type.shape.back()};
    let.attrs.spec = keep_spec(keep);
    let.span = f.lets[i].span;
    edit.operand_of[i * 4 + 1] = edit.add(i, std::move(let));
  }
}

}  // namespace

ir::Program chip_program(const ir::Program& program, const Contract& contract, const std::vector<QuantizeSite>& sites,
                         const std::vector<QuantizedProduct>& products) {
  ir::Program out = program;
  const std::vector<AttentionSite> attention = contract.has_attention_forms() ? attention_sites(program) : std::vector<AttentionSite>{};
  for (uint32_t fi = 0; fi < program.functions.size(); ++fi) {
    const ir::Function& f = program.functions[fi];
    Edit edit{f, static_cast<uint32_t>(f.lets.size() + 1), {}, {}, {}};
    for (const QuantizeSite& site : sites) {
      if (site.function == fi) insert_site(edit, site, products);
    }
    insert_keeps(edit, contract);
    insert_attention(edit, contract, attention, fi);
    if (!edit.added.empty()) edit.finish(out.functions[fi]);
  }
  ir::verify_program(out);
  return out;
}

exec::native::Realization chip_realization(const exec::native::Realization& realization, const Contract& contract) {
  exec::native::Realization chip = realization;
  chip.integer_sums = {contract.accumulator_bits, contract.overflow == Overflow::saturate};
  return chip;
}

}  // namespace presk::numerics
