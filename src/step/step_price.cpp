// The predicted time of a training step (step_price.h).
#include "step/step_price.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "precision/calibrate.h"
#include "profile/op_cost.h"
#include "support/diagnostics.h"
#include "train/batch_gradient.h"

namespace presk::step {
namespace {

using exec::native::RealType;

// L of the stack at `stack_path` at nesting `depth`, as the native executor finds it.
double stack_extent(const ir::Program& program, const std::string& stack_path, size_t depth) {
  const std::string prefix = stack_path + ".";
  for (const ir::Param& param : program.params) {
    if (param.path.compare(0, prefix.size(), prefix) == 0 && param.stack_depth > static_cast<int>(depth)) {
      return static_cast<double>(param.type.shape[depth]);
    }
  }
  internal_assert(false && "fold over a stack without parameters");
  return 0;
}

void add_runs(const ir::Program& program, const ir::Function& function, const std::string& path, size_t depth,
              double runs, std::map<std::string, double>& out) {
  out[function.name] += runs;
  for (const ir::Let& let : function.lets) {
    if (!ir::is_calling(let.op)) continue;
    const ir::Function* callee = program.find_function(let.attrs.callee);
    internal_assert(callee != nullptr);
    const std::string inner = ir::join_path(path, let.attrs.path);
    if (let.op == ir::Op::call) add_runs(program, *callee, inner, depth, runs, out);
    else add_runs(program, *callee, inner, depth + 1, runs * stack_extent(program, inner, depth), out);
  }
}

}  // namespace

std::map<std::string, double> step_runs(const ir::Program& program, const std::string& entry, double windows) {
  std::map<std::string, double> out;
  const ir::Function* function = program.find_function(entry);
  internal_assert(function != nullptr);
  add_runs(program, *function, "", 0, windows, out);
  return out;
}

StepPricer::StepPricer(const ir::Program& gradient_program, std::vector<std::string> entries,
                       const profile::Profile& profile, double windows)
    : program_(gradient_program), profile_(profile), entries_(std::move(entries)), windows_(windows) {
  for (const ir::Param& param : program_.params) {
    if (param.type.kind != ir::ElemKind::Real) continue;
    parameter_elements_ += static_cast<double>(param.type.element_count());
    parameter_tensors_ += 1;
  }
}

namespace {

using Types = std::vector<std::optional<RealType>>;  // a value's type; none: unknown, priced at its reader's

// The lets of every function the step reaches, once per call site and context (a fold's callee
// once with its runs multiplied), with the types each call hands its callee: an argument is the
// caller's operand, a call's result the callee's result value.
class PriceWalk {
 public:
  PriceWalk(const ir::Program& program, const profile::Profile& profile, const exec::native::Realization& realization,
            StepPrice& out)
      : program_(program), profile_(profile), realization_(realization), master_(realization.default_type), out_(out) {}

  Types walk(const ir::Function& function, const std::string& path, size_t depth, double runs, const Types& arguments) {
    Types lets(function.lets.size());
    std::map<uint32_t, Types> tuples;  // a call's several results
    auto type_of = [&](const ir::ValueRef& v) -> std::optional<RealType> {
      if (v.kind == ir::ValueRef::Kind::Argument) return v.index < arguments.size() ? arguments[v.index] : std::nullopt;
      return lets[v.index];
    };
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      const ir::Let& let = function.lets[i];
      if (ir::is_calling(let.op)) {
        const ir::Function* callee = program_.find_function(let.attrs.callee);
        internal_assert(callee != nullptr);
        const std::string inner = ir::join_path(path, let.attrs.path);
        Types handed;
        for (const ir::ValueRef& operand : let.operands) handed.push_back(type_of(operand));
        const bool folding = let.op != ir::Op::call;
        const double n = folding ? runs * stack_extent(program_, inner, depth) : runs;
        Types results = walk(*callee, inner, folding ? depth + 1 : depth, n, handed);
        if (results.size() == 1 && !let.type.is_tuple()) lets[i] = results[0];
        else if (let.op == ir::Op::call) tuples[i] = std::move(results);
        continue;
      }
      if (let.op == ir::Op::get) {
        const ir::ValueRef source = let.operands.at(0);
        auto found = source.kind == ir::ValueRef::Kind::Let ? tuples.find(source.index) : tuples.end();
        const size_t k = let.attrs.axes.empty() ? 0 : static_cast<size_t>(let.attrs.axes[0]);
        if (found != tuples.end() && k < found->second.size()) lets[i] = found->second[k];
        continue;
      }
      if (let.op == ir::Op::param) {
        lets[i] = master_;
        continue;
      }
      if (!exec::native::is_typable(let)) continue;
      const RealType own = realization_.site_type(function.site_name(i));
      lets[i] = own;
      price_let(function, let, own, runs, [&](const ir::ValueRef& v) { return type_of(v); });
    }
    Types results;
    for (const ir::ValueRef& result : function.results) results.push_back(type_of(result));
    return results;
  }

