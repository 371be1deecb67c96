// magnitudes.h: the envelope's, or the stated row's measured by an observer on the reference.
#include "proof/magnitudes.h"

#include <mpfr.h>

#include <cmath>

#include "exec/reference/arith_mpfr.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/observer.h"

namespace presk::proof {
namespace {

// Per site and evaluation: the elements the statement needs; their largest |exact value|.
class RowObserver final : public reference::Observer {
 public:
  std::map<std::string, std::map<int64_t, std::vector<int64_t>>> wanted;
  Magnitudes found;

  void on_value(const reference::SiteContext& site, const reference::ValueView& value) override {
    const std::string name = site.site_name();
    const int64_t occurrence = seen_[name]++;
    auto by_site = wanted.find(name);
    if (by_site == wanted.end() || value.mpfr == nullptr) return;
    auto elements = by_site->second.find(occurrence);
    if (elements == by_site->second.end()) return;
    double& m = found[name];
    for (int64_t i : elements->second)
      m = std::max(m, std::fabs(mpfr_get_d(&value.mpfr[i], MPFR_RNDA)));
  }

 private:
  std::map<std::string, int64_t> seen_;
};

}  // namespace

Magnitudes input_magnitudes(const ir::Function& entry,
                            const std::vector<double>& argument_max_abs) {
  Magnitudes magnitudes;
  for (size_t i = 0; i < entry.argument_names.size() && i < argument_max_abs.size(); ++i) {
    magnitudes["argument " + entry.argument_names[i]] = argument_max_abs[i];
  }
  return magnitudes;
}

Magnitudes envelope_magnitudes(const precision::Envelope& envelope, const ir::Function& entry,
                               const std::vector<double>& argument_max_abs) {
  Magnitudes magnitudes = input_magnitudes(entry, argument_max_abs);
  for (const precision::SiteEnvelope& site : envelope.sites) magnitudes[site.site] = site.max_abs;
  return magnitudes;
}

Magnitudes row_magnitudes(const Statement& statement, const ir::Program& program,
                          const ir::Function& entry, const reference::ParameterStore& parameters,
                          const std::vector<reference::HostTensor>& inputs, long bits) {
  RowObserver observer;
  Magnitudes magnitudes;
  for (size_t i = 0; i < statement.scalars.size(); ++i) {
    const Scalar& s = statement.scalars[i];
    if (!statement.needed[i] || s.site.empty()) continue;
    if (s.site.rfind("argument ", 0) == 0) {
      for (size_t a = 0; a < entry.argument_names.size(); ++a) {
        if (s.site != "argument " + entry.argument_names[a]) continue;
        double& m = magnitudes[s.site];
        m = std::max(m, std::fabs(inputs[a].reals.at(s.element)));
      }
      continue;
    }
    observer.wanted[s.site][s.occurrence].push_back(s.element);
  }
  reference::MpfrArith arith(bits);
  std::vector<reference::Value<reference::MpfrArith>> arguments;
  for (const reference::HostTensor& host : inputs)
    arguments.push_back(reference::to_value(arith, host));
  reference::RunOptions options;
  options.bits = bits;
  options.observer = &observer;
  reference::run_function<reference::MpfrArith>(program, entry, parameters, arguments, options);
  for (const auto& [site, m] : observer.found) magnitudes[site] = m;
  return magnitudes;
}

}  // namespace presk::proof
