// The sensitivity hook (sensitivity.h): an Observer that folds each marked adjoint into a
// 1-norm as the sweep passes, then the vjp's parameter cotangents' 1-norms.
#include "exec/reference/sensitivity.h"

#include <cmath>

#include "support/diagnostics.h"

namespace presk::reference {
namespace {

constexpr std::string_view kVjp = ".vjp";

// Σ|vᵢ| of a real view, in binary64 (each element rounded first).
double one_norm(const ValueView& value) {
  double total = 0;
  if (value.mpfr == nullptr) return total;
  for (int64_t i = 0; i < value.count; ++i) total += std::fabs(mpfr_get_d(value.mpfr + i, MPFR_RNDN));
  return total;
}

class AdjointNorms final : public Observer {
 public:
  explicit AdjointNorms(std::map<std::string, std::optional<double>>& sites) : sites_(sites) {}

  void on_value(const SiteContext& site, const ValueView& value) override {
    const ir::Function& function = site.function;
    if (!function.name.ends_with(kVjp) || site.let_index >= function.lets.size()) return;
    const std::optional<uint32_t>& forward = function.lets[site.let_index].adjoint_of;
    if (!forward) return;
    std::string forward_name = function.name.substr(0, function.name.size() - kVjp.size());
    std::optional<double>& total = sites_[forward_name + "/%" + std::to_string(*forward)];
    total = total.value_or(0) + one_norm(value);
  }

 private:
  std::map<std::string, std::optional<double>>& sites_;
};

// Every let of every function F with an F.vjp, as unknown.
std::map<std::string, std::optional<double>> unknown_sites(const ir::Program& program) {
  std::map<std::string, std::optional<double>> sites;
  for (const ir::Function& function : program.functions) {
    if (program.find_function(function.name + std::string(kVjp)) == nullptr) continue;
    for (uint32_t j = 0; j < function.lets.size(); ++j) sites[function.site_name(j)] = std::nullopt;
  }
  return sites;
}

}  // namespace

Sensitivity sensitivity(const ir::Program& program, const std::string& entry,
                        const ParameterStore& parameters, std::vector<Value<MpfrArith>> arguments,
                        RunOptions options) {
  const ir::Function& forward = find_entry(program, entry);
  const ir::Function* vjp = program.find_function(entry + std::string(kVjp));
  internal_assert(vjp != nullptr);
  MpfrArith arith(options.bits);
  const ir::Type& result = forward.type_of(forward.results[0]);
  HostTensor ones{result, std::vector<double>(static_cast<size_t>(result.element_count()), 1.0), {}};
  arguments.push_back(to_value(arith, ones));
  Sensitivity report;
  report.sites = unknown_sites(program);
  if (forward.results[0].kind == ir::ValueRef::Kind::Let) {
    report.sites[forward.site_name(forward.results[0].index)] = static_cast<double>(ones.reals.size());
  }
  AdjointNorms observer(report.sites);
  options.observer = &observer;
  std::vector<Value<MpfrArith>> cotangents = run_function<MpfrArith>(program, *vjp, parameters, arguments, options);
  for (size_t r = 0; r < cotangents.size(); ++r) {
    if (vjp->result_names[r].starts_with("$")) continue;
    double total = 0;
    for (int64_t i = 0; i < cotangents[r].size(); ++i) total += std::fabs(arith.to_double(cotangents[r].real(i)));
    report.parameters[vjp->result_names[r]] = total;
  }
  return report;
}

}  // namespace presk::reference
