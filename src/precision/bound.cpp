// The bound's driver (bound.h): walks the entry's lets in order — into every call, once per
// layer of every fold, with the parameter context rules of ir.h — converts each operand into
// its consumer's site type (a wider one rounded at the edge) and applies the op's rule
// (bound_elementwise.cpp, bound_sums.cpp). Every error is kept as parts by source.
#include "precision/bound.h"

#include <algorithm>
#include <cmath>

#include "precision/bound_rules.h"
#include "support/diagnostics.h"

namespace presk::precision {
namespace {

using bound_detail::Ceiling;
using bound_detail::ErrorParts;
using bound_detail::RuleContext;
using exec::native::RealType;

std::string join_path(const std::string& context, const std::string& path) {
  if (context.empty()) return path;
  if (path.empty()) return context;
  return context + "." + path;
}

// The parameter context of a call (ir.h): a module path and how many stacks it is inside.
struct CallContext {
  std::string module_path;
  size_t depth = 0;
};

class Propagator {
 public:
  Propagator(const BoundInputs& inputs, BoundModel model);
  std::vector<Ceiling> run_entry(const ir::Function& entry);
  const std::string& source_name(size_t id) const { return sources_[id]; }

 private:
  std::vector<Ceiling> call(const ir::Function& function, const CallContext& context,
                            const std::vector<const Ceiling*>& arguments);
  Ceiling evaluate(const ir::Function& function, uint32_t index, const CallContext& context,
                   const std::vector<const Ceiling*>& operands);
  Ceiling apply_rule(const RuleContext& context, const std::vector<Ceiling>& operands);
  Ceiling parameter(const ir::Let& let, const CallContext& context);
  Ceiling fold(const ir::Let& let, const CallContext& context, const Ceiling& initial);
  Ceiling enter(const Ceiling& operand, RealType site, int source) const;
  const SiteEnvelope& site_envelope(const ir::Function& function, uint32_t index) const;
  int source_id(const std::string& name, bool absolute = false);

