// A contract against a program (bind.h).
#include "numerics/bind.h"

#include <map>
#include <set>

#include "numerics/attention_forms.h"
#include "support/diagnostics.h"
#include "support/json_reader.h"

namespace presk::numerics {
namespace {

constexpr const char* kSitesHint = "`presk dump --stage chip --contract C PROGRAM` lists the products and caches";

// The einsum spec's operand letters and result letters: "td,dv->tv".
struct Spec {
  std::string operands[2];
  std::string result;
};
Spec split_spec(const std::string& spec) {
  Spec s;
  const size_t comma = spec.find(','), arrow = spec.find("->");
  internal_assert(comma != std::string::npos && arrow != std::string::npos);
  s.operands[0] = spec.substr(0, comma);
  s.operands[1] = spec.substr(comma + 1, arrow - comma - 1);
  s.result = spec.substr(arrow + 2);
  return s;
}

bool is_param_let(const ir::Function& f, ir::ValueRef v) {
  return v.kind == ir::ValueRef::Kind::Let && f.lets[v.index].op == ir::Op::param;
}

// (function name, let index) → the full path of the parameter that `param` let reads.
std::map<std::pair<std::string, uint32_t>, std::string> param_paths(const ir::Program& program) {
  std::map<std::pair<std::string, uint32_t>, std::string> paths;
  for (const ir::Function& f : program.functions) {
    if (!f.is_entry) continue;
    ir::for_each_param_let(program, f, [&](const ir::Function& g, uint32_t i, const std::string& path) {
      paths.emplace(std::make_pair(g.name, i), path);
    });
  }
  return paths;
}

std::string list_of(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < 8; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > 8) text += ", …";
  return names.empty() ? "none" : text;
}

// Whether the value is never negative by its op (a softmax's weights, exp, relu, abs, √).
bool never_negative(const ir::Function& f, ir::ValueRef v) {
  if (v.kind != ir::ValueRef::Kind::Let) return false;
  switch (f.lets[v.index].op) {
    case ir::Op::softmax: case ir::Op::exp: case ir::Op::relu: case ir::Op::abs: case ir::Op::sqrt:
    case ir::Op::rsqrt: return true;
    default: return false;
  }
}

void check_caches(const Contract& contract, const ir::Program& program) {
  std::map<std::string, int64_t> caches;  // cache_write site → its row's length
  for (const ir::Function& f : program.functions) {
    for (uint32_t i = 0; i < f.lets.size(); ++i) {
      if (f.lets[i].op == ir::Op::cache_write) caches[f.site_name(i)] = f.lets[i].type.shape.back();
    }
  }
  std::vector<std::string> names;
  for (const auto& [site, row] : caches) names.push_back(site);
  for (const auto& [site, keep] : contract.caches) {
    if (!caches.count(site)) {
      user_error("E1712").hint(kSitesHint) << "contract `" << contract.chip << "`: `caches." << text_excerpt(site)
                                            << "` keeps a value that is no cache (no cache_write there); the caches: "
                                            << list_of(names);
    }
  }
  for (const auto& [site, row] : caches) {
    if (contract.keep_of(site).kind != Keep::Kind::int8_rows_rotated) continue;
    if (row <= 0 || (row & (row - 1)) != 0) {
      user_error("E1713").hint("keep this cache as int8_rows, or use rows of a power-of-two length")
          << "contract `" << contract.chip << "`: the cache `" << site << "` has rows of " << row
          << " values, and a Walsh–Hadamard rotation needs a power of two";
    }
  }
}

}  // namespace

std::vector<ProductSite> products_by_matrix(const ir::Program& program) {
  const auto paths = param_paths(program);
  std::vector<ProductSite> products;
  for (uint32_t fi = 0; fi < program.functions.size(); ++fi) {
    const ir::Function& f = program.functions[fi];
    for (uint32_t i = 0; i < f.lets.size(); ++i) {
      const ir::Let& let = f.lets[i];
      if (let.op != ir::Op::contract) continue;
      const bool first = is_param_let(f, let.operands[0]), second = is_param_let(f, let.operands[1]);
      if (first == second) continue;  // no matrix, or two
      ProductSite p{fi, i, f.site_name(i), first ? 1 : 0, 1, ""};
      const Spec spec = split_spec(let.attrs.spec);
      const std::string& letters = spec.operands[p.activation];
      const ir::Type& type = f.type_of(let.operands[static_cast<size_t>(p.activation)]);
      for (size_t a = 0; a < letters.size() && a < type.shape.size(); ++a) {
        if (spec.result.find(letters[a]) == std::string::npos) p.row *= type.shape[a];
      }
      const uint32_t matrix_let = let.operands[static_cast<size_t>(1 - p.activation)].index;
      auto it = paths.find({f.name, matrix_let});
      p.matrix = it != paths.end() ? it->second : f.lets[matrix_let].attrs.path;
      products.push_back(p);
    }
  }
  return products;
}

std::vector<QuantizedProduct> bind_contract(const Contract& contract, const ir::Program& program,
                                            const exec::native::Realization* realization) {
  const std::vector<ProductSite> products = products_by_matrix(program);
  std::set<std::string> sites;
  std::vector<std::string> names;
  for (const ProductSite& p : products) {
    if (sites.insert(p.site).second) names.push_back(p.site);
  }
  for (const auto& [site, scheme] : contract.products) {
    if (!sites.count(site)) {
      user_error("E1710").hint(kSitesHint) << "contract `" << contract.chip << "`: `products." << text_excerpt(site)
                                            << "` is no product by a matrix; the products: " << list_of(names);
    }
  }
  check_caches(contract, program);
  check_attention(contract, program);
  std::vector<QuantizedProduct> quantized;
  for (const ProductSite& p : products) {
    const std::optional<Scheme> scheme = contract.scheme_of(p.site);
    if (!scheme) continue;
    const exec::native::QuantSpec* format = realization ? realization->param_quant(p.matrix) : nullptr;
    const int64_t block = block_length(scheme->block, p.row, format ? format->group : 0);
    if (block == 0) {
      user_error("E1711").hint("a block that divides the row, \"row\", or \"format\"")
          << "contract `" << contract.chip << "`: the product `" << p.site << "` reads rows of " << p.row
          << " values, which blocks of " << (scheme->block.kind == Block::Kind::fixed ? scheme->block.count : format->group)
          << " do not divide";
    }
    const ir::Function& f = program.functions[p.function];
    if (scheme->scale.kind == Scale::Kind::unsigned_pow2 && !never_negative(f, f.lets[p.let].operands[static_cast<size_t>(p.activation)])) {
      user_error("E1714").hint("an unsigned scale is for values never negative (a softmax's weights); use absmax or pow2")
          << "contract `" << contract.chip << "`: the product `" << p.site << "` reads an activation that may be negative "
          << "under an unsigned scale";
    }
    quantized.push_back({p, *scheme, block});
  }
  return quantized;
}

}  // namespace presk::numerics
