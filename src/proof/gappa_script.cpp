// The statement (gappa_script.h): the entry's lets walked as the reference interpreter walks them
// (calls inlined in program order), every real value a list of scalars, every scalar a rounded
// expression as the native kernels compute it (docs/semantics.md) beside its exact counterpart
// of the same shape — Gappa relates the two term by term, so the two must be written alike.
#include "proof/gappa_script.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "exec/reference/contraction_plan.h"
#include "exec/native/numeric.h"
#include "exec/reference/ops.h"
#include "precision/bound_rules.h"
#include "support/diagnostics.h"

namespace presk::proof {
namespace {

using exec::native::OrderKind;
using exec::native::RealType;
using Tensor = std::vector<int32_t>;  // a real value's scalars, row-major

int width(RealType type) {
  return type == RealType::f64 ? 3 : type == RealType::f32 ? 2 : 1;
}
const char* rounding(RealType type) {
  return type == RealType::f64 ? "rnd64" : type == RealType::f32 ? "rnd32" : "rndbf";
}
// A bf16 site computes in f32 and rounds once to bf16 when it stores.
RealType compute_type(RealType type) {
  return type == RealType::bf16 ? RealType::f32 : type;
}
std::string stored(RealType type, const std::string& expression) {
  if (type == RealType::bf16) return fmt::format("rndbf(rnd32({}))", expression);
  return fmt::format("{}({})", rounding(type), expression);
}
std::string r(int32_t id) {
  return fmt::format("r{}", id);
}
std::string e(int32_t id) {
  return fmt::format("E{}", id);
}

[[noreturn]] void no_form(const std::string& site, const std::string& what) {
  user_error("E1600")
      << "site " << site << ": " << what
      << " has no Gappa form in presk gappa (it states + − × ÷ √ rsqrt, exp, sums, means, max, "
         "softmax, contractions, layout ops, literals, parameters and calls)";
  std::abort();  // unreachable: the builder above throws
}
// A scalar of no site: a partial sum, a conversion at an edge, a constant.
Scalar temporary(std::string rounded, std::string exact, std::vector<int32_t> operands) {
  return Scalar{std::move(rounded), std::move(exact), std::move(operands), "", 0, -1, false};
}

class Builder {
 public:
  Builder(const ir::Program& program, const exec::native::Realization& realization,
          const reference::ParameterStore& parameters, std::string goal_site)
      : program_(program),
        realization_(realization),
        parameters_(parameters),
        goal_site_(std::move(goal_site)) {}

  Statement statement;

  std::vector<Tensor> run(const ir::Function& function, const std::string& context,
                          const std::vector<Tensor>& args);
  Tensor argument(const ir::Function& entry, size_t index);

 private:
  int32_t add(Scalar scalar, RealType type) {
    statement.scalars.push_back(std::move(scalar));
    types_.push_back(type);
    return static_cast<int32_t>(statement.scalars.size() - 1);
  }
  // The scalar `id` as an operand of a site of type `type`: a wider one rounded once at the edge.
  int32_t enter(int32_t id, RealType type) {
    if (width(types_[id]) <= width(type)) return id;
    return add(temporary(fmt::format("{}({})", rounding(type), r(id)), e(id), {id}), type);
  }
  Tensor let_value(const ir::Function& function, uint32_t index, const std::string& context,
                   const std::vector<Tensor>& args, const std::vector<Tensor>& lets);
  Tensor elementwise(const ir::Let& let, const std::vector<Tensor>& in,
                     const std::vector<ir::Type>& types, RealType type);
  Tensor reduction(const ir::Let& let, const Tensor& x, const ir::Type& x_type, RealType type);
  // The terms of each output element of a reduction of `x` over let.attrs.axes, entered in type.
  std::vector<std::vector<int32_t>> reduced_terms(const ir::Let& let, const Tensor& x,
                                                  const ir::Type& x_type, RealType type,
                                                  std::vector<int64_t>* group = nullptr);
  Tensor softmax(const ir::Let& let, const Tensor& x, const ir::Type& x_type, RealType type);
  // exp of `a` and the exact max of `members`, stated through their operands' proven errors
  // (Nonlinear); a sum of the exps of every member minus their max is at least 1.
  int32_t exp_of(int32_t a, RealType type, Scalar scalar);
  int32_t max_of(const std::vector<int32_t>& members, RealType type, Scalar scalar,
                 const std::string& range_site);
  void note_shift(int32_t difference, int32_t x, int32_t m);
  void note_sum_floor(const std::vector<int32_t>& terms, int32_t sum);
  Tensor contraction(const ir::Let& let, const Tensor& x, const Tensor& w,
                     const std::vector<ir::Type>& types, RealType type);
  Tensor layout(const ir::Let& let, const Tensor& x, const ir::Type& x_type);
  Tensor parameter(const ir::Let& let, const std::string& context);
  // Adds `terms` (products when `pairs`) in the realization's order, in `type`'s compute type.
  int32_t ordered_sum(const std::vector<std::pair<int32_t, int32_t>>& terms, bool pairs,
                      RealType type);
  int32_t chain(const std::vector<std::pair<int32_t, int32_t>>& terms, bool pairs,
                RealType compute);

