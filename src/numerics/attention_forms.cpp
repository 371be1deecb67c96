// The contract's AttentionNumerics in the chip's program (attention_forms.h).
#include "numerics/attention_forms.h"

#include <algorithm>
#include <optional>

#include "numerics/scheme/attention_spec.h"
#include "support/diagnostics.h"
#include "support/json_reader.h"

namespace presk::numerics {
namespace {

using ir::ValueRef;

// A contraction's einsum letters: "hqd,hkd->hqk".
struct Letters {
  std::string operand[2];
  std::string result;
  // The letters both operands have and the result has not.
  std::string contracted() const {
    std::string out;
    for (char c : operand[0]) {
      if (operand[1].find(c) != std::string::npos && result.find(c) == std::string::npos) out += c;
    }
    return out;
  }
};

Letters letters_of(const ir::Let& let) {
  const std::string& spec = let.attrs.spec;
  const size_t comma = spec.find(','), arrow = spec.find("->");
  internal_assert(comma != std::string::npos && arrow != std::string::npos);
  return {{spec.substr(0, comma), spec.substr(comma + 1, arrow - comma - 1)}, spec.substr(arrow + 2)};
}

bool is_param(const ir::Function& f, ValueRef v) {
  return v.kind == ValueRef::Kind::Let && f.lets[v.index].op == ir::Op::param;
}

bool is_let(const ir::Function& f, ValueRef v, ir::Op op) {
  return v.kind == ValueRef::Kind::Let && f.lets[v.index].op == op;
}

// The contraction the scores come from, through a scale by a number and a causal mask.
std::optional<uint32_t> scores_of(const ir::Function& f, ValueRef v) {
  while (v.kind == ValueRef::Kind::Let) {
    const ir::Let& let = f.lets[v.index];
    if (let.op == ir::Op::contract) return v.index;
    if (let.op == ir::Op::causal_mask || let.op == ir::Op::causal_mask_at) {
      v = let.operands[0];
      continue;
    }
    if (let.op != ir::Op::mul && let.op != ir::Op::div) return std::nullopt;
    const auto scaled = [&](size_t i) {
      return f.type_of(let.operands[i]).shape == let.type.shape && f.type_of(let.operands[1 - i]).rank() == 0;
    };
    if (scaled(0)) v = let.operands[0];
    else if (let.op == ir::Op::mul && scaled(1)) v = let.operands[1];
    else return std::nullopt;
  }
  return std::nullopt;
}

// The attention whose weighted sum is the contraction `c` of f, if it is one.
std::optional<AttentionSite> attention_at(const ir::Function& f, uint32_t c) {
  const ir::Let& weighted = f.lets[c];
  const Letters sum = letters_of(weighted);
  for (int w = 0; w < 2; ++w) {
    ValueRef p = weighted.operands[static_cast<size_t>(w)];
    while (is_let(f, p, ir::Op::dropout)) p = f.lets[p.index].operands[0];
    const std::string keys = sum.contracted();
    const std::string& weights = sum.operand[w];
    const std::string& values = sum.operand[1 - w];
    if (!is_let(f, p, ir::Op::softmax) || is_param(f, weighted.operands[static_cast<size_t>(1 - w)])) continue;
    if (keys.size() != 1 || weights.empty() || values.empty() || weights.back() != keys[0] || sum.result.find(values.back()) == std::string::npos ||
        weights.find(values.back()) != std::string::npos) {
      continue;
    }
    const std::optional<uint32_t> scores = scores_of(f, f.lets[p.index].operands[0]);
    if (!scores) continue;
    const ir::Let& s = f.lets[*scores];
    if (is_param(f, s.operands[0]) || is_param(f, s.operands[1]) || letters_of(s).contracted().size() != 1) continue;
    return AttentionSite{0, *scores, c, w, f.site_name(*scores)};
  }
  return std::nullopt;
}

// Whether `reader` is the only let that reads v, and no result is v.
bool only_reader(const ir::Function& f, ValueRef v, uint32_t reader) {
  if (std::find(f.results.begin(), f.results.end(), v) != f.results.end()) return false;
  for (uint32_t i = 0; i < f.lets.size(); ++i) {
    const auto& ops = f.lets[i].operands;
    if (i != reader && std::find(ops.begin(), ops.end(), v) != ops.end()) return false;
  }
  return true;
}

// Where a query or key row is taken in its form: the value whose last axis is the contracted one
// (through transposes only the scores read), and the operand that reads it.
struct RowPlace {
  uint32_t reader = 0, operand = 0;
  ValueRef value;
  int64_t row = 0;
};

std::optional<RowPlace> row_place(const ir::Function& f, uint32_t scores, int operand) {
  const Letters letters = letters_of(f.lets[scores]);
  RowPlace place{scores, static_cast<uint32_t>(operand), f.lets[scores].operands[static_cast<size_t>(operand)], 0};
  int64_t axis = static_cast<int64_t>(letters.operand[operand].find(letters.contracted()[0]));
  while (axis != f.type_of(place.value).rank() - 1) {
    if (!is_let(f, place.value, ir::Op::transpose) || !only_reader(f, place.value, place.reader)) return std::nullopt;
    const ir::Let& view = f.lets[place.value.index];
    axis = view.attrs.axes.at(static_cast<size_t>(axis));
    place = {place.value.index, 0, view.operands[0], 0};
  }
  place.row = f.type_of(place.value).shape.back();
  return place;
}

// The values per scale of `taken` on rows of `row` (a float: the row); 0 when its block does not divide it.
int64_t block_of(const Taken& taken, int64_t row) {
  return taken.scheme ? block_length(taken.scheme->block, row, 0) : row;
}

[[noreturn]] void refuse_block(const Contract& contract, const AttentionSite& site, const char* what, int64_t row) {
  user_error("E1711").hint("a block that divides the row, \"row\", or \"format\"")
      << "contract `" << contract.chip << "`: the attention at `" << site.name << "` takes " << what << " in rows of "
      << row << ", which its blocks do not divide";
  internal_failure(__FILE__, __LINE__, "user_error returns");
}

void check_one(const Contract& contract, const AttentionNumerics& forms, const ir::Function& f, const AttentionSite& site) {
  for (int operand = 0; operand < 2; ++operand) {
    const char* what = operand == 0 ? "its queries" : "its keys";
    const std::optional<RowPlace> place = row_place(f, site.scores, operand);
    if (!place) {
      user_error("E1727").hint("let only the scores read the transposed rows")
          << "contract `" << contract.chip << "`: the attention at `" << site.name << "` reads " << what
          << " along a contracted axis that is not last, through a view other than a transpose only the scores "
             "read, so their rows cannot be taken in their form in place";
    }
    if (block_of(operand == 0 ? forms.queries : forms.keys, place->row) == 0) refuse_block(contract, site, what, place->row);
  }
  const ir::Let& weighted = f.lets[site.weighted];
  const int64_t keys = f.type_of(weighted.operands[static_cast<size_t>(site.weights_operand)]).shape.back();
  const int64_t row = f.type_of(weighted.operands[static_cast<size_t>(1 - site.weights_operand)]).shape.back();
  if (block_of(forms.weights, keys) == 0) refuse_block(contract, site, "its weights", keys);
  for (const Taken* taken : {&forms.queries, &forms.keys, &forms.values}) {
    if (taken->scheme && taken->scheme->scale.kind == Scale::Kind::unsigned_pow2) {
      user_error("E1714").hint("an unsigned scale is for values never negative (a softmax's weights); use absmax or pow2")
          << "contract `" << contract.chip << "`: the attention at `" << site.name
          << "` takes its queries, keys or values, which may be negative, under an unsigned scale";
    }
  }
  if (forms.values.scheme && block_of(forms.values, row) != row) {
    user_error("E1726").hint("quantize the values over each whole row: \"block\": \"row\"")
        << "contract `" << contract.chip << "`: the attention at `" << site.name << "` takes value rows of " << row
        << " values in blocks shorter than the row; each weight is taken times its value row's one scale";
  }
}

ir::Let quantize_let(const ir::Type& type, std::vector<ValueRef> operands, int64_t block, std::string spec) {
  ir::Let let;
  let.op = ir::Op::quantize;
  let.type = type;
  let.operands = std::move(operands);
  let.attrs.axes = {let.type.rank() - 1};
  let.attrs.starts = {block};
  let.attrs.spec = std::move(spec);
  return let;
}

// The operand `operand` of let `reader` as the edit has it so far.
ValueRef current(const Edit& edit, uint32_t reader, uint32_t operand) {
  const auto it = edit.operand_of.find(reader * 4 + operand);
  return it != edit.operand_of.end() ? it->second : edit.f.lets[reader].operands[operand];
}

void take_rows(Edit& edit, const AttentionSite& site, int operand, const Taken& taken) {
  const std::optional<RowPlace> place = row_place(edit.f, site.scores, operand);
  internal_assert(place.has_value());  // check_attention refused it otherwise
  const ValueRef value = current(edit, place->reader, place->operand);
  const ir::Let let = quantize_let(edit.f.type_of(place->value), {value}, block_of(taken, place->row), taken_spec(taken));
  edit.operand_of[place->reader * 4 + place->operand] = edit.add(place->reader, let);
}

void take_weighted_sum(Edit& edit, const AttentionSite& site, const AttentionNumerics& forms) {
  const ir::Function& f = edit.f;
  const uint32_t w = static_cast<uint32_t>(site.weights_operand), v = 1 - w;
  const ValueRef weights = current(edit, site.weighted, w), values = current(edit, site.weighted, v);
  const ir::Type& weights_type = f.type_of(f.lets[site.weighted].operands[w]);
  const ir::Type& values_type = f.type_of(f.lets[site.weighted].operands[v]);
  const int64_t keys = weights_type.shape.back(), row = values_type.shape.back();
  ir::Let weights_let = quantize_let(weights_type, {weights}, block_of(forms.weights, keys), taken_spec(forms.weights));
  ir::Let values_let = quantize_let(values_type, {values}, row, taken_spec(forms.values));
  if (forms.values.scheme) {
    const Letters letters = letters_of(f.lets[site.weighted]);
    WeightsForm form{forms.weights, *forms.values.scheme, letters.operand[w], letters.operand[v]};
    weights_let.operands.push_back(values);
    weights_let.attrs.spec = weights_spec(form);
    values_let.attrs.spec = codes_spec(*forms.values.scheme);
  }
  edit.operand_of[site.weighted * 4 + w] = edit.add(site.weighted, std::move(weights_let));
  edit.operand_of[site.weighted * 4 + v] = edit.add(site.weighted, std::move(values_let));
}

}  // namespace

std::vector<AttentionSite> attention_sites(const ir::Program& program) {
  std::vector<AttentionSite> sites;
  for (uint32_t fi = 0; fi < program.functions.size(); ++fi) {
    const ir::Function& f = program.functions[fi];
    for (uint32_t i = 0; i < f.lets.size(); ++i) {
      if (f.lets[i].op != ir::Op::contract) continue;
      if (std::optional<AttentionSite> site = attention_at(f, i)) {
        site->function = fi;
        sites.push_back(std::move(*site));
      }
    }
  }
  return sites;
}

AttentionOperands attention_operands(const ir::Program& program, const AttentionSite& site) {
  const ir::Function& f = program.functions[site.function];
  const ir::Let& weighted = f.lets[site.weighted];
  const ir::Type& weights = f.type_of(weighted.operands[static_cast<size_t>(site.weights_operand)]);
  const ir::Type& values = f.type_of(weighted.operands[static_cast<size_t>(1 - site.weights_operand)]);
  AttentionOperands out;
  for (int operand = 0; operand < 2; ++operand) {
    const std::optional<RowPlace> place = row_place(f, site.scores, operand);
    const ir::Type& type = f.type_of(f.lets[site.scores].operands[static_cast<size_t>(operand)]);
    out.elements[operand] = type.element_count();
    out.rows[operand] = place ? place->row : type.shape.back();
  }
  out.elements[2] = values.element_count();
  out.rows[2] = values.shape.back();
  out.elements[3] = weights.element_count();
  out.rows[3] = weights.shape.back();
  return out;
}

void check_attention(const Contract& contract, const ir::Program& program) {
  const std::vector<AttentionSite> sites = attention_sites(program);
  for (const auto& [name, forms] : contract.attentions) {
    if (std::none_of(sites.begin(), sites.end(), [&](const AttentionSite& s) { return s.name == name; })) {
      std::string list;
      for (const AttentionSite& s : sites) list += (list.empty() ? "" : ", ") + s.name;
      user_error("E1728").hint("`presk dump --stage chip --contract C PROGRAM` lists each attention by its scores' site")
          << "contract `" << contract.chip << "`: `attentions." << text_excerpt(name)
          << "` names no attention's scores; the attentions: " << (list.empty() ? "none" : list);
    }
  }
  for (const AttentionSite& site : sites) {
    if (const std::optional<AttentionNumerics> forms = contract.attention_of(site.name)) {
      check_one(contract, *forms, program.functions[site.function], site);
    }
  }
}

AttentionAccumulators attention_accumulators(const ir::Program& program, const AttentionSite& site,
                                             const AttentionNumerics& forms, const Contract& contract) {
  const AttentionOperands operands = attention_operands(program, site);
  // The widest word's check of a row in `scheme` against int8 codes over runs of `run` terms.
  const auto check = [&](const Scheme& scheme, int64_t run) {
    AccumulatorCheck widest;
    for (int word = 0; word < word_count(scheme.words); ++word) {
      const AccumulatorCheck one = holds_accumulator(operands_of_codes(scheme, word, run), contract.accumulator_bits);
      if (word == 0 || one.bits_needed > widest.bits_needed) widest = one;
    }
    return widest;
  };
  AttentionAccumulators out;
  if (forms.queries.scheme && forms.keys.scheme) {
    const int64_t row = operands.rows[0];
    out.scores = check(*forms.queries.scheme, std::min(block_of(forms.queries, row), block_of(forms.keys, row)));
  }
  if (forms.weights.scheme && forms.values.scheme) {
    out.weighted = check(*forms.weights.scheme, block_of(forms.weights, operands.rows[3]));
  }
  return out;
}

std::string forms_text(const AttentionNumerics& forms) {
  const auto form = [](const Taken& t) { return t.float_format ? std::string(float_format_name(*t.float_format)) : scheme_text(*t.scheme); };
  return "queries " + form(forms.queries) + ", keys " + form(forms.keys) + ", values " + form(forms.values) + ", weights " +
         form(forms.weights) + (forms.values.scheme ? " times the value rows' scales" : "");
}

std::string attention_text(const ir::Program& program, const Contract& contract) {
  std::string text;
  for (const AttentionSite& site : attention_sites(program)) {
    const ir::Function& f = program.functions[site.function];
    const std::optional<AttentionNumerics> forms = contract.attention_of(site.name);
    text += "attention " + site.name + " · " + f.site_name(site.weighted) + "  " +
            (forms ? forms_text(*forms) : std::string("on its values as kept")) + "\n";
    if (!forms) continue;
    const AttentionAccumulators sums = attention_accumulators(program, site, *forms, contract);
    for (const auto& [what, sum] : {std::pair{"scores", &sums.scores}, {"weighted sum", &sums.weighted}}) {
      if (!*sum) continue;
      text += std::string("  its ") + what + " in integers: " + std::to_string((*sum)->bits_needed) + " accumulator bits" +
              ((*sum)->holds ? "" : "; " + std::to_string(contract.accumulator_bits) + " do not hold them: " + (*sum)->reason) + "\n";
    }
  }
  return text.empty() ? "no attention\n" : text;
}

void insert_attention(Edit& edit, const Contract& contract, const std::vector<AttentionSite>& sites, uint32_t function) {
  for (const AttentionSite& site : sites) {
    const std::optional<AttentionNumerics> forms = contract.attention_of(site.name);
    if (site.function != function || !forms) continue;
    take_rows(edit, site, 0, forms->queries);
    take_rows(edit, site, 1, forms->keys);
    take_weighted_sum(edit, site, *forms);
  }
}

}  // namespace presk::numerics
