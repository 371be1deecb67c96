// `presk quantize PROGRAM --list`: every real parameter with its shape, element count, bytes at
// rest in each type of the menu (integer rungs with their f32 scales), and the axis its
// integer scales run along (precision/quant_axis.h: the one its readers contract, else −2).
// The representation/arithmetic split (`presk quantize PROGRAM --entry E --realize R …`) is to
// come.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/pipeline.h"
#include "exec/native/realization.h"
#include "exec/reference/interpreter.h"
#include "precision/first_order.h"
#include "precision/quant_axis.h"
#include "precision/quantize_split.h"
#include "support/diagnostics.h"

namespace presk::cli {
namespace {

struct QuantizeOptions {
  RunInputOptions input;  // program, --entry (empty with --list: every entry), bindings, weights, data
  std::string realize;
  long bits = 128;
  bool list = false;
};

struct Row {
  const ir::Param* param;
  precision::QuantAxis axis;
};

using precision::bytes_at_rest;

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

nlohmann::ordered_json gap_json(const precision::MeasuredGap& gap, double magnitude) {
  return {{"absolute", gap.absolute}, {"relative", magnitude > 0 ? gap.absolute / magnitude : gap.absolute}};
}

bool scalar_entry(const ir::Function& entry) {
  return entry.results.size() == 1 && entry.type_of(entry.results[0]).kind == ir::ElemKind::Real &&
         entry.type_of(entry.results[0]).rank() == 0;
}

// The first-order predictions of the representation part (a scalar entry's): from the exact
// cotangents and the moves of every stored parameter.
std::optional<precision::FirstOrderPrediction> predictions(const PreparedRun& prepared,
                                                           const exec::native::Realization& realization,
                                                           const QuantizeOptions& options, const GlobalOptions& global) {
  if (!scalar_entry(*prepared.entry)) return std::nullopt;
  std::cerr << "presk quantize: the exact cotangents (" << prepared.count << " sample(s))\n";
  const precision::ParameterGradients gradients = precision::exact_parameter_gradients(
      prepared.program, *prepared.entry, prepared.parameters, prepared.count,
      [&](int64_t k) { return prepared.inputs(k, global.seed); }, options.bits, global.threads);
  const reference::ParameterStore stored = precision::stored_parameters(prepared.program, realization, prepared.parameters);
  return precision::combine(precision::first_order_sums(gradients, prepared.parameters, stored));
}

// The representation/arithmetic split of `--realize` on `--entry`.
int run_split(const QuantizeOptions& options, const GlobalOptions& global) {
  const PreparedRun prepared = prepare_run(options.input, global);
  const exec::native::Realization realization = exec::native::load_realization(options.realize, prepared.program);
  std::cerr << "presk quantize: the exact runs on the true and on the stored weights, and the native ones\n";
  const precision::QuantizeSplit split = precision::quantize_split(
      prepared.program, *prepared.entry, realization, prepared.parameters, prepared.count,
      [&](int64_t k) { return prepared.inputs(k, global.seed); }, options.bits, global.threads);
  const double m = split.representation.magnitude;  // max |exact output on the true weights|
  const std::optional<precision::FirstOrderPrediction> first = predictions(prepared, realization, options, global);
  const auto relative = [&](double x) { return m > 0 ? x / m : x; };
  if (global.json) {
    nlohmann::ordered_json out = {{"entry", prepared.entry->name}, {"realize", options.realize},
                                  {"samples", prepared.count}, {"bits", options.bits},
                                  {"weight_bytes", split.weight_bytes}, {"weight_bytes_f64", split.weight_bytes_f64},
                                  {"magnitude", m}, {"representation", gap_json(split.representation, m)},
                                  {"arithmetic", gap_json(split.arithmetic, m)}, {"total", gap_json(split.total, m)}};
    if (first) {
      out["first_order"] = {{"bound", relative(first->bound)}, {"signed", relative(first->signed_sum)},
                            {"rss", relative(first->rss)}, {"units", "relative, estimates of the representation part"}};
    }
    std::cout << out.dump(2) << '\n';
    return 0;
  }
  std::cout << fmt::format("presk quantize: `{}` of {} under {}, {} sample(s), exact at {} bits\n", prepared.entry->name,
                           options.input.program_path, options.realize, prepared.count, options.bits);
  std::cout << fmt::format("weights         {:.6g} bytes at rest (scales included), {:.6g} in f64\n", split.weight_bytes,
                           split.weight_bytes_f64);
  const auto line = [&](const char* name, const precision::MeasuredGap& gap, const char* what) {
    std::cout << fmt::format("{:<15} {:.3e} absolute, {:.3e} relative   ({})\n", name, gap.absolute,
                             m > 0 ? gap.absolute / m : gap.absolute, what);
  };
  line("representation", split.representation, "exact on the stored weights against exact on the true ones");
  line("arithmetic", split.arithmetic, "native against exact on the stored weights");
  line("total", split.total, "native against exact on the true weights");
  if (first) {
    std::cout << fmt::format("first order     bound Σ|g|·|δ| {:.3e}, signed Σ g·δ {:.3e}, rss √Σ(g·δ)² {:.3e} relative\n"
                             "                (estimates of the representation part from the exact cotangents g; not bounds)\n",
                             relative(first->bound), relative(first->signed_sum), relative(first->rss));
  } else {
    std::cout << "first order     - (the predictions need a scalar entry: a tensor's Σ g·δ is not its gap)\n";
  }
  std::cout << fmt::format("relative: to the largest |exact output| on the true weights, {:.4e}\n", m);
  return 0;
}

int run_quantize(const QuantizeOptions& options, const GlobalOptions& global) {
  if (!options.list) {
    if (options.input.entry.empty() || options.realize.empty()) {
      user_error("E1115").hint("presk quantize PROGRAM --list, or presk quantize PROGRAM --entry E --realize R")
          << "presk quantize needs --list, or --entry and --realize for the representation/arithmetic split";
    }
    return run_split(options, global);
  }
  const ir::Program program = lang::compile(lang::read_source(options.input.program_path),
                                            frontend_options(options.input.bindings, options.input.entry));
  const std::vector<Row> rows = rows_of(program, options.input.entry);
  if (global.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const Row& row : rows) {
      const ir::Param& p = *row.param;
      const bool integer = p.type.rank() - p.stack_depth >= 2;  // of rank two or more as declared
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
    const bool integer = p.type.rank() - p.stack_depth >= 2;  // of rank two or more as declared
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
  CLI::App* command = app.add_subcommand(
      "quantize", "Integer weights: --list the parameters' bytes and scale axes, or split a realization's gap");
  add_run_input_options(*command, options->input);
  command->get_option("--entry")->required(false)->description(
      "The entry (--list: whose readers decide the axes, default every entry; the split: required)");
  command->add_flag("--list", options->list, "List every real parameter: shape, bytes at rest per type, scale axis");
  command->add_option("--realize", options->realize, "The split: the realization (f32, bf16, @file.json with `quant`)");
  command->add_option("--bits", options->bits, "The split: the reference's precision")
      ->check(CLI::Range(reference::kMinBits, reference::kMaxBits))->capture_default_str();
  command->footer("The split: representation = exact on the weights as stored (rounded, or f32(q·s)) against exact "
                  "on the true weights; arithmetic = native against the former; total = native against the latter, "
                  "each relative to the largest |exact output|. docs/precision.md, \"quantize\".");
  add_threads_option(*command, global);
  add_seed_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_quantize(*options, global); };
});

}  // namespace
}  // namespace presk::cli
