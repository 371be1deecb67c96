// The decode entry's twin sites (twins.h): both sides inlined into one table of value
// signatures, each the op, its shape-free attributes and its operands' signatures; a decode
// site's twins are the full-sequence sites of the same signature.
#include "generate/twins.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

namespace presk::generate {

namespace {

using exec::native::RealType;

// A signature's node: what `contract` needs to see through a transpose.
struct Node {
  ir::Op op = ir::Op::literal;
  std::vector<int64_t> permutation;  // a transpose's
  int operand = -1;                  // a transpose's operand
};

std::string join(const std::vector<int64_t>& values) {
  std::string text;
  for (int64_t v : values) text += std::to_string(v) + ",";
  return text;
}

// Renames an einsum spec's letters by their first appearance: "hqd,hkd->hqk" → "abc,adc->abd".
std::string canonical_spec(const std::string& spec) {
  std::map<char, char> names;
  std::string out;
  for (char c : spec) {
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (letter && !names.count(c)) names[c] = static_cast<char>('a' + names.size());
    out += letter ? names[c] : c;
  }
  return out;
}

// The signatures both sides share: a key's id, and each id's node.
struct Signatures {
  std::map<std::string, int> ids;
  std::vector<Node> nodes;
};

class Walk {
 public:
  Walk(const ir::Program& program, Signatures& table, bool decode_side)
      : program_(program), table_(table), decode_side_(decode_side) {}

  // The entry's arguments by role: tokens, the position, a state, another input.
  void run_entry(const ir::Function& entry) {
    std::vector<int> arguments;
    for (size_t i = 0; i < entry.argument_types.size(); ++i) {
      const ir::Type& type = entry.argument_types[i];
      const std::string role = type.kind != ir::ElemKind::Int ? (decode_side_ ? "state|" : "input|") + std::to_string(i)
                               : type.shape.empty()           ? std::string("at")
                                                              : std::string("tokens");
      arguments.push_back(intern(role, {}));
    }
    run(entry, "", arguments);
  }

  // Full side: the sites (and "param:<path>" sources) of each signature. Both: a contraction
  // operand's transposes, by (the contraction's signature, operand).
  std::map<int, std::set<std::string>> sources;
  std::map<std::pair<int, int>, std::set<int>> transposed;
  // Decode side: each site's signature; a cache's readers (contraction signature, operand).
  std::vector<std::pair<std::string, int>> sites;
  std::set<std::string> caches;
  std::map<std::string, std::set<std::pair<int, int>>> cache_readers;


 private:
  int intern(const std::string& key, Node node) {
    auto [it, fresh] = table_.ids.emplace(key, static_cast<int>(table_.nodes.size()));
    if (fresh) table_.nodes.push_back(std::move(node));
    return it->second;
  }
  const Node& node(int id) const { return table_.nodes[static_cast<size_t>(id)]; }

  std::vector<int> run(const ir::Function& f, const std::string& context, const std::vector<int>& arguments) {
    std::vector<std::vector<int>> values(f.lets.size());
    std::vector<std::string> cache_of(f.lets.size());
    auto operand = [&](size_t k, const ir::Let& let) {
      const ir::ValueRef ref = let.operands.at(k);
      return ref.kind == ir::ValueRef::Kind::Argument ? arguments.at(ref.index) : values.at(ref.index).at(0);
    };
    for (uint32_t i = 0; i < f.lets.size(); ++i) {
      const ir::Let& let = f.lets[i];
      if (ir::is_calling(let.op)) {
        std::vector<int> inputs;
        for (size_t k = 0; k < let.operands.size(); ++k) inputs.push_back(operand(k, let));
        values[i] = run(*program_.find_function(let.attrs.callee), ir::join_path(context, let.attrs.path), inputs);
        continue;
      }
      if (let.op == ir::Op::get) {
        const ir::ValueRef ref = let.operands.at(0);
        values[i] = {values.at(ref.index).at(static_cast<size_t>(let.attrs.axes.at(0)))};
        continue;
      }
      const int id = signature(f, i, context, [&](size_t k) { return operand(k, let); }, cache_of);
      values[i] = {id};
      if (let.op == ir::Op::cache_write) cache_of[i] = f.site_name(i);
      if (!exec::native::is_typable(let)) continue;
      if (decode_side_) {
        sites.emplace_back(f.site_name(i), id);
        if (let.op == ir::Op::cache_write) caches.insert(f.site_name(i));
      } else {
        sources[id].insert(f.site_name(i));
      }
    }
    std::vector<int> results;
    for (const ir::ValueRef& ref : f.results) {
      results.push_back(ref.kind == ir::ValueRef::Kind::Argument ? arguments.at(ref.index) : values.at(ref.index).at(0));
    }
    return results;
  }