  const BoundInputs& inputs_;
  const ir::Program& program_;
  const exec::native::Realization& realization_;
  BoundModel model_;
  std::map<std::string, const SiteEnvelope*> sites_;
  std::map<std::string, const ParameterEnvelope*> parameters_;
  std::vector<std::string> sources_;
  std::vector<char> absolute_sources_;  // by source id: integer weights' representation
  std::map<std::string, int> source_ids_;
};

Propagator::Propagator(const BoundInputs& inputs, BoundModel model)
    : inputs_(inputs), program_(*inputs.program), realization_(*inputs.realization), model_(model) {
  for (const SiteEnvelope& site : inputs.envelope->sites) sites_[site.site] = &site;
  for (const ParameterEnvelope& parameter : inputs.envelope->parameters)
    parameters_[parameter.path] = &parameter;
}

int Propagator::source_id(const std::string& name, bool absolute) {
  auto found = source_ids_.find(name);
  if (found != source_ids_.end()) return found->second;
  sources_.push_back(name);
  absolute_sources_.push_back(absolute ? 1 : 0);
  return source_ids_[name] = static_cast<int>(sources_.size() - 1);
}

const SiteEnvelope& Propagator::site_envelope(const ir::Function& function, uint32_t index) const {
  const std::string name = function.site_name(index);
  auto found = sites_.find(name);
  if (found == sites_.end()) {
    user_error("E0932").hint("calibrate the envelope again on this program and entry")
        << "the envelope has no site `" << name << "` (" << ir::op_name(function.lets[index].op)
        << "), which entry `" << inputs_.envelope->entry << "` computes";
  }
  return *found->second;
}

// An operand entering a site of type `site`: a narrower one is widened exactly, a wider one
// rounded once at the edge (the rounding charged to the consuming site).
Ceiling Propagator::enter(const Ceiling& operand, RealType site, int source) const {
  if (!operand.real) return operand;
  Ceiling entered = operand;
  if (!exec::native::is_wider_or_same(site, operand.type)) {
    entered.error.add(source,
                      bound_detail::rounding_into(operand.rounding, site, operand.magnitude, operand.computed));
  }
  entered.type = site;
  return entered;
}

std::vector<Ceiling> Propagator::run_entry(const ir::Function& entry) {
  if (inputs_.arguments.size() != entry.argument_types.size()) {
    user_error("E0934") << "the bound on `" << entry.name << "` needs the magnitudes of its "
                        << entry.argument_types.size() << " arguments, " << inputs_.arguments.size()
                        << " were given";
  }
  std::vector<Ceiling> arguments;
  for (size_t i = 0; i < entry.argument_types.size(); ++i) {
    if (entry.argument_types[i].kind != ir::ElemKind::Real) {
      arguments.push_back(bound_detail::exact_ceiling());
      continue;
    }
    const ValueEnvelope& value = inputs_.arguments[i];
    Ceiling argument;
    argument.magnitude = value.max_abs;
    argument.type = realization_.default_type;  // entry arguments take the default type
    argument.rounding = &value.rounding;
    argument.error.add(source_id("argument " + entry.argument_names[i]),
                       bound_detail::rounding_into(&value.rounding, argument.type, value.max_abs, false));
    arguments.push_back(std::move(argument));
  }
  std::vector<const Ceiling*> pointers;
  for (const Ceiling& argument : arguments) pointers.push_back(&argument);
  return call(entry, CallContext{}, pointers);
}

std::vector<Ceiling> Propagator::call(const ir::Function& function, const CallContext& context,
                                      const std::vector<const Ceiling*>& arguments) {
  internal_assert(arguments.size() == function.argument_types.size());
  std::vector<Ceiling> lets(function.lets.size());
  auto operand_of = [&](const ir::ValueRef& ref) -> const Ceiling* {
    return ref.kind == ir::ValueRef::Kind::Argument ? arguments[ref.index] : &lets[ref.index];
  };
  for (uint32_t j = 0; j < function.lets.size(); ++j) {
    std::vector<const Ceiling*> operands;
    for (const ir::ValueRef& ref : function.lets[j].operands) operands.push_back(operand_of(ref));
    lets[j] = evaluate(function, j, context, operands);
  }
  std::vector<Ceiling> results;
  for (const ir::ValueRef& ref : function.results) results.push_back(*operand_of(ref));
  return results;
}

Ceiling Propagator::evaluate(const ir::Function& function, uint32_t index,
                             const CallContext& context,
                             const std::vector<const Ceiling*>& operands) {
  const ir::Let& let = function.lets[index];
  switch (let.op) {
    case ir::Op::param:
      return parameter(let, context);
    case ir::Op::fold:
      return fold(let, context, *operands.at(0));
    case ir::Op::get:
      return operands.at(0)->elements.at(static_cast<size_t>(let.attrs.axes.at(0)));
    case ir::Op::call: {
      const ir::Function* callee = program_.find_function(let.attrs.callee);
      internal_assert(callee != nullptr);
      std::vector<Ceiling> results =
          call(*callee, {join_path(context.module_path, let.attrs.path), context.depth}, operands);
      if (results.size() == 1) return std::move(results[0]);
      Ceiling tuple;
      tuple.elements = std::move(results);
      return tuple;
    }
    case ir::Op::fold_trace:
    case ir::Op::fold_vjp:
      user_error("E0933", let.span).hint("presk check bounds forward entries")
          << "presk check has no error rule for `" << ir::op_name(let.op) << "` (site "
          << function.site_name(index) << ")";
      break;
    default:
      break;
  }
  if (let.type.kind != ir::ElemKind::Real) return bound_detail::exact_ceiling();
  const std::string name = function.site_name(index);
  const RealType site = realization_.site_type(name);
  const int source = source_id(name);
  std::vector<Ceiling> entered;
  for (const Ceiling* operand : operands) entered.push_back(enter(*operand, site, source));
  RuleContext rule{let,
                   function,
                   index,
                   model_,
                   realization_.order,
                   site,
                   &site_envelope(function, index),
                   source,
                   &absolute_sources_};
  return apply_rule(rule, entered);
}

Ceiling Propagator::apply_rule(const RuleContext& context, const std::vector<Ceiling>& operands) {
  switch (ir::op_info(context.let.op).family) {
    case ir::OpFamily::Source:
      return bound_detail::source_rule(context);
    case ir::OpFamily::Elementwise:
      return bound_detail::elementwise_rule(context, operands);
    case ir::OpFamily::Reduction:
      return bound_detail::reduction_rule(context, operands.at(0));
    case ir::OpFamily::Contraction:
      return bound_detail::contraction_rule(context, operands.at(0), operands.at(1));
    case ir::OpFamily::Normalization:
      if (context.let.op == ir::Op::quantize) {
        user_error("E1723").hint("measure a chip's program with `presk check --contract C --measure`")
            << "a chip's quantize (site " << context.function.site_name(context.index)
            << ") has no rounding bound: it is no rounding of the realization";
      }
      return bound_detail::normalization_rule(context, operands.at(0));
    case ir::OpFamily::Gather:
    case ir::OpFamily::Layout:
      return bound_detail::layout_rule(context, operands);
    case ir::OpFamily::Loss:
      return bound_detail::cross_entropy_rule(context, operands.at(0));
    case ir::OpFamily::Control:
      break;
  }
  internal_assert(false && "control ops are run by the driver");
  return {};
}

// A parameter at rest: its own type (integer weights: f32(q·s), their meaning), its
// representation error max|at rest − w| charged to the parameter, its magnitude its own.
Ceiling Propagator::parameter(const ir::Let& let, const CallContext& context) {
  const std::string path = join_path(context.module_path, let.attrs.path);
  const ir::Param* param = program_.find_param(path);
  internal_assert(param != nullptr);
  if (param->type.kind != ir::ElemKind::Real) return bound_detail::exact_ceiling();
  auto envelope = parameters_.find(path);
  auto given = inputs_.parameter_errors.find(path);
  const bool quantized = realization_.param_quant(path) != nullptr;
  if (envelope == parameters_.end() || (quantized && given == inputs_.parameter_errors.end())) {
    user_error("E0934").hint("calibrate the envelope again on this program and entry")
        << (envelope == parameters_.end()
                ? "the envelope has no parameter `"
                : "no representation error was given for the quantized parameter `")
        << path << "`";
  }
  Ceiling out;
  out.magnitude = envelope->second->max_abs;
  out.type = quantized ? RealType::f32 : realization_.param_type(path);
  out.rounding = quantized ? nullptr : &envelope->second->rounding;
  const double error = given != inputs_.parameter_errors.end()
                           ? given->second
                           : bound_detail::rounding_into(out.rounding, out.type, out.magnitude, false);
  out.error.add(source_id("param " + path, quantized), error);
  return out;
}

// Each layer of the stack is one application of the callee, its result the next's input.
Ceiling Propagator::fold(const ir::Let& let, const CallContext& context, const Ceiling& initial) {
  const ir::Function* callee = program_.find_function(let.attrs.callee);
  internal_assert(callee != nullptr);
  const std::string stack_path = join_path(context.module_path, let.attrs.path);
  int64_t layers = -1;
  for (const ir::Param& param : program_.params) {
    if (param.path.rfind(stack_path + ".", 0) == 0 && param.type.shape.size() > context.depth) {
      layers = param.type.shape[context.depth];
      break;
    }
  }
  internal_assert(layers >= 0 && "a fold over a stack with no parameters");
  Ceiling carry = initial;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<Ceiling> results = call(*callee, {stack_path, context.depth + 1}, {&carry});
    internal_assert(results.size() == 1);
    carry = std::move(results[0]);
  }
  return carry;
}

}  // namespace

