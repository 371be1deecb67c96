// What the solver offers and prices (offer.h).
#include "solve/offer.h"

#include <algorithm>
#include <map>

#include "exec/native/realization.h"
#include "solve/readers.h"

namespace presk::solve {
namespace {

// The typable lets of the program by site name.
std::map<std::string, bool> typable_sites(const ir::Program& program) {
  std::map<std::string, bool> sites;
  for (const ir::Function& function : program.functions) {
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      if (exec::native::is_typable(function.lets[i])) sites[function.site_name(i)] = true;
    }
  }
  return sites;
}

Value site_value(const precision::SiteEnvelope& site, double per_output) {
  Value value;
  value.kind = ValueKind::site;
  value.key = site.site;
  value.op = site.op;
  value.type = site.type;
  value.elements = site.elements_per_sample > 0 ? site.elements_per_sample : site.elements;
  value.max_abs = site.max_abs;
  value.rounding = site.rounding;
  if (site.sensitivity) value.sensitivity = *site.sensitivity / per_output;
  return value;
}

Value parameter_value(const precision::ParameterEnvelope& parameter, double per_output) {
  Value value;
  value.kind = ValueKind::parameter;
  value.key = parameter.path;
  value.op = "param";
  value.type = parameter.type;
  value.elements = parameter.elements;
  value.max_abs = parameter.max_abs;
  value.rounding = parameter.rounding;
  if (parameter.sensitivity) value.sensitivity = *parameter.sensitivity / per_output;
  return value;
}

void link_readers(const ReaderMap& map, Offer& offer) {
  std::map<std::string, int> sites;
  for (size_t i = 0; i < offer.values.size(); ++i) {
    if (offer.values[i].kind == ValueKind::site) sites[offer.values[i].key] = static_cast<int>(i);
  }
  for (Value& value : offer.values) {
    const auto& table = value.kind == ValueKind::site ? map.of_site : map.of_parameter;
    const auto found = table.find(value.key);
    if (found == table.end()) continue;
    for (const std::string& reader : found->second) {
      if (const auto index = sites.find(reader); index != sites.end()) value.readers.push_back(index->second);
    }
  }
}

void apply_rules(Offer& offer) {
  for (Value& value : offer.values) {
    value.first_saving =
        offer.menu.rungs.size() > 1 ? value.elements * (offer.menu.rungs[0].bytes - offer.menu.rungs[1].bytes) : 0;
    if (value.elements <= 1) {
      value.exclusion = Exclusion::one_element;
    } else if (!value.sensitivity) {
      value.exclusion = Exclusion::unknown_sensitivity;
    } else if (value.first_saving < offer.min_gain * offer.all_f64_bytes) {
      value.exclusion = Exclusion::min_gain;
    }
  }
}

}  // namespace

const char* exclusion_name(Exclusion exclusion) {
  switch (exclusion) {
    case Exclusion::offered: return "offered";
    case Exclusion::one_element: return "rule 1";
    case Exclusion::unknown_sensitivity: return "unknown";
    case Exclusion::min_gain: return "rule 2";
  }
  return "?";
}

int Offer::find(ValueKind kind, const std::string& key) const {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].kind == kind && values[i].key == key) return static_cast<int>(i);
  }
  return -1;
}

int Offer::offered_count() const {
  int count = 0;
  for (const Value& value : values) count += value.offered();
  return count;
}

Offer make_offer(const ir::Program& program, const ir::Function& entry,
                 const precision::Envelope& envelope, const Menu& menu, double min_gain) {
  Offer offer;
  offer.menu = menu;
  offer.min_gain = min_gain;
  offer.output_elements = 0;
  for (const ir::ValueRef& result : entry.results) offer.output_elements += entry.type_of(result).element_count();
  offer.output_elements = std::max<int64_t>(offer.output_elements, 1);
  const double per_output = static_cast<double>(offer.output_elements);
  const std::map<std::string, bool> typable = typable_sites(program);
  for (const precision::SiteEnvelope& site : envelope.sites) {
    if (!typable.count(site.site)) continue;
    if (site.elements_per_sample <= 0) offer.per_sample_counts = false;
    offer.values.push_back(site_value(site, per_output));
  }
  for (const precision::ParameterEnvelope& parameter : envelope.parameters) {
    offer.values.push_back(parameter_value(parameter, per_output));
  }
  for (const Value& value : offer.values) offer.all_f64_bytes += value.elements * menu.rungs[0].bytes;
  link_readers(find_readers(program, entry), offer);
  apply_rules(offer);
  return offer;
}

}  // namespace presk::solve
