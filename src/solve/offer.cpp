// What the solver offers and prices (offer.h).
#include "solve/offer.h"

#include <algorithm>
#include <map>

#include <cmath>
#include <optional>

#include "exec/native/kernels.h"
#include "exec/native/realization.h"
#include "precision/quant_axis.h"
#include "solve/readers.h"

namespace presk::solve {
namespace {

// The 1-based source line a span starts on; 0 when the span is unknown.
int line_of(const Span& span) {
  if (!span.known() || span.begin > span.file->text.size()) return 0;
  const auto begin = span.file->text.begin();
  return 1 + static_cast<int>(std::count(begin, begin + span.begin, '\n'));
}

// The typable lets of the program by site name, with their source lines.
std::map<std::string, int> typable_sites(const ir::Program& program) {
  std::map<std::string, int> sites;
  for (const ir::Function& function : program.functions) {
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      if (exec::native::is_typable(function.lets[i])) sites[function.site_name(i)] = line_of(function.lets[i].span);
    }
  }
  return sites;
}

// Each parameter's line: that of the first `param` let reading it.
std::map<std::string, int> parameter_lines(const ir::Program& program, const ir::Function& entry) {
  std::map<std::string, int> lines;
  ir::for_each_param_let(program, entry, [&](const ir::Function& function, uint32_t i, const std::string& path) {
    lines.emplace(path, line_of(function.lets[i].span));
  });
  return lines;
}

Value site_value(const precision::SiteEnvelope& site, double per_output) {
  Value value;
  value.kind = ValueKind::site;
  value.key = site.site;
  value.op = site.op;
  value.type = site.type;
  value.elements = site.elements_per_sample > 0 ? site.elements_per_sample : site.elements;
  value.max_abs = site.max_abs;
  value.weight = site.weight;
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
    value.first_saving = value.ladder.size() > 1 ? value.ladder[0].bytes - value.ladder[1].bytes : 0;
    if (value.elements <= 1) {
      value.exclusion = Exclusion::one_element;
    } else if (!value.sensitivity) {
      value.exclusion = Exclusion::unknown_sensitivity;
    } else if (value.first_saving < offer.min_gain * offer.all_f64_bytes) {
      value.exclusion = Exclusion::min_gain;
    }
  }
}

// The menu's integer rungs on each eligible parameter, appended to its ladder as a frontier:
// by bytes, fewest last, each rung kept only where it saves bytes over the one before and its
// move is the larger (of two rungs of the same bytes, the smaller move; a group that does not
// divide the scale's axis is not offered).
void add_integer_rungs(const ir::Program& program, const ir::Function& entry,
                       const reference::ParameterStore& parameters, Offer& offer) {
  const std::map<std::string, precision::QuantAxis> axes = precision::quant_axes(program, entry);
  for (Value& value : offer.values) {
    const ir::Param* param = value.kind == ValueKind::parameter ? program.find_param(value.key) : nullptr;
    const std::vector<double>* weights = param ? parameters.find(param->path) : nullptr;
    if (param == nullptr || weights == nullptr || param->type.rank() - param->stack_depth < 2) continue;
    const auto axis = axes.find(param->path);
    value.over = axis != axes.end() ? axis->second.over : -2;
    const int64_t over = value.over + param->type.rank();
    std::vector<LadderStep> steps;
    for (size_t r = 0; r < offer.menu.rungs.size(); ++r) {
      const Rung& rung = offer.menu.rungs[r];
      if (!rung.integer() || (rung.group != 0 && param->type.shape[over] % rung.group != 0)) continue;
      const double bytes = precision::bytes_at_rest(*param, rung.bits, value.over, rung.group);
      steps.push_back(LadderStep{static_cast<int>(r), bytes, integer_move(*weights, *param, over, rung)});
    }
    // Most bytes first; among equal bytes the smaller move, then the menu's order.
    std::stable_sort(steps.begin(), steps.end(), [](const LadderStep& a, const LadderStep& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.move < b.move;
    });
    std::vector<LadderStep> frontier;
    for (const LadderStep& step : steps) {
      if (step.bytes >= value.ladder.back().bytes) continue;
      if (!frontier.empty() && step.bytes >= frontier.back().bytes) continue;  // same bytes, larger move
      while (!frontier.empty() && frontier.back().move >= step.move) frontier.pop_back();  // dominated
      frontier.push_back(step);
    }
    value.ladder.insert(value.ladder.end(), frontier.begin(), frontier.end());
  }
}

}  // namespace

std::vector<double> quantized_values(const std::vector<double>& weights, const ir::Param& param, int64_t over,
                                     const Rung& rung) {
  const exec::native::QuantizedWeights q = exec::native::quantize(
      weights, param.type.shape, rung.bits, over, rung.scheme == exec::native::QuantScheme::pow2, rung.group);
  std::vector<double> out(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) out[i] = q.value(i);
  return out;
}

double integer_move(const std::vector<double>& weights, const ir::Param& param, int64_t over, const Rung& rung) {
  const std::vector<double> moved = quantized_values(weights, param, over, rung);
  double move = 0;
  for (size_t i = 0; i < weights.size(); ++i) move = std::max(move, std::fabs(moved[i] - weights[i]));
  return move;
}

const char* exclusion_name(Exclusion exclusion) {
  switch (exclusion) {
    case Exclusion::offered: return "offered";
    case Exclusion::one_element: return "rule 1";
    case Exclusion::unknown_sensitivity: return "unknown";
    case Exclusion::min_gain: return "rule 2";
    case Exclusion::no_effect: return "no effect";
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
                 const precision::Envelope& envelope, const Menu& menu, double min_gain,
                 const reference::ParameterStore* parameters) {
  Offer offer;
  offer.menu = menu;
  offer.min_gain = min_gain;
  offer.output_elements = 0;
  for (const ir::ValueRef& result : entry.results) offer.output_elements += entry.type_of(result).element_count();
  offer.output_elements = std::max<int64_t>(offer.output_elements, 1);
  const double per_output = static_cast<double>(offer.output_elements);
  const std::map<std::string, int> typable = typable_sites(program);
  for (const precision::SiteEnvelope& site : envelope.sites) {
    const auto found = typable.find(site.site);
    if (found == typable.end()) continue;
    if (site.elements_per_sample <= 0) offer.per_sample_counts = false;
    offer.values.push_back(site_value(site, per_output));
    offer.values.back().line = found->second;
  }
  const std::map<std::string, int> lines = parameter_lines(program, entry);
  for (const precision::ParameterEnvelope& parameter : envelope.parameters) {
    offer.values.push_back(parameter_value(parameter, per_output));
    if (const auto found = lines.find(parameter.path); found != lines.end()) offer.values.back().line = found->second;
  }
  for (Value& value : offer.values) {
    for (size_t r = 0; r < menu.rungs.size(); ++r) {
      if (!menu.rungs[r].integer()) value.ladder.push_back({static_cast<int>(r), value.elements * menu.rungs[r].bytes, 0});
    }
  }
  if (menu.has_integers() && parameters != nullptr) add_integer_rungs(program, entry, *parameters, offer);
  for (const Value& value : offer.values) offer.all_f64_bytes += value.ladder[0].bytes;
  link_readers(find_readers(program, entry), offer);
  apply_rules(offer);
  return offer;
}

}  // namespace presk::solve
