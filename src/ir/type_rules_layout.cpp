// The typing rules of contraction (einsum specs) and of the layout ops, and the table of
// which attribute fields each op reads.
#include <array>
#include <cctype>
#include <charconv>

#include "ir/type_rules_detail.h"

namespace presk::ir {
namespace detail {
namespace {

bool is_index_letter(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}

// The subscripts of an einsum spec "ab,bc->ac": the two inputs and the output.
struct Subscripts {
  std::string inputs[2];
  std::string output;
};

std::optional<Subscripts> split_spec(const std::string& spec) {
  size_t arrow = spec.find("->");
  if (arrow == std::string::npos) return std::nullopt;
  std::string left = spec.substr(0, arrow);
  size_t comma = left.find(',');
  if (comma == std::string::npos || left.find(',', comma + 1) != std::string::npos) {
    return std::nullopt;
  }
  Subscripts parts{{left.substr(0, comma), left.substr(comma + 1)}, spec.substr(arrow + 2)};
  for (const std::string* text : {&parts.inputs[0], &parts.inputs[1], &parts.output}) {
    for (size_t i = 0; i < text->size(); ++i) {
      if (!is_index_letter((*text)[i])) return std::nullopt;
      if (text->find((*text)[i], i + 1) != std::string::npos) return std::nullopt;
    }
  }
  return parts;
}

}  // namespace

// Each letter names one index; its extent must agree wherever it appears; the output
// lists distinct letters that appear in an input. Letters missing from the output are summed.
InferredType contract_rule(const Type& a, const Type& b, const Attrs& attrs) {
  auto parts = split_spec(attrs.spec);
  if (!parts) {
    return fail("contract spec \"" + attrs.spec +
                "\" is not of the form \"ab,bc->ac\" (letters, each once per operand)");
  }
  if (a.kind != ElemKind::Real || b.kind != ElemKind::Real) {
    return fail("contract needs R operands, given " + describe(a) + " and " + describe(b));
  }
  std::array<int64_t, 128> extent;
  extent.fill(-1);
  const Type* operands[2] = {&a, &b};
  for (int k = 0; k < 2; ++k) {
    const std::string& letters = parts->inputs[k];
    if (static_cast<int>(letters.size()) != operands[k]->rank()) {
      return fail("contract spec \"" + attrs.spec + "\" gives operand " + std::to_string(k) +
                  " rank " + std::to_string(letters.size()) + ", but it is " +
                  describe(*operands[k]));
    }
    for (size_t i = 0; i < letters.size(); ++i) {
      int64_t& known = extent[static_cast<unsigned char>(letters[i])];
      int64_t here = operands[k]->shape[i];
      if (known >= 0 && known != here) {
        return fail(std::string("contract index `") + letters[i] + "` has extent " +
                    std::to_string(known) + " and " + std::to_string(here));
      }
      known = here;
    }
  }
  std::vector<int64_t> shape;
  for (char letter : parts->output) {
    int64_t known = extent[static_cast<unsigned char>(letter)];
    if (known < 0) {
      return fail(std::string("contract output index `") + letter + "` is in no operand");
    }
    shape.push_back(known);
  }
  return give(ElemKind::Real, std::move(shape));
}

namespace {

InferredType reshape_rule(const Type& operand, const TypeRuleContext& context) {
  if (!context.declared) return fail("reshape needs its declared result type");
  const Type& to = *context.declared;
  if (to.kind != operand.kind || to.element_count() != operand.element_count()) {
    return fail("reshape from " + describe(operand) + " to " + describe(to) +
                " changes the element kind or count");
  }
  return give(to.kind, to.shape);
}

InferredType broadcast_rule(const Type& operand, const TypeRuleContext& context) {
  if (!context.declared) return fail("broadcast needs its declared result type");
  const Type& to = *context.declared;
  auto joined = broadcast_shapes(operand.shape, to.shape);
  if (to.kind != operand.kind || operand.rank() > to.rank() || !joined || *joined != to.shape) {
    return fail("cannot broadcast " + describe(operand) + " to " + describe(to));
  }
  return give(to.kind, to.shape);
}

InferredType transpose_rule(const Type& operand, const Attrs& attrs) {
  const std::vector<int64_t>& permutation = attrs.axes;
  std::vector<bool> seen(static_cast<size_t>(operand.rank()), false);
  bool valid = static_cast<int>(permutation.size()) == operand.rank();
  std::vector<int64_t> shape;
  for (size_t i = 0; valid && i < permutation.size(); ++i) {
    int64_t from = permutation[i];
    valid = from >= 0 && from < operand.rank() && !seen[static_cast<size_t>(from)];
    if (valid) {
      seen[static_cast<size_t>(from)] = true;
      shape.push_back(operand.shape[static_cast<size_t>(from)]);
    }
  }
  if (!valid) {
    return fail("transpose axes=" + shape_text(permutation) + " is not a permutation of the " +
                std::to_string(operand.rank()) + " axes of " + describe(operand));
  }
  return give(operand.kind, std::move(shape));
}

// slice: for each listed axis (strictly increasing), 0 ≤ start ≤ stop ≤ extent.
InferredType slice_rule(const Type& operand, const Attrs& attrs) {
  if (attrs.axes.empty() || attrs.starts.size() != attrs.axes.size() ||
      attrs.stops.size() != attrs.axes.size()) {
    return fail("slice needs axes, starts and stops of one common, nonzero length");
  }
  std::vector<int64_t> shape = operand.shape;
  int64_t previous = -1;
  for (size_t i = 0; i < attrs.axes.size(); ++i) {
    int64_t axis = attrs.axes[i];
    if (axis <= previous || axis >= operand.rank()) {
      return fail("slice axes=" + shape_text(attrs.axes) + " must be strictly increasing axes of " +
                  describe(operand));
    }
    previous = axis;
    int64_t extent = operand.shape[static_cast<size_t>(axis)];
    int64_t start = attrs.starts[i];
    int64_t stop = attrs.stops[i];
    if (start < 0 || start > stop || stop > extent) {
      return fail("slice range " + std::to_string(start) + ":" + std::to_string(stop) +
                  " of axis " + std::to_string(axis) + " is outside 0:" + std::to_string(extent));
    }
    shape[static_cast<size_t>(axis)] = stop - start;
  }
  return give(operand.kind, std::move(shape));
}

// concat: equal kinds and ranks, equal extents except along the axis, which add up.
InferredType concat_rule(const std::vector<Type>& operands, const Attrs& attrs) {
  const Type& first = operands[0];
  if (auto problem = check_axis(attrs, first.rank(), "concat")) return fail(*problem);
  auto axis = static_cast<size_t>(attrs.axes[0]);
  std::vector<int64_t> shape = first.shape;
  shape[axis] = 0;
  for (const Type& operand : operands) {
    std::vector<int64_t> others = operand.shape;
    if (operand.kind != first.kind || operand.rank() != first.rank()) {
      return fail("concat operands differ: " + describe(first) + " and " + describe(operand));
    }
    others[axis] = first.shape[axis];
    if (others != first.shape) {
      return fail("concat operands " + describe(first) + " and " + describe(operand) +
                  " differ off axis " + std::to_string(axis));
    }
    if (operand.shape[axis] > (int64_t{1} << 62) - shape[axis]) {
      return fail("concat's result has an axis longer than 2^62");
    }
    shape[axis] += operand.shape[axis];
  }
  return give(first.kind, std::move(shape));
}

}  // namespace

InferredType layout_rule(Op op, const std::vector<Type>& operands, const Attrs& attrs,
                         const TypeRuleContext& context) {
  switch (op) {
    case Op::reshape:
      return reshape_rule(operands[0], context);
    case Op::broadcast:
      return broadcast_rule(operands[0], context);
    case Op::transpose:
      return transpose_rule(operands[0], attrs);
    case Op::slice:
      return slice_rule(operands[0], attrs);
    case Op::concat:
      return concat_rule(operands, attrs);
    case Op::causal_mask:
      if (operands[0].kind != ElemKind::Real || operands[0].rank() < 2) {
        return fail("causal_mask needs R with at least two axes, found " + describe(operands[0]));
      }
      if (!attrs.literal.empty() && attrs.literal != "0") {
        return fail("causal_mask fills −∞ above the diagonal, or +0 with literal=\"0\"; given literal=\"" +
                    attrs.literal + "\"");
      }
      return give(ElemKind::Real, operands[0].shape);
    case Op::cache_write:
      return cache_write_rule(operands, attrs);
    case Op::causal_mask_at:
      return causal_mask_at_rule(operands);
    default:
      return fail(std::string(op_name(op)) + " is not a layout op");
  }
}

}  // namespace detail

uint8_t attr_fields_read(Op op) {
  auto field = [](AttrField f) { return static_cast<uint8_t>(f); };
  switch (op) {
    case Op::literal:
    case Op::causal_mask:  // its fill above the diagonal: "" (−∞) or "0"
      return field(AttrField::Literal);
    case Op::param:
      return field(AttrField::Path);
    case Op::dropout:
      return field(AttrField::Rate) | field(AttrField::Path);
    case Op::contract:
      return field(AttrField::Spec);
    case Op::slice:
      return field(AttrField::Axes) | field(AttrField::Starts) | field(AttrField::Stops);
    case Op::quantize:  // the last axis, the block, the scheme's scale/words
      return field(AttrField::Axes) | field(AttrField::Starts) | field(AttrField::Spec);
    case Op::call:
    case Op::fold:
    case Op::fold_trace:
    case Op::fold_vjp:
      return field(AttrField::Callee) | field(AttrField::Path);
    case Op::scan:
      return field(AttrField::Callee) | field(AttrField::Path) | field(AttrField::Axes);
    case Op::cache_write:
    case Op::iota:
    case Op::sum:
    case Op::mean:
    case Op::reduce_max:
    case Op::softmax:
    case Op::log_softmax:
    case Op::transpose:
    case Op::concat:
    case Op::get:
      return field(AttrField::Axes);
    default:
      return 0;
  }
}

std::string unread_attr_fields(Op op, const Attrs& attrs) {
  const std::pair<AttrField, bool> set[] = {
      {AttrField::Axes, !attrs.axes.empty()},   {AttrField::Starts, !attrs.starts.empty()},
      {AttrField::Stops, !attrs.stops.empty()}, {AttrField::Literal, !attrs.literal.empty()},
      {AttrField::Spec, !attrs.spec.empty()},   {AttrField::Callee, !attrs.callee.empty()},
      {AttrField::Path, !attrs.path.empty()},   {AttrField::Rate, attrs.rate != 0}};
  const char* names[] = {"axes", "starts", "stops", "literal", "spec", "callee", "path", "rate"};
  std::string unread;
  uint8_t read = attr_fields_read(op);
  for (size_t i = 0; i < std::size(set); ++i) {
    if (set[i].second && !(read & static_cast<uint8_t>(set[i].first))) {
      unread += (unread.empty() ? "" : ", ") + std::string(names[i]);
    }
  }
  return unread;
}

bool is_decimal_literal(const std::string& text) {
  size_t i = 0;
  auto digits = [&] {
    size_t from = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    return i > from;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (!digits()) return false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

bool is_real_literal(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return is_decimal_literal(text);
  const std::string numerator = text.substr(0, slash), denominator = text.substr(slash + 1);
  const size_t exponent = denominator.find_first_of("eE");
  return is_decimal_literal(numerator) && is_decimal_literal(denominator) && denominator[0] != '-' &&
         denominator.substr(0, exponent).find_first_of("123456789") != std::string::npos;
}

bool is_integer_literal(const std::string& text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size() && text[0] != '+';
}

}  // namespace presk::ir
