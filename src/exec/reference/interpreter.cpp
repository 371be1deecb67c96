// The interpreter's driver: runs a function's lets in order, resolves `param`, `call` and
// `fold` with the parameter context rules of ir.h, frees each let's value after its last use,
// and hands every value to the observer when one is attached. The arithmetic of each op lives
// in the op family files (ops.h).
#include "exec/reference/interpreter.h"

#include <malloc.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "exec/reference/ops.h"
#include "ir/footprint.h"
#include "support/cancel.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {

// The parameter context of a call (ir.h): a module path and the layer indices of the stacks
// the call is inside.
struct CallContext {
  std::string module_path;
  std::vector<int64_t> layers;
};

using ir::join_path;

// Calls and fold layers nested deeper than this are E0517 (docs/errors.md): each level is a few
// native stack frames of the interpreter, and a chain of calls 10⁴ deep would overflow the stack.
constexpr int kMaxCallDepth = 256;

// For each let, the index of the last let that reads it; kKept for the function's results.
constexpr int64_t kKept = std::numeric_limits<int64_t>::max();
std::vector<int64_t> last_uses(const ir::Function& function) {
  std::vector<int64_t> last(function.lets.size(), -1);
  for (size_t j = 0; j < function.lets.size(); ++j) {
    for (const ir::ValueRef& operand : function.lets[j].operands) {
      if (operand.kind == ir::ValueRef::Kind::Let) last[operand.index] = static_cast<int64_t>(j);
    }
  }
  for (const ir::ValueRef& result : function.results) {
    if (result.kind == ir::ValueRef::Kind::Let) last[result.index] = kKept;
  }
  return last;
}

template <class A>
class Evaluator {
 public:
  Evaluator(const ir::Program& program, const ParameterStore& parameters, const A& arith,
            Observer* observer, std::optional<random::DropoutKey> training = std::nullopt)
      : program_(program), parameters_(parameters), arith_(arith), observer_(observer),
        training_(training) {}

  std::vector<Value<A>> call(const ir::Function& function, const CallContext& context,
                             const std::vector<const Value<A>*>& arguments);

 private:
  Value<A> evaluate(const ir::Function& function, uint32_t index, const CallContext& context,
                    const std::vector<const Value<A>*>& operands);
  Value<A> compute(const ir::Let& let, const std::vector<const Value<A>*>& operands,
                   std::vector<TermStatistics>* terms);
  Value<A> read_param(const ir::Let& let, const CallContext& context, bool in_place);
  Value<A> run_call(const ir::Let& let, const CallContext& context,
                    const std::vector<const Value<A>*>& operands);
  Value<A> run_fold(const ir::Let& let, const CallContext& context, const Value<A>& initial);
  Value<A> run_stacked_fold(const ir::Let& let, const CallContext& context,
                            const std::vector<const Value<A>*>& operands);
  int64_t stack_extent(const std::string& stack_path, size_t depth, const ir::Let& let) const;
  void report(const SiteContext& site, const Value<A>& value, const ir::Type& type);
  const std::vector<int64_t>& last_uses_of(const ir::Function& function);

  const ir::Program& program_;
  const ParameterStore& parameters_;
  const A& arith_;
  Observer* observer_;
  std::optional<random::DropoutKey> training_;
  std::map<const ir::Function*, std::vector<int64_t>> last_uses_;
  int depth_ = 0;  // calls in progress (one evaluator runs on one thread at a time)
};

template <class A>
const std::vector<int64_t>& Evaluator<A>::last_uses_of(const ir::Function& function) {
  auto found = last_uses_.find(&function);
  if (found == last_uses_.end()) found = last_uses_.emplace(&function, last_uses(function)).first;
  return found->second;
}

