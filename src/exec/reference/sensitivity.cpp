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
  if (value.f64 != nullptr) {
    for (int64_t i = 0; i < value.count; ++i) total += std::fabs(value.f64[i]);
  } else if (value.mpfr != nullptr) {
    for (int64_t i = 0; i < value.count; ++i) total += std::fabs(mpfr_get_d(value.mpfr + i, MPFR_RNDN));
  }
  return total;
}

std::string forward_name_of(const std::string& vjp) { return vjp.substr(0, vjp.size() - kVjp.size()); }

// Folds each marked let's 1-norm into its sites, and, per fold callee `G.vjp`, the 1-norms of
// its first result (x̄ₗ, the cotangent the layer below receives) at layers l ≥ 1.
class AdjointNorms final : public Observer {
 public:
  AdjointNorms(const ir::Program& program, std::map<std::string, std::optional<double>>& sites)
      : program_(program), sites_(sites) {}

  void on_value(const SiteContext& site, const ValueView& value) override {
    const ir::Function& function = site.function;
    if (!function.name.ends_with(kVjp) || site.let_index >= function.lets.size()) return;
    const ir::ValueRef first = function.results.empty() ? ir::ValueRef::argument(0) : function.results[0];
    if (first == ir::ValueRef::let(site.let_index) && !site.layers.empty() && site.layers.back() >= 1) {
      carried_[function.name] += one_norm(value);
    }
    const std::vector<uint32_t>& forward = function.lets[site.let_index].adjoint_of;
    if (forward.empty()) return;
    double norm = one_norm(value);
    const ir::Function* primal = program_.find_function(forward_name_of(function.name));
    if (primal == nullptr) return;
    for (uint32_t j : forward) {
      std::optional<double>& total = sites_[primal->site_name(j)];
      total = total.value_or(0) + norm;
    }
  }

  // Σ over layers l ≥ 1 of ‖x̄ₗ‖₁ seen in `vjp` (0 when none was).
  double carried(const std::string& vjp) const {
    auto found = carried_.find(vjp);
    return found == carried_.end() ? 0 : found->second;
  }

 private:
  const ir::Program& program_;
  std::map<std::string, std::optional<double>>& sites_;
  std::map<std::string, double> carried_;
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

// Σ‖cotangent‖₁ over every run of `vjp` (the vjp of `callee`): the seed for the entry, the
// adjoint of each reached call or fold site of `callee` in a caller, and for a fold the x̄ each
// layer hands the one below. nullopt when no run is known, or when the callee is both called
// and folded (the layers could not be told apart).
std::optional<double> cotangent_total(const ir::Program& program, const ir::Function& vjp,
                                      const std::map<std::string, std::optional<double>>& sites,
                                      const AdjointNorms& observer, std::optional<double> seed) {
  std::string callee = forward_name_of(vjp.name);
  std::optional<double> total = seed;
  bool called = false, folded = false;
  for (const ir::Function& caller : program.functions) {
    if (caller.name.ends_with(kVjp)) continue;
    for (uint32_t j = 0; j < caller.lets.size(); ++j) {
      const ir::Let& let = caller.lets[j];
      if ((let.op != ir::Op::call && let.op != ir::Op::fold) || let.attrs.callee != callee) continue;
      (let.op == ir::Op::fold ? folded : called) = true;
      auto found = sites.find(caller.site_name(j));
      if (found != sites.end() && found->second) total = total.value_or(0) + *found->second;
    }
  }
  if (!folded) return total;
  if (called || vjp.results.empty() || vjp.results[0].kind != ir::ValueRef::Kind::Let) return std::nullopt;
  return total ? std::optional<double>(*total + observer.carried(vjp.name)) : std::nullopt;
}

// The sites whose adjoint is a vjp's cotangent argument, callers before callees.
void add_cotangent_sites(const ir::Program& program, const std::string& entry, double seed,
                         std::map<std::string, std::optional<double>>& sites, const AdjointNorms& observer) {
  for (size_t i = program.functions.size(); i-- > 0;) {
    const ir::Function& vjp = program.functions[i];
    if (!vjp.name.ends_with(kVjp) || vjp.cotangent_adjoint_of.empty()) continue;
    std::string forward = forward_name_of(vjp.name);
    std::optional<double> own_seed = forward == entry ? std::optional<double>(seed) : std::nullopt;
    std::optional<double> total = cotangent_total(program, vjp, sites, observer, own_seed);
    if (!total) continue;
    const ir::Function* primal = program.find_function(forward);
    if (primal == nullptr) continue;
    for (uint32_t j : vjp.cotangent_adjoint_of) sites[primal->site_name(j)] = *total;
  }
}

}  // namespace

Sensitivity sensitivity_of_run(const ir::Program& program, const std::string& entry, const VjpRun& run) {
  const ir::Function& forward = find_entry(program, entry);
  const ir::Function* vjp = program.find_function(entry + std::string(kVjp));
  internal_assert(vjp != nullptr);
  Sensitivity report;
  report.sites = unknown_sites(program);
  AdjointNorms observer(program, report.sites);
  std::vector<double> norms = run(*vjp, observer);
  internal_assert(norms.size() == vjp->result_names.size());
  const double seed = static_cast<double>(forward.type_of(forward.results[0]).element_count());
  add_cotangent_sites(program, entry, seed, report.sites, observer);
  for (size_t r = 0; r < norms.size(); ++r) {
    if (!vjp->result_names[r].starts_with("$")) report.parameters[vjp->result_names[r]] = norms[r];
  }
  return report;
}

Sensitivity sensitivity(const ir::Program& program, const std::string& entry,
                        const ParameterStore& parameters, std::vector<Value<MpfrArith>> arguments,
                        RunOptions options) {
  return sensitivity_of_run(program, entry, [&](const ir::Function& vjp, Observer& observer) {
    const ir::Function& forward = find_entry(program, entry);
    MpfrArith arith(options.bits);
    const ir::Type& result = forward.type_of(forward.results[0]);
    HostTensor ones{result, std::vector<double>(static_cast<size_t>(result.element_count()), 1.0), {}};
    arguments.push_back(to_value(arith, ones));
    options.observer = &observer;
    std::vector<Value<MpfrArith>> cotangents = run_function<MpfrArith>(program, vjp, parameters, arguments, options);
    std::vector<double> norms;
    for (const Value<MpfrArith>& cotangent : cotangents) {
      double total = 0;
      for (int64_t i = 0; cotangent.is_real() && i < cotangent.size(); ++i) {
        total += std::fabs(arith.to_double(cotangent.real(i)));
      }
      norms.push_back(total);
    }
    return norms;
  });
}

}  // namespace presk::reference
