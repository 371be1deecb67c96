// Parameter values and entry inputs from the seed (support/random.h); docs/reference.md
// states the rules.
#include "exec/reference/parameters.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>

#include "support/diagnostics.h"
#include "support/random.h"

namespace presk::reference {

void ParameterStore::set(const std::string& path, std::vector<double> values) {
  values_[path] = Held{std::move(values), {}, nullptr};
}

void ParameterStore::set_view(const std::string& path, ParamView view) {
  values_[path] = Held{{}, std::move(view), nullptr};
}

ParamView ParameterStore::view(const std::string& path) const {
  auto found = values_.find(path);
  if (found == values_.end()) return {};
  return found->second.view ? found->second.view : ParamView(&found->second.values);
}

const std::vector<double>* ParameterStore::find(const std::string& path) const {
  auto found = values_.find(path);
  if (found == values_.end()) return nullptr;
  const Held& held = found->second;
  if (!held.view) return &held.values;
  std::lock_guard<std::mutex> lock(*widening_);
  if (!held.widened) held.widened = std::make_shared<const std::vector<double>>(held.view.widened());
  return held.widened.get();
}

double synthesize_element(const ir::Param& param, uint64_t seed, uint64_t index) {
  const ir::Initializer& init = param.init;
  switch (init.kind) {
    case ir::Initializer::Kind::Zeros: return 0.0;
    case ir::Initializer::Kind::Ones: return 1.0;
    case ir::Initializer::Kind::Normal: return random::normal(seed, random::stream_of(param.path), index, init.a);
    case ir::Initializer::Kind::Uniform: return random::uniform(seed, random::stream_of(param.path), index, init.a, init.b);
  }
  internal_assert(false);
  return 0.0;
}

namespace {

std::vector<double> synthesize_one(const ir::Param& param, uint64_t seed) {
  auto count = static_cast<size_t>(param.type.element_count());
  std::vector<double> values(count);
  tbb::parallel_for(size_t{0}, count, [&](size_t i) { values[i] = synthesize_element(param, seed, i); });
  return values;
}

}  // namespace

ParameterStore synthesize_parameters(const ir::Program& program, uint64_t seed, int threads) {
  ParameterStore store;
  tbb::task_arena arena(std::max(1, threads));
  arena.execute([&] {
    for (const ir::Param& param : program.params) store.set(param.path, synthesize_one(param, seed));
  });
  return store;
}

int64_t default_token_range(const ir::Program& program) {
  int64_t rows = 0, classes = 0;
  for (const ir::Function& function : program.functions) {
    for (const ir::Let& let : function.lets) {
      if (let.op == ir::Op::embed) {
        int64_t n = function.type_of(let.operands[0]).shape.at(0);
        rows = rows == 0 ? n : std::min(rows, n);
      } else if (let.op == ir::Op::cross_entropy) {
        int64_t n = function.type_of(let.operands[0]).shape.back();
        classes = classes == 0 ? n : std::min(classes, n);
      }
    }
  }
  if (rows > 0) return rows;
  if (classes > 0) return classes;
  user_error("E0530").hint("pass --token-range V to draw integer inputs uniformly from [0, V)")
      << "the program has no embed or cross_entropy to bound its integer inputs";
  return 0;
}

std::vector<HostTensor> synthesize_inputs(const ir::Function& entry, uint64_t seed,
                                          int64_t token_range, int64_t sample) {
  std::vector<HostTensor> inputs;
  for (size_t k = 0; k < entry.argument_types.size(); ++k) {
    HostTensor host;
    host.type = entry.argument_types[k];
    uint64_t stream = random::stream_of("input." + entry.argument_names[k]);
    auto count = static_cast<uint64_t>(host.type.element_count());
    uint64_t first = static_cast<uint64_t>(sample) * count;
    for (uint64_t i = 0; i < count; ++i) {
      switch (host.type.kind) {
        case ir::ElemKind::Real: host.reals.push_back(random::normal(seed, stream, first + i, 1.0)); break;
        case ir::ElemKind::Int: host.integers.push_back(random::token(seed, stream, first + i, token_range)); break;
        case ir::ElemKind::Bool: host.integers.push_back(random::token(seed, stream, first + i, 2)); break;
      }
    }
    inputs.push_back(std::move(host));
  }
  return inputs;
}

}  // namespace presk::reference