  const ir::Program& program_;
  const exec::native::Realization& realization_;
  const reference::ParameterStore& parameters_;
  std::string goal_site_;
  std::vector<RealType> types_;
  std::map<std::string, int64_t> occurrences_;
  std::string site_;  // the site being stated, for the scalars it adds
  int64_t occurrence_ = 0;
  std::map<int32_t, std::pair<int32_t, int32_t>> shifts_;  // x − max(…x…): {the max, x}
  std::map<int32_t, std::pair<int32_t, int32_t>> exp_shifts_;  // exp of such: {the max, x}
  std::map<int32_t, std::vector<int32_t>> max_members_;
};

Tensor Builder::argument(const ir::Function& entry, size_t index) {
  const ir::Type& type = entry.argument_types[index];
  const std::string site = "argument " + entry.argument_names[index];
  if (type.kind != ir::ElemKind::Real || type.is_tuple())
    no_form(site, "an integer or tuple argument");
  const RealType into = realization_.default_type;
  Tensor tensor;
  for (int64_t i = 0; i < type.element_count(); ++i) {
    const auto id = static_cast<int32_t>(statement.scalars.size());
    const std::string rounded = into == RealType::bf16
                                    ? fmt::format("rndbf({})", e(id))
                                    : fmt::format("{}({})", rounding(into), e(id));
    tensor.push_back(add({rounded, "", {}, site, 0, i, false}, into));
  }
  return tensor;
}

std::vector<Tensor> Builder::run(const ir::Function& function, const std::string& context,
                                 const std::vector<Tensor>& args) {
  std::vector<Tensor> lets(function.lets.size());
  for (uint32_t i = 0; i < function.lets.size(); ++i)
    lets[i] = let_value(function, i, context, args, lets);
  std::vector<Tensor> results;
  for (ir::ValueRef ref : function.results)
    results.push_back(ref.kind == ir::ValueRef::Kind::Argument ? args[ref.index] : lets[ref.index]);
  return results;
}

Tensor Builder::let_value(const ir::Function& function, uint32_t index, const std::string& context,
                          const std::vector<Tensor>& args, const std::vector<Tensor>& lets) {
  const ir::Let& let = function.lets[index];
  const std::string site = function.site_name(index);
  const int64_t occurrence = occurrences_[site]++;
  std::vector<Tensor> in;
  std::vector<ir::Type> types;
  for (ir::ValueRef ref : let.operands) {
    in.push_back(ref.kind == ir::ValueRef::Kind::Argument ? args[ref.index] : lets[ref.index]);
    types.push_back(function.type_of(ref));
  }
  Tensor value;
  if (let.op == ir::Op::call) {
    const ir::Function* callee = program_.find_function(let.attrs.callee);
    internal_assert(callee != nullptr);
    std::vector<Tensor> results = run(*callee, ir::join_path(context, let.attrs.path), in);
    if (results.size() != 1) no_form(site, "a call with several results");
    value = results[0];
  } else {
    if (let.type.kind != ir::ElemKind::Real || let.type.is_tuple())
      no_form(site, fmt::format("`{}` (not real-valued)", ir::op_name(let.op)));
    site_ = site;
    occurrence_ = occurrence;
    const RealType type = realization_.site_type(site);
    switch (ir::op_info(let.op).family) {
      case ir::OpFamily::Source:
      case ir::OpFamily::Elementwise:
        value =
            let.op == ir::Op::param ? parameter(let, context) : elementwise(let, in, types, type);
        break;
      case ir::OpFamily::Reduction:
        value = reduction(let, in.at(0), types.at(0), type);
        break;
      case ir::OpFamily::Contraction:
        value = contraction(let, in.at(0), in.at(1), types, type);
        break;
      case ir::OpFamily::Normalization:
        if (let.op != ir::Op::softmax) no_form(site, fmt::format("`{}`", ir::op_name(let.op)));
        value = softmax(let, in.at(0), types.at(0), type);
        break;
      case ir::OpFamily::Layout:
        value = layout(let, in.at(0), types.at(0));
        for (int32_t& id : value) id = enter(id, type);
        break;
      default:
        no_form(site, fmt::format("`{}`", ir::op_name(let.op)));
    }
  }
  if (site == goal_site_ && occurrence == 0) {
    const int64_t row = let.type.shape.empty() ? 1 : let.type.shape.back();
    statement.goals.assign(
        value.begin(), value.begin() + std::min<int64_t>(row, static_cast<int64_t>(value.size())));
  }
  return value;
}

Tensor Builder::parameter(const ir::Let& let, const std::string& context) {
  const std::string path = ir::join_path(context, let.attrs.path);
  if (realization_.param_quant(path) != nullptr)
    no_form(site_, "the integer weights of `" + path + "`");
  const std::vector<double>* values = parameters_.find(path);
  internal_assert(values != nullptr);
  if (static_cast<int64_t>(values->size()) != let.type.element_count())
    no_form(site_, "a stacked parameter (a fold)");
  const RealType type = realization_.param_type(path);
  Tensor tensor;
  for (double v : *values) {
    if (!std::isfinite(v)) no_form(site_, "a non-finite parameter value of `" + path + "`");
    tensor.push_back(
        add(temporary(fmt::format("{}({})", rounding(type), gappa_number(v)), gappa_number(v), {}),
            type));
  }
  return tensor;
}

Tensor Builder::elementwise(const ir::Let& let, const std::vector<Tensor>& in,
                            const std::vector<ir::Type>& types, RealType type) {
  Tensor out;
  const int64_t count = let.type.element_count();
  if (let.op == ir::Op::literal) {
    std::string text = let.attrs.literal;
    if (text.find('/') != std::string::npos) text = "(" + text + ")";
    if (text.find_first_of("in") != std::string::npos) no_form(site_, "a non-finite literal");
    const int32_t id =
        add({fmt::format("{}({})", rounding(type), text), text, {}, site_, occurrence_, 0, false},
            type);
    return Tensor(count, id);
  }
  std::vector<reference::BroadcastMap> maps;
  for (const ir::Type& t : types) maps.emplace_back(let.type.shape, t.shape);
  const RealType c = compute_type(type);
  for (int64_t i = 0; i < count; ++i) {
    std::vector<int32_t> ops;
    for (size_t k = 0; k < in.size(); ++k) ops.push_back(enter(in[k][maps[k](i)], type));
    const std::string a = r(ops[0]), A = e(ops[0]);
    const std::string b = ops.size() > 1 ? r(ops[1]) : "", B = ops.size() > 1 ? e(ops[1]) : "";
    Scalar s{"", "", ops, site_, occurrence_, i, false};
    switch (let.op) {
      case ir::Op::add:
        s.rounded = stored(type, a + " + " + b), s.exact = A + " + " + B;
        break;
      case ir::Op::sub:
        s.rounded = stored(type, a + " - " + b), s.exact = A + " - " + B;
        note_shift(static_cast<int32_t>(statement.scalars.size()), ops[0], ops[1]);
        break;
      case ir::Op::exp:
        out.push_back(exp_of(ops[0], type, std::move(s)));
        continue;
      case ir::Op::mul:
        s.rounded = stored(type, a + " * " + b), s.exact = A + " * " + B;
        break;
      case ir::Op::div:
        s.rounded = stored(type, a + " / " + b), s.exact = A + " / " + B;
        statement.quotients[static_cast<int32_t>(statement.scalars.size())] = {ops[0], ops[1]};
        break;
      case ir::Op::neg:
        s.rounded = "-" + a, s.exact = "-" + A;
        break;
      case ir::Op::abs:
        s.rounded = "|" + a + "|", s.exact = "|" + A + "|";
        break;
      case ir::Op::sqrt:
        s.rounded = stored(type, "sqrt(" + a + ")"), s.exact = "sqrt(" + A + ")";
        break;
      case ir::Op::rsqrt:  // the correctly rounded √, then a correctly rounded division
        s.rounded = stored(type, fmt::format("1 / {}(sqrt({}))", rounding(c), a));
        s.exact = "1 / sqrt(" + A + ")";
        s.rsqrt = true;
        break;
      default:
        no_form(site_, fmt::format("`{}`", ir::op_name(let.op)));
    }
    out.push_back(add(std::move(s), type));
  }
  return out;
}

int32_t Builder::chain(const std::vector<std::pair<int32_t, int32_t>>& terms, bool pairs,
                       RealType c) {
  auto product = [&](size_t k, bool exact) {
    const auto [a, b] = terms[k];
    return exact ? e(a) + " * " + e(b) : r(a) + " * " + r(b);
  };
  int32_t s;
  if (pairs) {  // fma(a₀, b₀, +0) rounds the first product; then s ← fma(aₖ, bₖ, s)
    s = add(temporary(fmt::format("{}({})", rounding(c), product(0, false)), product(0, true),
                      {terms[0].first, terms[0].second}),
            c);
  } else {
    s = terms[0].first;
  }
  for (size_t k = 1; k < terms.size(); ++k) {
    const auto [a, b] = terms[k];
    if (pairs) {
      s = add(temporary(fmt::format("{}({} + {})", rounding(c), product(k, false), r(s)),
                        product(k, true) + " + " + e(s), {a, b, s}),
              c);
    } else {
      s = add(temporary(fmt::format("{}({} + {})", rounding(c), r(s), r(a)), e(s) + " + " + e(a),
                        {s, a}),
              c);
    }
  }
  return s;
}

int32_t Builder::ordered_sum(const std::vector<std::pair<int32_t, int32_t>>& terms, bool pairs,
                             RealType type) {
  const RealType c = compute_type(type);
  const exec::native::Order& order = realization_.order;
  const size_t n = order.kind == OrderKind::interleaved
                       ? std::min<size_t>(std::max<int64_t>(order.partials, 1), terms.size())
                       : 1;
  std::vector<int32_t> partials;
  for (size_t p = 0; p < n; ++p) {
    std::vector<std::pair<int32_t, int32_t>> own;
    for (size_t m = p; m < terms.size(); m += n) own.push_back(terms[m]);
    partials.push_back(chain(own, pairs, c));
  }
  while (partials.size() > 1) {  // p[r] ← p[2r] + p[2r+1]; an odd last one moves up
    std::vector<int32_t> next;
    for (size_t k = 0; k + 1 < partials.size(); k += 2) {
      const int32_t a = partials[k], b = partials[k + 1];
      next.push_back(add(temporary(fmt::format("{}({} + {})", rounding(c), r(a), r(b)),
                                   e(a) + " + " + e(b), {a, b}),
                         c));
    }
    if (partials.size() % 2 == 1) next.push_back(partials.back());
    partials = std::move(next);
  }
  return partials[0];
}

Tensor Builder::reduction(const ir::Let& let, const Tensor& x, const ir::Type& x_type,
                          RealType type) {
  const std::vector<std::vector<int32_t>> terms_of = reduced_terms(let, x, x_type, type);
  Tensor result;
  for (size_t o = 0; o < terms_of.size(); ++o) {
    if (terms_of[o].empty()) no_form(site_, "an empty sum");
    if (let.op == ir::Op::reduce_max) {
      result.push_back(max_of(terms_of[o], type,
                              {"", "", {}, site_, occurrence_, static_cast<int64_t>(o), false}, ""));
      continue;
    }
    std::vector<std::pair<int32_t, int32_t>> terms;
    for (int32_t t : terms_of[o]) terms.push_back({t, -1});
    const int32_t s = ordered_sum(terms, false, type);
    if (let.op == ir::Op::sum) note_sum_floor(terms_of[o], s);
    const auto k = static_cast<int64_t>(terms.size());
    Scalar out{"", "", {s}, site_, occurrence_, static_cast<int64_t>(o), false};
    if (let.op == ir::Op::mean) {
      out.rounded = stored(type, fmt::format("{} / {}", r(s), k)),
      out.exact = fmt::format("{} / {}", e(s), k);
    } else {
      out.rounded = type == RealType::bf16 ? "rndbf(" + r(s) + ")" : r(s), out.exact = e(s);
    }
    result.push_back(add(std::move(out), type));
  }
  return result;
}

int32_t Builder::exp_of(int32_t a, RealType type, Scalar scalar) {
  const RealType c = compute_type(type);
  const auto id = static_cast<int32_t>(statement.scalars.size());
  scalar.operands = {};  // stated through K<id>, not through its argument's expressions
  scalar.exact.clear();  // E<id> free: exp(E_a), which Gappa cannot write
  scalar.rounded = stored(type, fmt::format("{} * K{} * H{}", e(id), id, id));
  const double eta = 2 * precision::bound_detail::transcendental_ulps(ir::Op::exp, c) *
                     exec::native::real_unit_roundoff(c);
  statement.nonlinear[id] = {Nonlinear::Form::exp, {a}, eta, ""};
  statement.facts[id].push_back(e(id) + " >= 0");
  if (auto shift = shifts_.find(a); shift != shifts_.end()) {
    statement.facts[id].push_back(e(id) + " <= 1");  // exp(x − max) ≤ 1
    exp_shifts_[id] = shift->second;
  }
  return add(std::move(scalar), type);
}

int32_t Builder::max_of(const std::vector<int32_t>& members, RealType type, Scalar scalar,
                        const std::string& range_site) {
  const auto id = static_cast<int32_t>(statement.scalars.size());
  scalar.operands = {};
  scalar.rounded.clear();  // r<id> free too: max is exact, so |r − E| ≤ the members' bound
  scalar.exact.clear();
  statement.nonlinear[id] = {Nonlinear::Form::max, members, 0, range_site};
  max_members_[id] = members;
  return add(std::move(scalar), type);
}

void Builder::note_shift(int32_t difference, int32_t x, int32_t m) {
  const auto members = max_members_.find(m);
  if (members == max_members_.end()) return;
  if (std::find(members->second.begin(), members->second.end(), x) == members->second.end()) return;
  shifts_[difference] = {m, x};
  statement.facts[difference].push_back(e(difference) + " <= 0");  // x − max(…x…) ≤ 0
}

// Σⱼ exp(xⱼ − max x) ≥ 1 when the terms are every member's: the max's own term is exp(0) = 1.
void Builder::note_sum_floor(const std::vector<int32_t>& terms, int32_t sum) {
  int32_t m = -1;
  std::vector<int32_t> xs;
  for (int32_t t : terms) {
    const auto shift = exp_shifts_.find(t);
    if (shift == exp_shifts_.end() || (m >= 0 && shift->second.first != m)) return;
    m = shift->second.first;
    xs.push_back(shift->second.second);
  }
  if (m < 0) return;
  std::vector<int32_t> members = max_members_.at(m);
  std::sort(members.begin(), members.end());
  std::sort(xs.begin(), xs.end());
  if (!std::includes(xs.begin(), xs.end(), members.begin(), members.end())) return;
  statement.facts[sum].push_back(e(sum) + " >= 1");
}

// softmax as the native kernels compute it (src/exec/native/ops_reduce.cpp): per row m = max x
// (exact), d = x − m, e = exp(d), s = Σ e in the declared order, each in the compute type; y = e / s
// rounded into it and stored in the site's type.
Tensor Builder::softmax(const ir::Let& let, const Tensor& x, const ir::Type& x_type,
                        RealType type) {
  const RealType c = compute_type(type);
  std::vector<int64_t> group;
  const std::vector<std::vector<int32_t>> rows = reduced_terms(let, x, x_type, c, &group);
  const std::string range = statement.scalars[x.at(0)].site;
  std::vector<int32_t> maxima, sums(rows.size());
  for (const std::vector<int32_t>& row : rows)
    maxima.push_back(max_of(row, c, temporary("", "", {}), range));
  std::vector<std::vector<std::pair<int32_t, int32_t>>> exps(rows.size());
  std::vector<int64_t> place(x.size());
  std::vector<size_t> seen(rows.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t g = group[i];
    const int32_t xi = rows[g][seen[g]++], m = maxima[g];
    const auto d_id = static_cast<int32_t>(statement.scalars.size());
    note_shift(d_id, xi, m);
    const int32_t d = add(temporary(fmt::format("{}({} - {})", rounding(c), r(xi), r(m)),
                                    e(xi) + " - " + e(m), {xi, m}),
                          c);
    place[i] = static_cast<int64_t>(exps[g].size());
    exps[g].push_back({exp_of(d, c, temporary("", "", {})), -1});
  }
  for (size_t g = 0; g < rows.size(); ++g) {
    sums[g] = ordered_sum(exps[g], false, c);
    std::vector<int32_t> terms;
    for (const auto& [t, unused] : exps[g]) terms.push_back(t);
    note_sum_floor(terms, sums[g]);
  }
  Tensor out;
  for (size_t i = 0; i < x.size(); ++i) {
    const int32_t ex = exps[group[i]][place[i]].first, s = sums[group[i]];
    statement.quotients[static_cast<int32_t>(statement.scalars.size())] = {ex, s};
    out.push_back(add({stored(type, r(ex) + " / " + r(s)), e(ex) + " / " + e(s), {ex, s}, site_,
                       occurrence_, static_cast<int64_t>(i), false},
                      type));
  }
  return out;
}

std::vector<std::vector<int32_t>> Builder::reduced_terms(const ir::Let& let, const Tensor& x,
                                                         const ir::Type& x_type, RealType type,
                                                         std::vector<int64_t>* group) {
  const std::vector<int64_t>& shape = x_type.shape;
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t axis : let.attrs.axes)
    reduced[axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis] = true;
  int64_t groups = 1;  // the kept axes' extents (a softmax keeps its shape: not let.type's count)
  for (size_t a = 0; a < shape.size(); ++a) groups *= reduced[a] ? 1 : shape[a];
  std::vector<std::vector<int32_t>> terms(static_cast<size_t>(groups));
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t flat = 0; flat < x.size(); ++flat) {  // row-major: each output's terms in order
    int64_t out = 0;
    for (size_t a = 0; a < shape.size(); ++a) {
      if (!reduced[a]) out = out * shape[a] + index[a];  // a kept reduced axis has extent 1
    }
    terms[out].push_back(enter(x[flat], type));
    if (group != nullptr) group->push_back(out);
    for (size_t a = shape.size(); a-- > 0;) {
      if (++index[a] < shape[a]) break;
      index[a] = 0;
    }
  }
  return terms;
}

