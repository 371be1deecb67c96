// A batch's loss and gradient on the native executor (batch_gradient.h).
#include "train/batch_gradient.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "ad/split.h"
#include "ad/vjp.h"
#include "support/diagnostics.h"

namespace presk::train {
namespace {

// Runs body(k) for k in [0, count) on up to `threads` workers (each k independent).
template <class Body>
void for_each_window(size_t count, int threads, const Body& body) {
  if (threads <= 1 || count <= 1) {
    for (size_t k = 0; k < count; ++k) body(k);
    return;
  }
  tbb::task_arena arena(threads);
  arena.execute([&] { tbb::parallel_for(size_t{0}, count, [&](size_t k) { body(k); }); });
}

double scalar_of(const Tensor& tensor) {
  internal_assert(tensor.element_count() == 1);
  return tensor.get(0);
}

// Σ_b gradients[b] in window order, then / B, in C (the master's compute type), each result
// rounded to the master type.
template <typename C>
std::vector<double> mean_in(const std::vector<const Tensor*>& windows, RealType master) {
  const size_t n = windows.front()->element_count();
  std::vector<double> mean(n);
  const C count = C(static_cast<double>(windows.size()));
  for (size_t i = 0; i < n; ++i) {
    C sum = C(windows[0]->get(i));
    for (size_t b = 1; b < windows.size(); ++b) sum = sum + C(windows[b]->get(i));
    C value = sum / count;
    if constexpr (std::is_same_v<C, float>) {
      if (master == RealType::bf16) value = exec::native::round_bf16(value);
    }
    mean[i] = value;
  }
  return mean;
}

}  // namespace

GradientProgram make_gradient_program(const ir::Program& forward, const std::string& entry,
                                      const std::vector<ParameterState>& layout, bool store) {
  const ir::Function* function = forward.find_function(entry);
  internal_assert(function != nullptr);
  const bool scalar = function->results.size() == 1 &&
                      function->type_of(function->results[0]).kind == ir::ElemKind::Real &&
                      function->type_of(function->results[0]).shape.empty();
  if (!scalar || layout.empty()) {
    user_error("E1003").hint(
        "train an entry such as examples/gpt.psk's `loss(p : GPT, tokens : Z[T + 1]) -> R`")
        << "`" << entry << "` cannot be trained: "
        << (scalar ? "it reads no parameter" : "its result is not a scalar R");
  }
  GradientProgram gradient{ad::add_vjps(forward), entry, ad::vjp_name(entry), "", "", {}};
  if (store) {
    gradient.program = ad::add_fwd_bwd(gradient.program, entry, ad::Remat::Store);
    gradient.fwd = ad::fwd_name(entry);
    gradient.bwd = ad::bwd_name(entry);
  }
  const ir::Function* results = gradient.program.find_function(store ? gradient.bwd : gradient.vjp);
  internal_assert(results != nullptr);
  for (const ParameterState& p : layout) {
    int found = -1;
    for (size_t k = 0; k < results->result_names.size(); ++k) {
      if (results->result_names[k] == p.path) found = static_cast<int>(k);
    }
    gradient.result_of_parameter.push_back(found);
  }
  return gradient;
}

exec::native::PreparedParameters prepare(const ir::Program& program,
                                         const exec::native::Realization& realization,
                                         const TrainState& state) {
  std::map<std::string, const std::vector<double>*> by_path;
  for (const ParameterState& p : state.parameters) by_path[p.path] = &p.theta;
  return exec::native::prepare_parameters(program, realization, [&](const std::string& path) {
    auto found = by_path.find(path);
    return found == by_path.end() ? nullptr : found->second;
  });
}

BatchGradient batch_gradient(const GradientProgram& gradient,
                             const exec::native::Realization& realization,
                             const exec::native::PreparedParameters& parameters,
                             const std::vector<Tensor>& rows, uint64_t seed, int64_t step,
                             RealType master, int threads, exec::native::OpProfile* profile) {
  const size_t batch = rows.size();
  internal_assert(batch >= 1);
  std::vector<double> losses(batch);
  std::vector<std::vector<Tensor>> cotangents(batch);
  Tensor seed_cotangent(ElementType::f64, {});
  seed_cotangent.set(0, 1.0);
  std::vector<exec::native::OpProfile> profiles(profile ? batch : 0);  // one per window: no sharing
  for_each_window(batch, threads, [&](size_t b) {
    exec::native::ExecuteOptions options;
    if (profile) options.profile = &profiles[b];
    options.training =
        random::DropoutKey{seed, static_cast<uint64_t>(step), static_cast<uint64_t>(b)};
    if (gradient.fwd.empty()) {
      losses[b] = scalar_of(exec::native::execute(gradient.program, gradient.entry, realization,
                                                  {rows[b]}, parameters, options)
                                .at(0));
      cotangents[b] = exec::native::execute(gradient.program, gradient.vjp, realization,
                                            {rows[b], seed_cotangent}, parameters, options);
      return;
    }
    // E.fwd's values go to E.bwd as they are (no tensor in between: the same values).
    std::vector<exec::native::Value> kept = exec::native::execute_values(
        gradient.program, gradient.fwd, realization,
        {exec::native::argument_value(gradient.program, gradient.fwd, 0, rows[b], realization)}, parameters, options);
    losses[b] = scalar_of(exec::native::output_tensor(kept.at(0)));
    kept.push_back(exec::native::argument_value(gradient.program, gradient.bwd, kept.size(), seed_cotangent, realization));
    std::vector<exec::native::Value> results =
        exec::native::execute_values(gradient.program, gradient.bwd, realization, std::move(kept), parameters, options);
    for (const exec::native::Value& value : results) cotangents[b].push_back(exec::native::output_tensor(value));
  });
  for (const exec::native::OpProfile& window : profiles) {
    for (const auto& [op, time] : window) {
      (*profile)[op].seconds += time.seconds;
      (*profile)[op].calls += time.calls;
    }
  }
  BatchGradient result;
  for (double loss : losses) result.loss += loss;
  result.loss /= static_cast<double>(batch);
  for (int k : gradient.result_of_parameter) {
    if (k < 0) {
      result.gradients.emplace_back();  // filled with zeros by the caller's size
      continue;
    }
    std::vector<const Tensor*> windows;
    for (size_t b = 0; b < batch; ++b) windows.push_back(&cotangents[b].at(static_cast<size_t>(k)));
    result.gradients.push_back(master == RealType::f64 ? mean_in<double>(windows, master)
                                                       : mean_in<float>(windows, master));
  }
  return result;
}

double mean_loss(const ir::Program& program, const std::string& entry,
                 const exec::native::Realization& realization,
                 const exec::native::PreparedParameters& parameters,
                 const std::vector<Tensor>& rows, int threads) {
  std::vector<double> losses(rows.size());
  for_each_window(rows.size(), threads, [&](size_t k) {
    losses[k] = scalar_of(
        exec::native::execute(program, entry, realization, {rows[k]}, parameters, {}).at(0));
  });
  double sum = 0;
  for (double loss : losses) sum += loss;
  return rows.empty() ? 0.0 : sum / static_cast<double>(rows.size());
}

}  // namespace presk::train