template <class A>
std::vector<Value<A>> Evaluator<A>::call(const ir::Function& function, const CallContext& context,
                                         const std::vector<const Value<A>*>& arguments) {
  internal_assert(arguments.size() == function.argument_types.size());
  if (depth_ >= kMaxCallDepth) {
    user_error("E0517").hint("flatten the program: inline some functions, or nest fewer modules")
        << "calls nest more than " << kMaxCallDepth << " deep (at `" << function.name
        << "`): the exact interpreter runs at most " << kMaxCallDepth << " calls and folds inside one another";
  }
  struct Depth {
    int& depth;
    explicit Depth(int& d) : depth(++d) {}
    ~Depth() { --depth; }
  } nested(depth_);
  const std::vector<int64_t>& last = last_uses_of(function);
  std::vector<std::optional<Value<A>>> lets(function.lets.size());
  auto operand_of = [&](const ir::ValueRef& ref) -> const Value<A>* {
    if (ref.kind == ir::ValueRef::Kind::Argument) return arguments[ref.index];
    internal_assert(lets[ref.index].has_value());
    return &*lets[ref.index];
  };
  for (uint32_t j = 0; j < function.lets.size(); ++j) {
    check_cancelled();  // a front's Ctrl-C (support/cancel.h)
    std::vector<const Value<A>*> operands;
    for (const ir::ValueRef& ref : function.lets[j].operands) operands.push_back(operand_of(ref));
    lets[j] = evaluate(function, j, context, operands);
    // Free every let whose last reader was this one (and this one if nothing reads it).
    for (const ir::ValueRef& ref : function.lets[j].operands) {
      if (ref.kind == ir::ValueRef::Kind::Let && last[ref.index] == j) lets[ref.index].reset();
    }
    if (last[j] < 0) lets[j].reset();
  }
  std::vector<Value<A>> results;
  for (const ir::ValueRef& ref : function.results) {
    bool movable = ref.kind == ir::ValueRef::Kind::Let && lets[ref.index].has_value();
    results.push_back(movable ? std::move(*lets[ref.index]) : copy_value(arith_, *operand_of(ref)));
    if (movable) lets[ref.index].reset();
  }
  return results;
}

template <class A>
Value<A> Evaluator<A>::evaluate(const ir::Function& function, uint32_t index,
                                const CallContext& context,
                                const std::vector<const Value<A>*>& operands) {
  const ir::Let& let = function.lets[index];
  SiteContext site{function, index, context.module_path, context.layers};
  std::vector<TermStatistics> terms;
  bool want_terms = observer_ != nullptr && observer_->wants_terms() &&
                    (let.op == ir::Op::sum || let.op == ir::Op::mean || let.op == ir::Op::contract);
  Value<A> value;
  switch (let.op) {
    case ir::Op::param:  // in place unless an observer is handed every value
      value = read_param(let, context,
                         (observer_ == nullptr || !observer_->wants_parameters()) && ir::read_in_place(function, index));
      break;
    case ir::Op::call: value = run_call(let, context, operands); break;
    case ir::Op::fold: value = run_fold(let, context, *operands.at(0)); break;
    case ir::Op::get: value = copy_value(arith_, operands.at(0)->elements.at(let.attrs.axes.at(0))); break;
    case ir::Op::fold_trace:
    case ir::Op::scan:
    case ir::Op::fold_vjp: value = run_stacked_fold(let, context, operands); break;
    case ir::Op::dropout:
      if (training_) {  // a training run: the mask of this window, call context and id
        random::DropoutMask mask(*training_, let.attrs.path, context.module_path, context.layers, let.attrs.rate);
        value = eval_dropout(arith_, let, *operands.at(0), mask);
        break;
      }
      [[fallthrough]];
    default: value = compute(let, operands, want_terms ? &terms : nullptr); break;
  }
  internal_assert(value.kind == let.type.kind && value.shape == let.type.shape);
  if (observer_ != nullptr && !let.type.is_tuple() && !value.is_in_place()) {
    if (want_terms) observer_->on_terms(site, terms);
    report(site, value, let.type);
  }
  return value;
}

