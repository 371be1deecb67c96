// `--sweep f64` (native_sweep.h): the native executor's values in binary64, handed to the
// reference's observers as binary64 views.
#include "precision/native_sweep.h"

#include <cmath>
#include <map>

#include "exec/native/realization.h"
#include "support/diagnostics.h"

namespace presk::precision {
namespace {

namespace native = exec::native;

// Adapts the native executor's per-let hook to a reference::Observer: real values as binary64
// views, integers as int64 views; a sum's, mean's or contraction's term statistics first when
// the observer asks for them (computed from the operands the let read, in binary64).
class ViewAdapter {
 public:
  explicit ViewAdapter(reference::Observer& observer) : observer_(observer) {}

  void operator()(const native::LetObservation& let) {
    const ir::Let& definition = let.function.lets[let.let_index];
    reference::SiteContext site{let.function, let.let_index, let.module_path, let.layers};
    if (observer_.wants_terms() && definition.type.kind == ir::ElemKind::Real) terms(site, definition, let.operands);
    const native::Value& value = let.value;
    reference::ValueView view{definition.type, static_cast<int64_t>(value.count())};
    native::Buffer<double> reals;
    std::vector<int64_t> integers;
    if (value.kind == native::Value::Kind::integer || value.kind == native::Value::Kind::boolean) {
      integers = native::load_integers(value);
      view.integers = integers.data();
    } else {
      reals = native::load_f64(value);
      view.f64 = reals.data();
    }
    observer_.on_value(site, view);
  }

 private:
  void terms(const reference::SiteContext& site, const ir::Let& let, const std::vector<const native::Value*>& operands) {
    if (let.op == ir::Op::sum || let.op == ir::Op::mean) {
      const native::Buffer<double> x = native::load_f64(*operands.at(0));
      observer_.on_terms(site, reference::binary64_reduction_terms(let, operands[0]->shape, x.data()));
    } else if (let.op == ir::Op::contract) {
      const native::Buffer<double> x = native::load_f64(*operands.at(0)), w = native::load_f64(*operands.at(1));
      observer_.on_terms(site, reference::binary64_contraction_terms(let, operands[0]->shape, x.data(),
                                                                     operands[1]->shape, w.data()));
    }
  }