 private:
  template <typename TypeOf>
  void price_let(const ir::Function& function, const ir::Let& let, RealType own, double runs, const TypeOf& type_of) {
    const double elements = static_cast<double>(let.type.element_count());
    std::vector<profile::OperandRead> operands;
    for (const ir::ValueRef& operand : let.operands) {
      const ir::Type& type = function.type_of(operand);
      if (type.kind != ir::ElemKind::Real || type.is_tuple()) continue;
      const RealType from = type_of(operand).value_or(own);
      const bool parameter = operand.kind == ir::ValueRef::Kind::Let && function.lets[operand.index].op == ir::Op::param;
      operands.push_back({static_cast<double>(type.element_count()), exec::native::real_type_name(from), from, parameter});
    }
    const std::string own_name = exec::native::real_type_name(own);
    const profile::Roofline& roofline = profile_.roofline(profile::op_class(let.op), own_name);
    const profile::OpCost cost = profile::op_cost(profile_, roofline, elements, elements * precision::arithmetic_weight(function, let),
                                                  own_name, own, operands);
    out_.lets += runs * (roofline.latency + cost.throughput);
    out_.conversions += runs * cost.conversions;
  }

  const ir::Program& program_;
  const profile::Profile& profile_;
  const exec::native::Realization& realization_;
  RealType master_;
  StepPrice& out_;
};

}  // namespace

StepPrice StepPricer::price(const exec::native::Realization& realization) const {
  const RealType master = realization.default_type;
  StepPrice out;
  PriceWalk walk(program_, profile_, realization, out);
  for (const std::string& entry : entries_) {
    const ir::Function* function = program_.find_function(entry);
    internal_assert(function != nullptr);
    walk.walk(*function, "", 0, windows_, {});
  }
  const profile::Roofline& adamw = profile_.roofline(profile::OpClass::elementwise, exec::native::real_type_name(master));
  out.optimizer = parameter_tensors_ * adamw.latency +
                  std::max(kAdamWFlops * parameter_elements_ / adamw.rate,
                           kAdamWAccesses * parameter_elements_ * profile::type_bytes(exec::native::real_type_name(master)) / adamw.bandwidth);
  out.seconds = out.lets + out.conversions + out.optimizer;
  return out;
}

StepPrice predict_step(const ir::Program& program, const std::string& entry,
                       const exec::native::Realization& realization, const profile::Profile& profile, double windows) {
  const bool store = realization.sites.empty();  // as measure_step (presk train's --remat auto)
  const train::GradientProgram gradient =
      train::make_gradient_program(program, entry, train::parameter_layout(program), store);
  std::vector<std::string> entries = store ? std::vector<std::string>{gradient.fwd, gradient.bwd}
                                           : std::vector<std::string>{gradient.vjp};
  return StepPricer(gradient.program, entries, profile, windows).price(realization);
}

}  // namespace presk::step