template <class A>
Value<A> Evaluator<A>::compute(const ir::Let& let, const std::vector<const Value<A>*>& operands,
                               std::vector<TermStatistics>* terms) {
  Operands<A> in(operands.data(), operands.size());
  switch (ir::op_info(let.op).family) {
    case ir::OpFamily::Source:
      return let.op == ir::Op::literal ? eval_literal(arith_, let) : eval_iota(arith_, let);
    case ir::OpFamily::Elementwise: return eval_elementwise(arith_, let, in);
    case ir::OpFamily::Reduction: return eval_reduction(arith_, let, *in[0], terms);
    case ir::OpFamily::Contraction: return eval_contract(arith_, let, *in[0], *in[1], terms);
    case ir::OpFamily::Normalization:
      return let.op == ir::Op::quantize ? eval_quantize(arith_, let, *in[0], in.size() > 1 ? in[1] : nullptr)
                                         : eval_normalization(arith_, let, *in[0]);
    case ir::OpFamily::Gather:
    case ir::OpFamily::Layout: return eval_layout(arith_, let, in);
    case ir::OpFamily::Loss: return eval_cross_entropy(arith_, let, *in[0], *in[1]);
    case ir::OpFamily::Control: break;
  }
  internal_assert(false && "control ops are run by the evaluator");
  return {};
}

// `param`: the slice of the parameter `<context>.<path>` at the context's layer indices, read
// where the parameter is (in its stored type): `in_place`, left there for its readers
// (ops_in_place.cpp); otherwise converted to exact numbers now.
template <class A>
Value<A> Evaluator<A>::read_param(const ir::Let& let, const CallContext& context, bool in_place) {
  std::string path = join_path(context.module_path, let.attrs.path);
  const ir::Param* param = program_.find_param(path);
  if (param == nullptr) user_error("E0506", let.span) << "the program has no parameter `" << path << "`";
  const ParamView values = parameters_.view(path);
  if (!values) user_error("E0506", let.span) << "no values were given for parameter `" << path << "`";
  auto depth = static_cast<size_t>(param->stack_depth);
  internal_assert(context.layers.size() >= depth);
  Shape strides = row_major_strides(param->type.shape);
  int64_t offset = 0;
  for (size_t i = 0; i < depth; ++i) offset += context.layers[i] * strides[i];
  if (in_place) {
    Value<A> value;
    value.shape = let.type.shape;
    value.in_place = values;
    value.in_place_offset = static_cast<uint64_t>(offset);
    internal_assert(offset + value.size() <= static_cast<int64_t>(values.size()));
    return value;
  }
  Value<A> value = Value<A>::make_real(arith_, let.type.shape);
  internal_assert(offset + value.size() <= static_cast<int64_t>(values.size()));
  std::vector<double> slice(static_cast<size_t>(value.size()));
  values.read(static_cast<uint64_t>(offset), slice.size(), slice.data());
  for (int64_t i = 0; i < value.size(); ++i) arith_.set_double(value.real(i), slice[static_cast<size_t>(i)]);
  return value;
}

template <class A>
Value<A> Evaluator<A>::run_call(const ir::Let& let, const CallContext& context,
                                const std::vector<const Value<A>*>& operands) {
  const ir::Function* callee = program_.find_function(let.attrs.callee);
  internal_assert(callee != nullptr);
  CallContext inner{join_path(context.module_path, let.attrs.path), context.layers};
  std::vector<Value<A>> results = call(*callee, inner, operands);
  if (results.size() == 1) return std::move(results[0]);
  Value<A> tuple;  // a callee with several results (a .vjp): the let is their tuple
  tuple.elements = std::move(results);
  return tuple;
}