  reference::Observer& observer_;
};

std::vector<native::Value> observed_run(const ir::Program& program, const std::string& entry,
                                        const native::PreparedParameters& parameters,
                                        const std::vector<Tensor>& inputs, reference::Observer& observer,
                                        int threads, const native::CotangentSink* cotangents = nullptr) {
  const native::Realization realization = native::uniform_realization(native::RealType::f64);
  std::vector<native::Value> arguments;
  for (size_t i = 0; i < inputs.size(); ++i) {
    arguments.push_back(native::argument_value(program, entry, i, inputs[i], realization));
  }
  ViewAdapter adapter(observer);
  const native::LetObserver hook = [&adapter](const native::LetObservation& let) { adapter(let); };
  native::ExecuteOptions options(threads, false);
  options.observer = &hook;
  options.cotangents = cotangents;
  return native::execute_values(program, entry, realization, std::move(arguments), parameters, options);
}

// The entry's inputs and a cotangent of ones for its (first) result.
std::vector<Tensor> vjp_inputs(const ir::Program& program, const std::string& entry,
                               const std::vector<reference::HostTensor>& inputs) {
  std::vector<Tensor> tensors = reference::to_tensors(inputs);
  const ir::Function& forward = reference::find_entry(program, entry);
  Tensor ones(ElementType::f64, forward.type_of(forward.results.at(0)).shape);
  for (uint64_t i = 0; i < ones.element_count(); ++i) ones.set(i, 1.0);
  tensors.push_back(std::move(ones));
  return tensors;
}

// Σ|vᵢ| of a real value's elements in order, added to `total` (in place where binary64).
void add_one_norm(const native::Value& value, double& total) {
  if (value.kind != native::Value::Kind::real || !value.storage) return;
  const native::Loaded<double> values = native::view_as<double>(value, native::RealType::f64);
  for (size_t i = 0; i < values.size; ++i) total += std::fabs(values.data[i]);
}

// An observer that looks at nothing.
class Blind final : public reference::Observer {
 public:
  void on_value(const reference::SiteContext&, const reference::ValueView&) override {}
};

}  // namespace

const char* sweep_name(Sweep sweep) { return sweep == Sweep::f64 ? "f64" : "exact"; }

Sweep parse_sweep(const std::string& text) {
  if (text == "exact") return Sweep::exact;
  if (text == "f64") return Sweep::f64;
  user_error("E1400").hint("--sweep exact (the reference at --bits, the default) or --sweep f64 (the native executor)")
      << "unknown sweep `" << text << "`";
  return Sweep::exact;
}

native::PreparedParameters binary64_parameters(const ir::Program& program, const reference::ParameterStore& parameters) {
  return native::prepare_parameters(program, native::uniform_realization(native::RealType::f64),
                                    [&](const std::string& path) { return parameters.view(path); });
}

std::vector<Tensor> observe_binary64(const ir::Program& program, const std::string& entry,
                                     const native::PreparedParameters& parameters,
                                     const std::vector<reference::HostTensor>& inputs,
                                     reference::Observer& observer, int threads) {
  std::vector<Tensor> outputs;
  for (const native::Value& value : observed_run(program, entry, parameters, reference::to_tensors(inputs), observer, threads)) {
    outputs.push_back(native::output_tensor(value));
  }
  return outputs;
}

reference::Sensitivity binary64_sensitivity(const ir::Program& program, const std::string& entry,
                                            const native::PreparedParameters& parameters,
                                            const std::vector<reference::HostTensor>& inputs, int threads,
                                            bool stream) {
  return reference::sensitivity_of_run(program, entry, [&](const ir::Function& vjp, reference::Observer& observer) {
    // Streamed, a parameter's cotangent arrives whole or a layer at a time in the order of its
    // stacked value: each added to its running 1-norm as it comes, then freed.
    std::map<std::string, double> streamed;
    const native::CotangentSink sink = [&](const std::string& path, const std::vector<int64_t>&,
                                           const native::Value& cotangent) { add_one_norm(cotangent, streamed[path]); };
    const std::vector<native::Value> cotangents = observed_run(
        program, vjp.name, parameters, vjp_inputs(program, entry, inputs), observer, threads, stream ? &sink : nullptr);
    std::vector<double> norms;
    for (size_t r = 0; r < cotangents.size(); ++r) {
      const auto found = cotangents[r].storage ? streamed.end() : streamed.find(vjp.result_names.at(r));
      internal_assert(cotangents[r].storage || found != streamed.end() || cotangents[r].kind != native::Value::Kind::real);
      double total = found == streamed.end() ? 0 : found->second;
      add_one_norm(cotangents[r], total);
      norms.push_back(total);
    }
    return norms;
  });
}

std::map<std::string, std::vector<double>> binary64_parameter_cotangents(
    const ir::Program& program, const std::string& entry, const native::PreparedParameters& parameters,
    const std::vector<reference::HostTensor>& inputs, int threads) {
  const ir::Function* vjp = program.find_function(entry + ".vjp");
  internal_assert(vjp != nullptr);
  const native::Realization realization = native::uniform_realization(native::RealType::f64);
  // Each cotangent copied out of the executor's values and its value released at once: the
  // whole set is held once, not also as tensors.
  std::vector<native::Value> arguments;
  const std::vector<Tensor> tensors = vjp_inputs(program, entry, inputs);
  for (size_t i = 0; i < tensors.size(); ++i) {
    arguments.push_back(native::argument_value(program, vjp->name, i, tensors[i], realization));
  }
  std::vector<native::Value> cotangents = native::execute_values(
      program, vjp->name, realization, std::move(arguments), parameters, native::ExecuteOptions(threads, false));
  std::map<std::string, std::vector<double>> out;
  for (size_t r = 0; r < cotangents.size(); ++r) {
    const std::string& name = vjp->result_names[r];
    const native::Value& value = cotangents[r];
    const bool binary64 = value.kind == native::Value::Kind::real && value.type == native::RealType::f64;
    if (name.starts_with("$") || !binary64) continue;  // an argument's, or integer
    const native::Loaded<double> values = native::view_as<double>(value, native::RealType::f64);
    out[name].assign(values.data, values.data + values.size);
    cotangents[r] = native::Value{};
  }
  return out;
}

}  // namespace presk::precision