  // The signature of a computing let: its op and shape-free attributes, its operands'. A row of a parameter at the position (`embed(pos, at)`) is
  // the parameter, a cache written is the rows written, `causal_mask_at` is `causal_mask`, a slice
  // of the tokens is the tokens, and a contraction sees through its operands' transposes.
  template <class Operand>
  int signature(const ir::Function& f, uint32_t i, const std::string& context, Operand operand,
                const std::vector<std::string>& cache_of) {
    const ir::Let& let = f.lets[i];
    const int tokens = intern("tokens", {}), at = intern("at", {});
    switch (let.op) {
      case ir::Op::param: {
        const std::string path = ir::join_path(context, let.attrs.path);
        const int id = intern("param|" + path, {ir::Op::param, {}, -1});
        if (!decode_side_) sources[id].insert("param:" + path);
        return id;
      }
      case ir::Op::slice:
        if (operand(0) == tokens) return tokens;
        break;
      case ir::Op::embed:
        if (operand(1) == at) return operand(0);
        break;
      case ir::Op::cache_write: return operand(1);
      case ir::Op::contract: return contraction(f, i, operand, cache_of);
      default: break;
    }
    const ir::Op op = let.op == ir::Op::causal_mask_at ? ir::Op::causal_mask : let.op;
    const size_t arity = let.op == ir::Op::causal_mask_at ? 1 : let.operands.size();
    // A slice's stops from the end of its axis: the same for `x[0 : T]` and `x[0 : 1]` of a row.
    std::vector<int64_t> stops;
    for (size_t k = 0; k < let.attrs.stops.size(); ++k) {
      stops.push_back(let.attrs.stops[k] - f.type_of(let.operands.at(0)).shape.at(static_cast<size_t>(let.attrs.axes.at(k))));
    }
    std::string key = std::string(ir::op_name(op)) + "|" + join(let.attrs.axes) + "|" + join(let.attrs.starts) + "|" +
                      join(stops) + "|" + let.attrs.literal + "|" + std::to_string(let.attrs.rate);
    for (size_t k = 0; k < arity; ++k) key += "|" + std::to_string(operand(k));
    Node node{op, {}, -1};
    if (op == ir::Op::transpose) node = {op, let.attrs.axes, operand(0)};
    return intern(key, node);
  }

  template <class Operand>
  int contraction(const ir::Function& f, uint32_t i, Operand operand, const std::vector<std::string>& cache_of) {
    const ir::Let& let = f.lets[i];
    const std::string& spec = let.attrs.spec;
    const size_t arrow = spec.find("->"), comma = spec.find(',');
    std::vector<std::string> letters{spec.substr(0, comma), spec.substr(comma + 1, arrow - comma - 1)};
    std::vector<int> inputs{operand(0), operand(1)};
    std::vector<std::set<int>> peeled(2);
    for (size_t k = 0; k < 2; ++k) {
      // transpose(x, p)[j…] = x[…] with x's axis p[j] named by the transpose's j-th letter.
      while (node(inputs[k]).op == ir::Op::transpose && node(inputs[k]).permutation.size() == letters[k].size()) {
        const Node& t = node(inputs[k]);
        std::string own(letters[k].size(), '?');
        for (size_t j = 0; j < t.permutation.size(); ++j) own[static_cast<size_t>(t.permutation[j])] = letters[k][j];
        peeled[k].insert(inputs[k]);
        letters[k] = own;
        inputs[k] = t.operand;
      }
    }
    const std::string key = "contract|" + canonical_spec(letters[0] + "," + letters[1] + spec.substr(arrow)) + "|" +
                            std::to_string(inputs[0]) + "|" + std::to_string(inputs[1]);
    const int id = intern(key, {ir::Op::contract, {}, -1});
    for (size_t k = 0; k < 2; ++k) {
      transposed[{id, static_cast<int>(k)}].insert(peeled[k].begin(), peeled[k].end());
      if (const ir::ValueRef ref = let.operands[k];
          decode_side_ && ref.kind == ir::ValueRef::Kind::Let && !cache_of[ref.index].empty()) {
        cache_readers[cache_of[ref.index]].insert({id, static_cast<int>(k)});
      }
    }
    return id;
  }