// The number of layers of the stack at `stack_path`: the extent of axis `depth` of any of its
// parameters (every parameter under a stack has one leading axis per enclosing stack).
template <class A>
int64_t Evaluator<A>::stack_extent(const std::string& stack_path, size_t depth,
                                   const ir::Let& let) const {
  std::string prefix = stack_path + ".";
  for (const ir::Param& param : program_.params) {
    if (param.path.compare(0, prefix.size(), prefix) == 0 && param.type.shape.size() > depth) {
      return param.type.shape[depth];
    }
  }
  user_error("E0506", let.span) << "fold over `" << stack_path << "`, which has no parameters";
  return 0;
}

template <class A>
Value<A> Evaluator<A>::run_fold(const ir::Let& let, const CallContext& context,
                                const Value<A>& initial) {
  const ir::Function* callee = program_.find_function(let.attrs.callee);
  internal_assert(callee != nullptr);
  std::string stack_path = join_path(context.module_path, let.attrs.path);
  int64_t layers = stack_extent(stack_path, context.layers.size(), let);
  std::optional<Value<A>> carry;
  for (int64_t l = 0; l < layers; ++l) {
    CallContext inner{stack_path, context.layers};
    inner.layers.push_back(l);
    std::vector<Value<A>> results = call(*callee, inner, {carry ? &*carry : &initial});
    internal_assert(results.size() == 1);
    carry = std::move(results[0]);
  }
  return carry ? std::move(*carry) : copy_value(arith_, initial);
}

// fold_trace, fold_vjp (ops_adjoint.cpp): the callee per layer of the stack, as in run_fold.
template <class A>
Value<A> Evaluator<A>::run_stacked_fold(const ir::Let& let, const CallContext& context,
                                        const std::vector<const Value<A>*>& operands) {
  const ir::Function* callee = program_.find_function(let.attrs.callee);
  internal_assert(callee != nullptr);
  std::string stack_path = join_path(context.module_path, let.attrs.path);
  LayerRunner<A> run_layer = [&](int64_t l, const std::vector<const Value<A>*>& arguments) {
    CallContext inner{stack_path, context.layers};
    inner.layers.push_back(l);
    return call(*callee, inner, arguments);
  };
  int64_t layers = stack_extent(stack_path, context.layers.size(), let);
  return eval_stacked_fold(arith_, let, layers, operands, run_layer);
}

template <class A>
void Evaluator<A>::report(const SiteContext& site, const Value<A>& value, const ir::Type& type) {
  ValueView view{type, value.size()};
  if (!value.is_real()) {
    view.integers = value.integers.data();
  } else if constexpr (A::kIsBall) {
    view.ball = value.reals.data();
  } else {
    view.mpfr = value.reals.data();
  }
  observer_->on_value(site, view);
}

void check_arguments(const ir::Function& function, size_t count,
                     const std::function<const Shape&(size_t)>& shape_of,
                     const std::function<ir::ElemKind(size_t)>& kind_of) {
  if (count != function.argument_types.size()) {
    user_error("E0502") << "`" << function.name << "` takes " << function.argument_types.size()
                        << " data arguments, " << count << " were given";
  }
  for (size_t i = 0; i < count; ++i) {
    const ir::Type& type = function.argument_types[i];
    if (shape_of(i) != type.shape || kind_of(i) != type.kind) {
      ir::Type given;
      given.kind = kind_of(i);
      given.shape = shape_of(i);
      user_error("E0502") << "argument `" << function.argument_names[i] << "` of `"
                          << function.name << "` is " << ir::type_to_string(type) << ", but "
                          << ir::type_to_string(given) << " was given";
    }
  }
}

}  // namespace

const ir::Function& find_entry(const ir::Program& program, const std::string& name) {
  std::ostringstream entries;
  for (const ir::Function& function : program.functions) {
    if (!function.is_entry) continue;
    if (function.name == name) return function;
    entries << (entries.tellp() > 0 ? ", " : "") << function.name;
  }
  user_error("E0500").hint("the program's entries: " + (entries.str().empty() ? std::string("none") : entries.str()))
      << "the program has no entry `" << name << "`";
  internal_assert(false);
  return program.functions.front();
}

