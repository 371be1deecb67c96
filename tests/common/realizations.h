// The realizations every example is tested under (the native bits test, the bound's soundness
// test): uniform f64, f32, bf16; blocked-64; interleaved-8 in f32 and f64; a mixed one (sites
// and parameters in f64/bf16); int8 absmax, int4 pow2 and int8 over f64. Each is validated
// against the program and named in `origin`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "exec/native/realization.h"
#include "ir/sites.h"

namespace presk::testing {

inline std::vector<exec::native::Realization> test_realizations(const ir::Program& program) {
  using namespace exec::native;
  std::vector<std::pair<std::string, Realization>> named = {{"f64", uniform_realization(RealType::f64)},
                                                            {"f32", uniform_realization(RealType::f32)},
                                                            {"bf16", uniform_realization(RealType::bf16)}};
  Realization blocked = uniform_realization(RealType::f32);
  blocked.order = {OrderKind::blocked, 64, 1};
  Realization interleaved = uniform_realization(RealType::f32);
  interleaved.order = {OrderKind::interleaved, 0, 8};
  Realization interleaved_f64 = interleaved;
  interleaved_f64.default_type = RealType::f64;
  Realization mixed = uniform_realization(RealType::f32);
  int n = 0;
  for (const ir::Site& site : ir::site_table(program)) {
    const bool typable = site.type.kind == ir::ElemKind::Real && !site.type.is_tuple() && site.op != ir::Op::param &&
                         ir::op_info(site.op).family != ir::OpFamily::Control;
    if (typable && n % 3 != 2) mixed.sites[site.name] = n % 3 == 0 ? RealType::f64 : RealType::bf16;
    n += typable;
  }
  Realization int8 = uniform_realization(RealType::f32), int4 = int8, int8_f64 = int8;
  int8_f64.default_type = RealType::f64;
  for (size_t i = 0; i < program.params.size(); ++i) {
    const ir::Param& param = program.params[i];
    if (param.type.kind != ir::ElemKind::Real) continue;
    if (i % 2 == 1) mixed.params[param.path] = RealType::bf16;
    if (param.type.rank() >= 2) {
      int8.quant[param.path] = {8, -2, QuantScheme::absmax};
      int8_f64.quant[param.path] = {8, -1, QuantScheme::absmax};
      int4.quant[param.path] = {4, -2, QuantScheme::pow2};
    }
  }
  named.insert(named.end(), {{"blocked-64", blocked}, {"interleaved-8", interleaved},
                             {"interleaved-8-f64", interleaved_f64}, {"mixed", mixed},
                             {"int8", int8}, {"int4", int4}, {"int8-f64", int8_f64}});
  std::vector<Realization> all;
  for (auto& [name, realization] : named) {
    realization.origin = name;
    validate_realization(realization, program);
    all.push_back(realization);
  }
  return all;
}

}  // namespace presk::testing
