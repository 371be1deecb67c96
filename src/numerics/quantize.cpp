// Quantize insertion's placement rules (quantize.h).
#include "numerics/quantize.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "support/diagnostics.h"

namespace presk::numerics {
namespace {

using ir::ValueRef;

// Whether `let`, a view of its operand, keeps each contracted row (the last axis) whole and in
// place: a reshape that keeps the last extent, a transpose that keeps the last axis last, a
// slice that does not cut the last axis.
bool keeps_rows(const ir::Function& f, const ir::Let& let) {
  if (let.operands.empty()) return false;
  const ir::Type& from = f.type_of(let.operands[0]);
  if (from.shape.empty() || let.type.shape.empty() || from.shape.back() != let.type.shape.back()) return false;
  const int64_t last = from.rank() - 1;
  switch (let.op) {
    case ir::Op::reshape: return true;
    case ir::Op::transpose: return !let.attrs.axes.empty() && let.attrs.axes.back() == last;
    case ir::Op::slice: return std::find(let.attrs.axes.begin(), let.attrs.axes.end(), last) == let.attrs.axes.end();
    default: return false;
  }
}

ValueRef root_of_views(const ir::Function& f, ValueRef v) {
  while (v.kind == ValueRef::Kind::Let && keeps_rows(f, f.lets[v.index])) v = f.lets[v.index].operands[0];
  return v;
}

bool is_table(const ir::Function& f, ValueRef v) {
  if (v.kind != ValueRef::Kind::Let) return false;
  const ir::Op op = f.lets[v.index].op;
  return op == ir::Op::concat || op == ir::Op::cache_write;
}

bool fuses(const Contract& contract, const ir::Function& f, ValueRef v) {
  if (v.kind != ValueRef::Kind::Let) return false;
  const std::string name = std::string(ir::op_name(f.lets[v.index].op)) + "_quant";
  return std::find(contract.fused.begin(), contract.fused.end(), name) != contract.fused.end();
}

// The lets of `f` that read v, directly.
std::vector<uint32_t> readers_of(const ir::Function& f, ValueRef v) {
  std::vector<uint32_t> readers;
  for (uint32_t i = 0; i < f.lets.size(); ++i) {
    const auto& ops = f.lets[i].operands;
    if (std::find(ops.begin(), ops.end(), v) != ops.end()) readers.push_back(i);
  }
  return readers;
}

// Whether every reader of v (through row-keeping views) is one of the quantized products, and
// no result of the function is v or a view of it: then a fused op need write only its quantized form.
bool read_only_quantized(const ir::Function& f, ValueRef v, const std::set<uint32_t>& products) {
  if (std::find(f.results.begin(), f.results.end(), v) != f.results.end()) return false;
  for (uint32_t r : readers_of(f, v)) {
    if (products.count(r)) continue;
    if (!keeps_rows(f, f.lets[r]) || !read_only_quantized(f, ValueRef::let(r), products)) return false;
  }
  return true;
}

// The sites that set a table's rows (the concat's operands, the cache_write's rows), each the
// root of its views, when every one can quantize its rows in its epilogue; empty otherwise.
std::vector<std::string> row_producers(const Contract& contract, const ir::Function& f, ValueRef table) {
  const ir::Let& let = f.lets[table.index];
  std::vector<ValueRef> rows = let.operands;
  if (let.op == ir::Op::cache_write) rows = {let.operands[1]};  // the earlier rows came quantized
  std::vector<std::string> names;
  for (ValueRef r : rows) {
    const ValueRef root = root_of_views(f, r);
    if (!fuses(contract, f, root)) return {};
    names.push_back(f.site_name(root.index));
  }
  return names;
}

std::string value_name(const ir::Function& f, ValueRef v) {
  if (v.kind == ValueRef::Kind::Let) return f.site_name(v.index);
  return f.name + "/$" + std::to_string(v.index) + " (" + f.argument_names[v.index] + ")";
}

Placement place(const Contract& contract, const ir::Function& f, const QuantizeSite& site,
                const std::set<uint32_t>& products, std::vector<std::string>& producers) {
  if (is_table(f, site.value)) {
    producers = row_producers(contract, f, site.value);
    return producers.empty() ? Placement::before_first_reader : Placement::per_row_by_producers;
  }
  if (fuses(contract, f, site.value) && read_only_quantized(f, site.value, products)) return Placement::epilogue;
  return Placement::after_producer;
}

}  // namespace

const char* placement_name(Placement placement) {
  switch (placement) {
    case Placement::after_producer: return "after_producer";
    case Placement::epilogue: return "epilogue";
    case Placement::before_first_reader: return "before_first_reader";
    case Placement::per_row_by_producers: return "per_row_by_producers";
  }
  return "?";
}

std::vector<QuantizeSite> quantize(const ir::Program& program, const Contract& contract,
                                   const std::vector<QuantizedProduct>& products) {
  std::map<uint32_t, std::set<uint32_t>> product_lets;  // per function
  for (const QuantizedProduct& q : products) product_lets[q.product.function].insert(q.product.let);
  std::vector<QuantizeSite> sites;
  // One quantize per (function, root, scheme, block), readers in let order.
  for (const QuantizedProduct& q : products) {
    const ir::Function& f = program.functions[q.product.function];
    const ValueRef root = root_of_views(f, f.lets[q.product.let].operands[static_cast<size_t>(q.product.activation)]);
    auto same = std::find_if(sites.begin(), sites.end(), [&](const QuantizeSite& s) {
      return s.function == q.product.function && s.value == root && s.scheme == q.scheme && s.block == q.block;
    });
    if (same != sites.end()) {
      same->readers.push_back(q.product.site);
      continue;
    }
    QuantizeSite site;
    site.function = q.product.function;
    site.value = root;
    site.name = value_name(f, root);
    site.scheme = q.scheme;
    site.block = q.block;
    site.readers = {q.product.site};
    site.first_reader = q.product.let;
    sites.push_back(site);
  }
  for (QuantizeSite& site : sites) {
    const ir::Function& f = program.functions[site.function];
    site.where = place(contract, f, site, product_lets[site.function], site.row_producers);
  }
  return sites;
}

std::string quantize_text(const ir::Program& program, const std::vector<QuantizeSite>& sites) {
  std::ostringstream out;
  if (sites.empty()) out << "no product reads its activation quantized\n";
  for (const QuantizeSite& s : sites) {
    const ir::Function& f = program.functions[s.function];
    out << "quantize " << s.name << " : " << ir::type_to_string(f.type_of(s.value)) << "  " << scheme_text(s.scheme)
        << ", blocks of " << s.block << "  " << placement_name(s.where);
    if (s.where == Placement::before_first_reader) out << " " << f.site_name(s.first_reader);
    for (const std::string& p : s.row_producers) out << " " << p;
    out << "\n  read by";
    for (const std::string& r : s.readers) out << " " << r;
    out << "\n";
  }
  return out.str();
}

nlohmann::json quantize_json(const std::vector<QuantizeSite>& sites) {
  nlohmann::json list = nlohmann::json::array();
  for (const QuantizeSite& s : sites) {
    list.push_back({{"value", s.name}, {"placement", placement_name(s.where)}, {"scheme", scheme_text(s.scheme)},
                    {"block", s.block}, {"readers", s.readers}, {"row_producers", s.row_producers}});
  }
  return list;
}

}  // namespace presk::numerics