template <class A>
std::vector<Value<A>> run_function(const ir::Program& program, const ir::Function& function,
                                   const ParameterStore& parameters,
                                   const std::vector<Value<A>>& arguments,
                                   const RunOptions& options) {
  if (options.bits < kMinBits || options.bits > kMaxBits) {
    user_error("E0501").hint("use --bits between 53 and 1048576")
        << "--bits " << options.bits << " is outside the supported range";
  }
  check_arguments(
      function, arguments.size(), [&](size_t i) -> const Shape& { return arguments[i].shape; },
      [&](size_t i) { return arguments[i].kind; });
  A arith(options.bits);
  Evaluator<A> evaluator(program, parameters, arith, options.observer, options.training);
  std::vector<const Value<A>*> pointers;
  for (const Value<A>& argument : arguments) pointers.push_back(&argument);
  tbb::task_arena arena(std::max(1, options.threads));
  std::vector<Value<A>> results;
  arena.execute([&] { results = evaluator.call(function, CallContext{}, pointers); });
  // The run's buffers are freed; give back what the allocator keeps of them (presk's main keeps
  // freed memory between ops, mallopt), so that what runs next does not stack on top of it.
  malloc_trim(0);
  return results;
}

template <class A>
std::vector<std::vector<Value<A>>> run_samples(const ir::Program& program,
                                               const ir::Function& function,
                                               const ParameterStore& parameters, int64_t count,
                                               const SampleArguments<A>& arguments_of,
                                               const RunOptions& options) {
  internal_assert(count >= 0);
  A arith(std::clamp(options.bits, kMinBits, kMaxBits));  // run_function reports a bad --bits
  std::vector<std::vector<Value<A>>> results(static_cast<size_t>(count));
  int threads = std::max(1, options.threads);
  if (count < threads || threads == 1 || options.observer != nullptr) {
    for (int64_t k = 0; k < count; ++k) {
      results[k] = run_function<A>(program, function, parameters, arguments_of(arith, k), options);
    }
    return results;
  }
  RunOptions one = options;  // each sample on the one thread that runs it
  one.threads = 1;
  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::parallel_for(int64_t{0}, count, [&](int64_t k) {
      results[k] = run_function<A>(program, function, parameters, arguments_of(arith, k), one);
    });
  });
  return results;
}

template <class A>
Value<A> copy_value(const A& arith, const Value<A>& value) {
  if (!value.is_real()) {
    Value<A> copy = Value<A>::make_integer(value.kind, value.shape);
    copy.integers = value.integers;
    return copy;
  }
  Value<A> copy = Value<A>::make_real(arith, value.shape);
  for (int64_t i = 0; i < value.size(); ++i) arith.set(copy.real(i), value.real(i));
  return copy;
}

template std::vector<Value<MpfrArith>> run_function(const ir::Program&, const ir::Function&,
                                                    const ParameterStore&,
                                                    const std::vector<Value<MpfrArith>>&,
                                                    const RunOptions&);
template std::vector<Value<BallArith>> run_function(const ir::Program&, const ir::Function&,
                                                    const ParameterStore&,
                                                    const std::vector<Value<BallArith>>&,
                                                    const RunOptions&);
template std::vector<std::vector<Value<MpfrArith>>> run_samples(
    const ir::Program&, const ir::Function&, const ParameterStore&, int64_t,
    const SampleArguments<MpfrArith>&, const RunOptions&);
template std::vector<std::vector<Value<BallArith>>> run_samples(
    const ir::Program&, const ir::Function&, const ParameterStore&, int64_t,
    const SampleArguments<BallArith>&, const RunOptions&);
template Value<MpfrArith> copy_value(const MpfrArith&, const Value<MpfrArith>&);
template Value<BallArith> copy_value(const BallArith&, const Value<BallArith>&);

}  // namespace presk::reference