  const ir::Program& program_;
  Signatures& table_;
  bool decode_side_;
};

}  // namespace

DecodeTwins find_decode_twins(const ir::Program& program, const ir::Function& decode) {
  Signatures table;
  Walk full(program, table, false), step(program, table, true);
  for (const ir::Function& f : program.functions) {
    if (f.is_entry && &f != &decode && f.results.size() == 1) full.run_entry(f);
  }
  step.run_entry(decode);
  DecodeTwins twins;
  for (const auto& [site, id] : step.sites) {
    TwinSource source;
    for (const std::string& name : full.sources[id]) {
      (name.rfind("param:", 0) == 0 ? source.params : source.sites).push_back(name.rfind("param:", 0) == 0 ? name.substr(6) : name);
    }
    for (const auto& reader : step.cache_readers[site]) {
      for (int t : full.transposed[reader]) {  // those the decode step does not apply itself
        if (step.transposed[reader].count(t)) continue;
        for (const std::string& name : full.sources[t]) source.rounded_by.push_back(name);
      }
    }
    if (source.sites.empty() && source.params.empty()) {
      if (std::find(twins.unmatched.begin(), twins.unmatched.end(), site) == twins.unmatched.end()) twins.unmatched.push_back(site);
      continue;
    }
    TwinSource& merged = twins.twins[site];  // a function reached in several contexts: the union
    for (auto [from, to] : {std::pair{&source.sites, &merged.sites}, {&source.params, &merged.params}, {&source.rounded_by, &merged.rounded_by}}) {
      for (const std::string& name : *from) {
        if (std::find(to->begin(), to->end(), name) == to->end()) to->push_back(name);
      }
    }
  }
  return twins;
}

namespace {

RealType narrower(RealType a, RealType b) { return exec::native::is_wider_or_same(a, b) ? b : a; }

// "Module.fn/%n" → ("Module", "/%n").
std::pair<std::string, std::string> module_and_number(const std::string& site) {
  return {site.substr(0, site.find('.')), site.substr(site.rfind('/'))};
}

// The type of a decode site's twins, or none when they differ and no twin is its namesake.
std::optional<RealType> twin_type(const exec::native::Realization& realization, const std::string& site,
                                  const TwinSource& source) {
  std::map<std::string, RealType> types;
  for (const std::string& name : source.sites) types[name] = realization.site_type(name);
  for (const std::string& path : source.params) {
    types["param:" + path] = realization.param_quant(path) ? RealType::f32 : realization.param_type(path);
  }
  std::set<RealType> distinct;
  for (const auto& [name, type] : types) distinct.insert(type);
  std::optional<RealType> type;
  if (distinct.size() == 1) {
    type = *distinct.begin();
  } else {
    for (const auto& [name, candidate] : types) {
      if (module_and_number(name) == module_and_number(site)) type = candidate;
    }
  }
  if (!type) return type;
  for (const std::string& name : source.rounded_by) type = narrower(*type, realization.site_type(name));
  return type;
}

}  // namespace

exec::native::Realization realization_for_decode(const exec::native::Realization& realization, const ir::Program& program,
                                                 const ir::Function& decode) {
  exec::native::Realization mapped = realization;
  if (realization.sites.empty() && realization.params.empty() && realization.quant.empty()) return mapped;  // uniform
  for (const auto& [site, source] : find_decode_twins(program, decode).twins) {
    if (realization.sites.count(site)) continue;
    if (const std::optional<RealType> type = twin_type(realization, site, source)) mapped.sites[site] = *type;
  }
  return mapped;
}

exec::native::Realization realization_for_entry(const exec::native::Realization& realization, const ir::Program& program,
                                                const std::string& entry) {
  const ir::Function* f = program.find_function(entry);
  if (entry != kDecodeEntry || f == nullptr) return realization;
  return realization_for_decode(realization, program, *f);
}

}  // namespace presk::generate
