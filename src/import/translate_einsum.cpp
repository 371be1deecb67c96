// Einsum (docs/import.md): any number of operands, each label once per operand, with an
// ellipsis. The ellipsis becomes labels of its own (right-aligned across operands, each of those
// axes of one extent in every operand that has it); the implicit output (no `->`) is the
// ellipsis's labels, then the labels seen once, in alphabetical order. One operand is a sum
// over the labels the output drops, then a transpose; two operands one `einsum`; n operands n − 1
// pairwise contractions, left to right, each keeping the labels that the output or a later
// operand reads (a sum of products in another association: exact in the reference, and each
// contraction rounded once by a realization). A label twice in one operand (a diagonal,
// `"...ii->...i"`, a trace `"ii->"`) first takes that diagonal: the operand where the two indices
// agree and 0 elsewhere, summed over the second axis (one value and zeros: exact).
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "import/builder.h"

namespace presk::onnx_import {
namespace {

std::string int_list(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  return text + "]";
}

// One operand with labels `in` (each once): a sum over the labels `out` drops, then a transpose
// to the output's order.
Value einsum_one(Builder& builder, const Value& x, const std::string& in, const std::string& out) {
  std::vector<int64_t> summed, perm;
  std::string kept;
  Shape kept_shape, shape;
  for (size_t i = 0; i < in.size(); ++i) {
    if (out.find(in[i]) == std::string::npos) {
      summed.push_back(static_cast<int64_t>(i));
    } else {
      kept += in[i];
      kept_shape.push_back(x.shape[i]);
    }
  }
  Value value = x;
  if (!summed.empty()) {
    Shape reduced = x.shape;
    for (int64_t axis : summed) reduced[static_cast<size_t>(axis)] = Extent{};
    const std::string over = kept.empty() ? ")" : ", axis: " + int_list(summed) + ")";
    value = builder.emit("sum(" + x.expr + over, kept.empty() ? Shape{} : reduced, Kind::R, "_sum");
    if (!kept.empty()) value = reshaped(builder, value, kept_shape, "_kept");
  }
  for (char c : out) {
    perm.push_back(static_cast<int64_t>(kept.find(c)));
    shape.push_back(kept_shape[kept.find(c)]);
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  return identity ? value : builder.emit("transpose(" + value.expr + ", " + int_list(perm) + ")", shape);
}

// The operand x (labels `labels`) with each label that appears twice reduced to its diagonal:
// `sum(where(iota(…, axis: j) == iota(…, axis: k), x, 0.0), axis: [k])` (the two iotas of extent
// n on axes j and k, 1 elsewhere, compared: true where the indices agree), the axis k dropped.
// A label three times, or two extents that differ, is E1326.
Value take_diagonals(Builder& builder, Value x, std::string& labels) {
  for (size_t j = 0; j < labels.size(); ++j) {
    const size_t k = labels.find(labels[j], j + 1);
    if (k == std::string::npos) continue;
    if (!(x.shape[j] == x.shape[k]) || labels.find(labels[j], k + 1) != std::string::npos) {
      builder.fail("E1326").hint("a label at most twice in one operand, on axes of one extent")
          << "Einsum's label '" << labels[j] << "' names axes " << j << " and " << k << " of extents "
          << extent_text(x.shape[j]) << " and " << extent_text(x.shape[k]) << (labels.find(labels[j], k + 1) == std::string::npos ? "" : " and more");
    }
    Shape laid(x.shape.size(), Extent{});  // n on axes j and k, 1 elsewhere
    laid[j] = laid[k] = x.shape[j];
    const std::string extents = shape_list(laid);
    const std::string agree = "iota(" + extents + ", axis: " + std::to_string(j) + ") == iota(" + extents + ", axis: " +
                              std::to_string(k) + ")";
    const std::string suffix = "_diagonal" + std::to_string(j);
    Value masked = builder.emit("where(" + agree + ", " + x.expr + ", 0.0)", x.shape, Kind::R, suffix + "_masked");
    Shape reduced = x.shape;
    reduced[k] = Extent{};
    Value summed = builder.emit("sum(" + masked.expr + ", axis: [" + std::to_string(k) + "])", reduced, Kind::R, suffix);
    reduced.erase(reduced.begin() + static_cast<std::ptrdiff_t>(k));
    x = reshaped(builder, summed, reduced, suffix + "_axes");
    labels.erase(k, 1);
  }
  return x;
}

struct Equation {
  std::vector<std::string> inputs;  // one label string per operand, the ellipsis spelled out
  std::string output;
};

// The equation with each ellipsis replaced by labels of its own ('0' + k: not letters, so they
// never clash), right-aligned: an operand of rank r whose labels name n axes has r − n of them.
// Empty inputs: not of that form (wrong ranks, a malformed ellipsis).
Equation expand(const std::string& equation, const std::vector<const Value*>& operands) {
  Equation parsed;
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  size_t start = 0;
  for (size_t comma = lhs.find(','); ; comma = lhs.find(',', start)) {
    parsed.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (parsed.inputs.size() != operands.size()) return {};
  size_t ellipsis_rank = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    std::string& labels = parsed.inputs[i];
    const size_t at = labels.find("...");
    const size_t named = labels.size() - (at == std::string::npos ? 0 : 3);
    if (operands[i]->shape.size() < named || (at == std::string::npos && operands[i]->shape.size() != named)) return {};
    if (at != std::string::npos && labels.find("...", at + 3) != std::string::npos) return {};
    const size_t hidden = operands[i]->shape.size() - named;
    ellipsis_rank = std::max(ellipsis_rank, hidden);
    std::string spelled;
    for (size_t k = 0; k < hidden; ++k) spelled += static_cast<char>('0' + (9 - (hidden - 1 - k)));  // right-aligned
    if (at != std::string::npos) labels = labels.substr(0, at) + spelled + labels.substr(at + 3);
  }
  std::string all_ellipsis;
  for (size_t k = 0; k < ellipsis_rank; ++k) all_ellipsis += static_cast<char>('0' + (9 - (ellipsis_rank - 1 - k)));
  if (arrow != std::string::npos) {
    parsed.output = equation.substr(arrow + 2);
    const size_t at = parsed.output.find("...");
    if (at != std::string::npos) parsed.output = parsed.output.substr(0, at) + all_ellipsis + parsed.output.substr(at + 3);
  } else {
    std::map<char, int> seen;
    for (const std::string& labels : parsed.inputs) for (char c : labels) if (std::isalpha(static_cast<unsigned char>(c))) seen[c] += 1;
    parsed.output = all_ellipsis;
    for (const auto& [label, count] : seen) if (count == 1) parsed.output += label;
  }
  return parsed;
}

// Checks the expanded equation: labels once per operand and in the output, every output label in
// an operand, one extent per label; and maps each label to presk's a–z (at most 26).
bool valid(const Equation& eq, const std::vector<const Value*>& operands, std::map<char, char>& renamed,
           std::map<char, Extent>& extents) {
  if (eq.inputs.empty()) return false;  // a '.' left over fails the label check below
  for (size_t i = 0; i <= eq.inputs.size(); ++i) {
    const std::string& labels = i < eq.inputs.size() ? eq.inputs[i] : eq.output;
    for (size_t j = 0; j < labels.size(); ++j) {
      const char c = labels[j];
      if (std::count(labels.begin(), labels.end(), c) != 1 || !(std::isalnum(static_cast<unsigned char>(c)))) return false;
      if (i == eq.inputs.size()) {
        if (extents.count(c) == 0) return false;
        continue;
      }
      const Extent& extent = operands[i]->shape[j];
      auto [it, fresh] = extents.emplace(c, extent);
      if (!fresh && !(it->second == extent)) return false;
      if (renamed.count(c) == 0) renamed[c] = static_cast<char>('a' + renamed.size());
    }
  }
  return renamed.size() <= 26;
}

void translate_einsum(Builder& builder) {
  builder.accept_attributes({"equation"});
  std::string equation;
  for (char c : builder.string_attribute("equation", "")) if (c != ' ') equation += c;
  std::vector<Value> values;
  std::vector<const Value*> operands;
  for (size_t i = 0; i < builder.input_count(); ++i) values.push_back(real_input(builder, static_cast<int>(i)));
  for (const Value& value : values) operands.push_back(&value);
  Equation eq = expand(equation, operands);
  for (size_t i = 0; i < eq.inputs.size(); ++i) values[i] = take_diagonals(builder, values[i], eq.inputs[i]);
  std::map<char, char> renamed;
  std::map<char, Extent> extents;
  if (!valid(eq, operands, renamed, extents)) {
    builder.fail("E1326").hint("each label once in the output and at most twice per operand, every output label in an "
                               "operand, ranks and extents as the operands'")
        << "Einsum \"" << printable(equation) << "\" is not a contraction presk imports";
  }
  auto spelled = [&](const std::string& labels) {
    std::string text;
    for (char c : labels) text += renamed.at(c);
    return text;
  };
  auto shape_of = [&](const std::string& labels) {
    Shape shape;
    for (char c : labels) shape.push_back(extents.at(c));
    return shape;
  };
  if (operands.size() == 1) return builder.define(0, einsum_one(builder, values[0], eq.inputs[0], eq.output));
  Value acc = values[0];
  std::string acc_labels = eq.inputs[0];
  for (size_t i = 1; i < values.size(); ++i) {
    std::string result = eq.output;
    if (i + 1 < values.size()) {  // keep what the output or a later operand reads
      std::set<char> later(eq.output.begin(), eq.output.end());
      for (size_t j = i + 1; j < values.size(); ++j) later.insert(eq.inputs[j].begin(), eq.inputs[j].end());
      result.clear();
      for (char c : acc_labels + eq.inputs[i]) {
        if (later.count(c) > 0 && result.find(c) == std::string::npos) result += c;
      }
    }
    const std::string spec = spelled(acc_labels) + "," + spelled(eq.inputs[i]) + "->" + spelled(result);
    acc = builder.emit("einsum(\"" + spec + "\", " + acc.expr + ", " + values[i].expr + ")", shape_of(result), Kind::R,
                       i + 1 < values.size() ? "_pair" + std::to_string(i) : "");
    acc_labels = result;
  }
  builder.define(0, acc);
}

}  // namespace

void add_einsum_translators(std::map<std::string, Translator>& table) { table["Einsum"] = translate_einsum; }

}  // namespace presk::onnx_import
