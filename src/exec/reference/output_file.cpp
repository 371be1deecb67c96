// The writer of output_file.h.
#include "exec/reference/output_file.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "exec/reference/arith_ball.h"
#include "exec/reference/arith_mpfr.h"
#include "support/diagnostics.h"
#include "support/safetensors.h"

namespace presk::reference {
namespace {

nlohmann::json record_json(const RunRecord& record, size_t samples) {
  return {{"program", record.program}, {"entry", record.entry},   {"arith", record.arith},
          {"bits", record.bits},       {"seed", record.seed},     {"offset", record.offset},
          {"samples", samples},        {"sampled", record.sampled},
          {"weights", record.weights}, {"data", record.data}};
}

// Result k of every sample as one tensor; its exact decimals (and radii) go to `metadata`.
template <class A>
Tensor output_tensor(const A& arith, const ir::Function& entry, size_t k,
                     const std::vector<std::vector<Value<A>>>& samples, bool sampled,
                     std::map<std::string, std::string>& metadata) {
  ir::Type type = entry.type_of(entry.results[k]);
  std::vector<int64_t> shape = type.shape;
  if (sampled) shape.insert(shape.begin(), static_cast<int64_t>(samples.size()));
  bool real = type.kind == ir::ElemKind::Real;
  Tensor tensor(real ? ElementType::f64 : ElementType::i64, shape);
  nlohmann::json exact = nlohmann::json::array(), radius = nlohmann::json::array();
  int digits = exact_digits(arith.bits());
  int64_t count = type.element_count();
  for (size_t s = 0; s < samples.size(); ++s) {
    const Value<A>& value = samples[s][k];
    internal_assert(value.size() == count);
    for (int64_t i = 0; i < count; ++i) {
      int64_t at = static_cast<int64_t>(s) * count + i;
      if (!real) {
        tensor.data_as<int64_t>()[at] = value.integers[i];
        continue;
      }
      tensor.data_as<double>()[at] = arith.to_double(value.real(i));
      exact.push_back(arith.to_decimal(value.real(i), digits));
      if constexpr (A::kIsBall) radius.push_back(arith.radius_decimal(value.real(i)));
    }
  }
  std::string name = output_name(entry, k);
  if (real) metadata["presk:exact:" + name] = exact.dump();
  if (real && A::kIsBall) metadata["presk:radius:" + name] = radius.dump();
  return tensor;
}

}  // namespace

std::string output_name(const ir::Function& entry, size_t k) {
  return entry.results.size() == 1 ? entry.name : entry.name + "." + std::to_string(k);
}

int exact_digits(long bits) {
  return static_cast<int>(std::ceil(static_cast<double>(bits) * 0.30102999566398120)) + 1;
}

template <class A>
void write_outputs(const std::string& path, const A& arith, const ir::Function& entry,
                   const std::vector<std::vector<Value<A>>>& samples, const RunRecord& record) {
  internal_assert(record.sampled || samples.size() == 1);
  std::map<std::string, std::string> metadata;
  std::vector<Tensor> tensors;
  for (size_t k = 0; k < entry.results.size(); ++k) {
    tensors.push_back(output_tensor(arith, entry, k, samples, record.sampled, metadata));
  }
  std::vector<NamedTensor> named;
  for (size_t k = 0; k < tensors.size(); ++k) named.push_back({output_name(entry, k), tensors[k]});
  metadata["presk:run"] = record_json(record, samples.size()).dump();
  write_safetensors(path, named, metadata);
}

template void write_outputs(const std::string&, const MpfrArith&, const ir::Function&,
                            const std::vector<std::vector<Value<MpfrArith>>>&, const RunRecord&);
template void write_outputs(const std::string&, const BallArith&, const ir::Function&,
                            const std::vector<std::vector<Value<BallArith>>>&, const RunRecord&);

}  // namespace presk::reference