Tensor Builder::contraction(const ir::Let& let, const Tensor& x, const Tensor& w,
                            const std::vector<ir::Type>& types, RealType type) {
  const reference::ContractionPlan plan =
      reference::plan_contraction(let.attrs.spec, types[0].shape, types[1].shape);
  Tensor result;
  for (int64_t o = 0; o < let.type.element_count(); ++o) {
    int64_t x0 = 0, w0 = 0;
    reference::free_offsets(plan, o, x0, w0);
    std::vector<std::pair<int32_t, int32_t>> terms;
    reference::for_each_run(
        plan, x0, w0, [&](int64_t xs, int64_t ws, const reference::Letter& inner) {
          for (int64_t j = 0; j < inner.extent; ++j) {
            terms.push_back(
                {enter(x[xs + j * inner.x_stride], type), enter(w[ws + j * inner.w_stride], type)});
          }
        });
    if (terms.empty()) no_form(site_, "an empty contraction");
    const int32_t s = ordered_sum(terms, true, type);
    Scalar out{type == RealType::bf16 ? "rndbf(" + r(s) + ")" : r(s),
               e(s),
               {s},
               site_,
               occurrence_,
               o,
               false};
    result.push_back(add(std::move(out), type));
  }
  return result;
}

Tensor Builder::layout(const ir::Let& let, const Tensor& x, const ir::Type& x_type) {
  const int64_t count = let.type.element_count();
  Tensor out(count);
  const std::vector<int64_t>& in_shape = x_type.shape;
  const std::vector<int64_t>& out_shape = let.type.shape;
  const std::vector<int64_t> in_strides = reference::row_major_strides(in_shape);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, source = 0;
    switch (let.op) {
      case ir::Op::reshape:
        source = i;
        break;
      case ir::Op::broadcast:
        source = reference::BroadcastMap(out_shape, in_shape)(i);
        break;
      case ir::Op::transpose:
      case ir::Op::slice:
        for (size_t a = out_shape.size(); a-- > 0;) {
          const int64_t k = rest % out_shape[a];
          rest /= out_shape[a];
          if (let.op == ir::Op::transpose) {
            source += k * in_strides[let.attrs.axes[a]];
          } else {
            int64_t start = 0;
            for (size_t s = 0; s < let.attrs.axes.size(); ++s)
              if (static_cast<size_t>(let.attrs.axes[s]) == a) start = let.attrs.starts[s];
            source += (k + start) * in_strides[a];
          }
        }
        break;
      default:
        no_form(site_, fmt::format("`{}`", ir::op_name(let.op)));
    }
    out[i] = x[source];
  }
  return out;
}

}  // namespace