const char* bound_model_name(BoundModel model) {
  switch (model) {
    case BoundModel::k:
      return "k";
    case BoundModel::normwise:
      return "normwise";
    case BoundModel::cond:
      return "cond";
    case BoundModel::rss:
      return "rss";
  }
  return "?";
}

std::optional<BoundModel> bound_model_from_name(std::string_view name) {
  for (BoundModel model : kAllBoundModels) {
    if (name == bound_model_name(model)) return model;
  }
  return std::nullopt;
}

EntryBound bound_entry(const BoundInputs& inputs, BoundModel model) {
  internal_assert(inputs.program != nullptr && inputs.envelope != nullptr &&
                  inputs.realization != nullptr);
  const ir::Function* entry = inputs.program->find_function(inputs.envelope->entry);
  if (entry == nullptr || !entry->is_entry) {
    user_error("E0931") << "the envelope's entry `" << inputs.envelope->entry
                        << "` is not an entry of the program";
  }
  Propagator propagator(inputs, model);
  const std::vector<Ceiling> results = propagator.run_entry(*entry);
  EntryBound bound;
  bound.model = model;
  const Ceiling* largest = nullptr;
  for (const Ceiling& result : results) {
    bound.results.push_back(result.real ? result.error.total() : 0);
    if (result.real && (largest == nullptr || bound.results.back() > largest->error.total()))
      largest = &result;
  }
  if (largest == nullptr) return bound;
  bound.absolute = largest->error.total();
  const double scale = inputs.envelope->output_max_abs;
  bound.relative = scale > 0 ? bound.absolute / scale : bound.absolute;
  const std::vector<double>& parts = largest->error.parts();
  for (size_t id = 0; id < parts.size(); ++id) {
    if (parts[id] > 0) bound.contributions.push_back({propagator.source_name(id), parts[id]});
  }
  std::stable_sort(bound.contributions.begin(), bound.contributions.end(),
                   [](const Contribution& a, const Contribution& b) { return a.error > b.error; });
  return bound;
}

}  // namespace presk::precision
