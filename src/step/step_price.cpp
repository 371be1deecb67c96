// The predicted time of a training step (step_price.h).
#include "step/step_price.h"

#include <algorithm>
#include <functional>

#include "precision/calibrate.h"
#include "support/diagnostics.h"
#include "train/batch_gradient.h"

namespace presk::step {
namespace {

using exec::native::RealType;

double bytes_per_element(RealType type) { return type == RealType::f64 ? 8 : type == RealType::f32 ? 4 : 2; }

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
    : program_(gradient_program), profile_(profile) {
  for (const std::string& entry : entries) {
    for (const auto& [name, runs] : step_runs(program_, entry, windows)) runs_[name] += runs;
  }
  for (const ir::Param& param : program_.params) {
    if (param.type.kind != ir::ElemKind::Real) continue;
    parameter_elements_ += static_cast<double>(param.type.element_count());
    parameter_tensors_ += 1;
  }
}

StepPrice StepPricer::price(const exec::native::Realization& realization) const {
  const RealType master = realization.default_type;
  const std::string master_name = exec::native::real_type_name(master);
  StepPrice out;
  for (const auto& [name, runs] : runs_) {
    const ir::Function& function = *program_.find_function(name);
    std::vector<RealType> types(function.lets.size(), master);
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      const ir::Let& let = function.lets[i];
      if (!exec::native::is_typable(let)) continue;
      const RealType own = types[i] = realization.site_type(function.site_name(i));
      const double elements = static_cast<double>(let.type.element_count());
      double bytes = elements * bytes_per_element(own), conversions = 0;
      for (const ir::ValueRef& operand : let.operands) {
        const ir::Type& type = function.type_of(operand);
        if (type.kind != ir::ElemKind::Real || type.is_tuple()) continue;
        const double n = static_cast<double>(type.element_count());
        RealType from = own;  // an argument or a handed-on value: at the reader's type
        if (operand.kind == ir::ValueRef::Kind::Let) {
          const ir::Let& source = function.lets[operand.index];
          if (exec::native::is_typable(source)) {
            from = types[operand.index];
            conversions += n * profile_.edge_cost(from, own);
          } else if (source.op == ir::Op::param) {
            from = master;
            if (master != own) conversions += n * profile_.load_cost(master_name, own);
          }
        }
        bytes += n * bytes_per_element(from);
      }
      const profile::Roofline& roofline =
          profile_.roofline(profile::op_class(let.op), exec::native::real_type_name(own));
      out.lets += runs * roofline.predict(elements * precision::arithmetic_weight(function, let), bytes);
      out.conversions += runs * conversions;
    }
  }
  const profile::Roofline& adamw = profile_.roofline(profile::OpClass::elementwise, master_name);
  out.optimizer = parameter_tensors_ * adamw.latency +
                  std::max(kAdamWFlops * parameter_elements_ / adamw.rate,
                           kAdamWAccesses * parameter_elements_ * bytes_per_element(master) / adamw.bandwidth);
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