Statement state(const ir::Program& program, const ir::Function& entry,
                const exec::native::Realization& realization,
                const reference::ParameterStore& parameters, const std::string& site) {
  for (const ir::Let& let : entry.lets) {
    if (ir::is_folding(let.op)) no_form(entry.name, "a fold (unroll the layers into calls)");
  }
  Builder builder(program, realization, parameters, site);
  std::vector<Tensor> args;
  for (size_t i = 0; i < entry.argument_types.size(); ++i)
    args.push_back(builder.argument(entry, i));
  std::vector<Tensor> results = builder.run(entry, "", args);
  Statement statement = std::move(builder.statement);
  if (site.empty()) {
    for (size_t k = 0; k < results.size(); ++k) {
      const ir::Type& type = entry.type_of(entry.results[k]);
      const int64_t row = type.shape.empty() ? 1 : type.shape.back();
      statement.goals.insert(statement.goals.end(), results[k].begin(), results[k].begin() + row);
    }
  } else if (statement.goals.empty()) {
    user_error("E1601") << "--site " << site << ": the entry `" << entry.name
                        << "` never evaluates it (a site is `<function>/%<n>`, as presk dump "
                           "--stage sites lists them)";
  }
  mark_needed(statement);
  return statement;
}

}  // namespace presk::proof
