// `presk quantize PROGRAM --list`: every real parameter with its shape, element count, bytes at
// rest in each type of the menu (integer rungs with their f32 scales), and the axis its
// integer scales run along (precision/quant_axis.h: the one its readers contract, else −2).
// The representation/arithmetic split (`presk quantize PROGRAM --entry E --realize R …`) is to
// come.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/pipeline.h"
#include "precision/quant_axis.h"
#include "support/diagnostics.h"

namespace presk::cli {
namespace {

struct QuantizeOptions {
  std::string program;
  std::string entry;  // empty: every entry (an axis they disagree on is −2)
  BindingOptions bindings;
  bool list = false;
};

struct Row {
  const ir::Param* param;
  precision::QuantAxis axis;
};

// Bytes at rest of `elements` in `bits` per element plus one f32 scale per index of every axis
// but the scale's (integer rungs; `extent` the scale axis's length, 0 for a float type).
double bytes_at_rest(const ir::Param& param, int bits, int64_t over) {
  const double elements = static_cast<double>(param.type.element_count());
  if (bits >= 16) return elements * bits / 8;
  const int64_t rank = param.type.rank();
  const int64_t axis = over < 0 ? over + rank : over;
  const double scales = elements / static_cast<double>(param.type.shape[axis]);
  return std::ceil(elements * bits / 8) + 4 * scales;
}

std::vector<Row> rows_of(const ir::Program& program, const std::string& entry) {
  std::map<std::string, precision::QuantAxis> merged;
  for (const ir::Function& function : program.functions) {
    if (!function.is_entry || (!entry.empty() && function.name != entry)) continue;
    for (const auto& [path, axis] : precision::quant_axes(program, function)) {
      auto [it, fresh] = merged.emplace(path, axis);
      if (fresh || it->second.over == axis.over) continue;
      it->second = {-2, false, "its entries read it along different axes"};
    }
  }
  std::vector<Row> rows;
  for (const ir::Param& param : program.params) {
    if (param.type.kind != ir::ElemKind::Real) continue;
    rows.push_back({&param, merged.count(param.path) ? merged[param.path] : precision::QuantAxis{-2, false, "not read"}});
  }
  return rows;
}

int run_quantize(const QuantizeOptions& options, const GlobalOptions& global) {
  if (!options.list) {
    user_error("E1115").hint("presk quantize PROGRAM --list (the representation/arithmetic split is to come)")
        << "presk quantize needs --list";
  }
  const ir::Program program =
      lang::compile(lang::read_source(options.program), frontend_options(options.bindings, options.entry));
  const std::vector<Row> rows = rows_of(program, options.entry);
  if (global.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const Row& row : rows) {
      const ir::Param& p = *row.param;
      const bool integer = p.type.rank() >= 2;
      nlohmann::ordered_json bytes = {{"f64", bytes_at_rest(p, 64, 0)}, {"f32", bytes_at_rest(p, 32, 0)},
                                      {"bf16", bytes_at_rest(p, 16, 0)}};
      if (integer) {
        bytes["int8"] = bytes_at_rest(p, 8, row.axis.over);
        bytes["int4"] = bytes_at_rest(p, 4, row.axis.over);
      }
      out.push_back({{"path", p.path}, {"type", ir::type_to_string(p.type)}, {"elements", p.type.element_count()},
                     {"bytes", bytes}, {"over", row.axis.over}, {"contracted", row.axis.contracted},
                     {"why", row.axis.why}, {"integer", integer}});
    }
    std::cout << out.dump(2) << '\n';
    return 0;
  }
  size_t width = 4;
  for (const Row& row : rows) width = std::max(width, row.param->path.size());
  std::cout << fmt::format("{:<{}}  {:<16} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}  {:>4}  {}\n", "path", width, "type",
                           "elements", "f64 B", "f32 B", "bf16 B", "int8 B", "int4 B", "over", "why");
  for (const Row& row : rows) {
    const ir::Param& p = *row.param;
    const bool integer = p.type.rank() >= 2;
    std::cout << fmt::format("{:<{}}  {:<16} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}  {:>4}  {}\n", p.path, width,
                             ir::type_to_string(p.type), p.type.element_count(), bytes_at_rest(p, 64, 0),
                             bytes_at_rest(p, 32, 0), bytes_at_rest(p, 16, 0),
                             integer ? fmt::format("{}", bytes_at_rest(p, 8, row.axis.over)) : "-",
                             integer ? fmt::format("{}", bytes_at_rest(p, 4, row.axis.over)) : "-",
                             integer ? std::to_string(row.axis.over) : "-", integer ? row.axis.why : "rank below 2: floats only");
  }
  std::cout << "# integer bytes include one f32 scale per index of every axis but `over`\n";
  return 0;
}

Registration registration("quantize", 38, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<QuantizeOptions>();
  CLI::App* command = app.add_subcommand("quantize", "Integer weights: --list the parameters, their bytes per type and scale axes");
  command->add_option("program", options->program, "The .psk program")->required();
  command->add_flag("--list", options->list, "List every real parameter: shape, bytes at rest per type, scale axis");
  command->add_option("--entry", options->entry, "The entry whose readers decide the axes (default: every entry)");
  add_binding_options(*command, options->bindings);
  add_json_option(*command, global);
  return [options, &global] { return run_quantize(*options, global); };
});

}  // namespace
}  // namespace presk::cli
