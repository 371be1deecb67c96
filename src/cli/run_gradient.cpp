// `presk run --grad` (run_gradient.h): adds the vjps to the prepared program, runs the entry
// and `entry.vjp` per sample — on the reference (MPFR at --bits), or natively under --realize
// (with --exact too, beside the reference and the gap) — sums the results over the samples,
// and reports the cotangents: a table of 2-norms, every element with --json, and F64 tensors
// named by parameter path (`$<name>` for an argument) with --out.
#include "cli/run_gradient.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ad/vjp.h"
#include "exec/native/executor.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/output_file.h"
#include "support/diagnostics.h"
#include "support/safetensors.h"

namespace presk::cli {
namespace {

using reference::MpfrArith;
using Value = reference::Value<MpfrArith>;

// One cotangent of the vjp: of a real argument of the entry or of a parameter.
struct Cotangent {
  std::string name;  // the parameter path, or the argument's name
  bool argument = false;
  Value value;
};

struct Gradient {
  Value value;  // the entry's (first) result, summed over the samples
  std::vector<Cotangent> cotangents;
};

// `into` += `term`, elementwise (the first term is moved in).
void accumulate(const MpfrArith& arith, std::optional<Value>& into, Value term) {
  if (!into) {
    into = std::move(term);
    return;
  }
  for (int64_t i = 0; i < term.size(); ++i) arith.add(into->real(i), into->real(i), term.real(i));
}

const ir::Function& vjp_of(const ir::Program& program, const ir::Function& entry) {
  ad::require_differentiable(program, entry.name);
  const ir::Function* vjp = program.find_function(ad::vjp_name(entry.name));
  if (vjp == nullptr || entry.results.empty()) {
    user_error("E0542").hint("--grad needs a real result and a real argument or parameter to differentiate")
        << "`" << entry.name << "` has nothing to differentiate";
  }
  return *vjp;
}

// The vjp's arguments for sample k: the entry's, then a cotangent of ones.
std::vector<Value> vjp_arguments(const MpfrArith& arith, const PreparedRun& prepared,
                                 const GlobalOptions& global, int64_t k, bool with_seed) {
  std::vector<Value> arguments;
  for (const reference::HostTensor& input : prepared.inputs(k, global.seed)) {
    arguments.push_back(reference::to_value(arith, input));
  }
  if (!with_seed) return arguments;
  const ir::Type& result = prepared.entry->type_of(prepared.entry->results[0]);
  reference::HostTensor ones{result, std::vector<double>(size_t(result.element_count()), 1.0), {}};
  arguments.push_back(reference::to_value(arith, ones));
  return arguments;
}

Gradient compute(const MpfrArith& arith, const PreparedRun& prepared, const GlobalOptions& global) {
  ir::Program program = ad::add_vjps(prepared.program);
  const ir::Function& vjp = vjp_of(program, *prepared.entry);
  reference::RunOptions run_options;
  run_options.bits = arith.bits();
  run_options.threads = global.threads;
  std::optional<Value> value;
  std::vector<std::optional<Value>> sums(vjp.results.size());
  for (int64_t k = 0; k < prepared.count; ++k) {
    std::vector<Value> forward = reference::run_function<MpfrArith>(
        prepared.program, *prepared.entry, prepared.parameters,
        vjp_arguments(arith, prepared, global, k, false), run_options);
    accumulate(arith, value, std::move(forward[0]));
    std::vector<Value> cotangents = reference::run_function<MpfrArith>(
        program, vjp, prepared.parameters, vjp_arguments(arith, prepared, global, k, true), run_options);
    for (size_t r = 0; r < cotangents.size(); ++r) accumulate(arith, sums[r], std::move(cotangents[r]));
  }
  Gradient gradient{std::move(*value), {}};
  for (size_t r = 0; r < sums.size(); ++r) {
    const std::string& name = vjp.result_names[r];
    bool argument = name.starts_with("$");
    gradient.cotangents.push_back(
        {argument ? prepared.entry->argument_names[std::stoul(name.substr(1))] : name, argument,
         std::move(*sums[r])});
  }
  return gradient;
}

// ‖v‖₂, correctly rounded at the arithmetic's precision, as `digits` significant digits.
std::string norm2_text(const MpfrArith& arith, const Value& value, int digits) {
  Value scratch = Value::make_real(arith, {2});
  arith.set_zero(scratch.real(0));
  for (int64_t i = 0; i < value.size(); ++i) {
    arith.mul(scratch.real(1), value.real(i), value.real(i));
    arith.add(scratch.real(0), scratch.real(0), scratch.real(1));
  }
  arith.sqrt(scratch.real(1), scratch.real(0));
  return arith.to_decimal(scratch.real(1), digits);
}

nlohmann::json values_json(const MpfrArith& arith, const Value& value, int digits) {
  nlohmann::json values = nlohmann::json::array();
  for (int64_t i = 0; i < value.size(); ++i) values.push_back(arith.to_decimal(value.real(i), digits));
  return values;
}

nlohmann::json report_json(const MpfrArith& arith, const PreparedRun& prepared,
                           const GlobalOptions& global, const Gradient& gradient) {
  int digits = reference::exact_digits(arith.bits());
  nlohmann::json cotangents = nlohmann::json::array();
  for (const Cotangent& cotangent : gradient.cotangents) {
    cotangents.push_back({{"name", cotangent.name},
                          {"kind", cotangent.argument ? "argument" : "parameter"},
                          {"shape", cotangent.value.shape},
                          {"norm2", norm2_text(arith, cotangent.value, digits)},
                          {"values", values_json(arith, cotangent.value, digits)}});
  }
  return {{"entry", prepared.entry->name},
          {"bits", arith.bits()},
          {"seed", global.seed},
          {"samples", prepared.count},
          {"value", {{"shape", gradient.value.shape}, {"values", values_json(arith, gradient.value, digits)}}},
          {"cotangents", cotangents}};
}

void write_out(const MpfrArith& arith, const std::string& path, const PreparedRun& prepared,
               const Gradient& gradient) {
  std::vector<Tensor> tensors;
  for (const Cotangent& cotangent : gradient.cotangents) {
    Tensor tensor(ElementType::f64, cotangent.value.shape);
    for (int64_t i = 0; i < cotangent.value.size(); ++i) {
      tensor.set(uint64_t(i), arith.to_double(cotangent.value.real(i)));
    }
    tensors.push_back(std::move(tensor));
  }
  std::vector<NamedTensor> named;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Cotangent& cotangent = gradient.cotangents[k];
    named.push_back({(cotangent.argument ? "$" : "") + cotangent.name, tensors[k]});
  }
  write_safetensors(path, named, {{"presk:run", "gradient (vjp seeded with ones), entry " + prepared.entry->name}});
}

void print_table(const MpfrArith& arith, const PreparedRun& prepared, const Gradient& gradient,
                 int digits) {
  const Value& value = gradient.value;
  std::cout << prepared.entry->name << " : "
            << ir::type_to_string(prepared.entry->type_of(prepared.entry->results[0]));
  if (value.shape.empty()) std::cout << " = " << arith.to_decimal(value.real(0), digits) << '\n';
  else std::cout << ", ‖·‖₂ = " << norm2_text(arith, value, digits) << '\n';
  size_t width = 9;  // "cotangent"
  for (const Cotangent& cotangent : gradient.cotangents) width = std::max(width, cotangent.name.size() + 1);
  std::cout << "cotangent" << std::string(width - 9, ' ') << "  shape      ‖·‖₂\n";
  for (const Cotangent& cotangent : gradient.cotangents) {
    std::string name = (cotangent.argument ? "$" : "") + cotangent.name;
    std::string shape = ir::shape_text(cotangent.value.shape);
    std::cout << name << std::string(width - name.size(), ' ') << "  " << shape
              << std::string(shape.size() < 10 ? 11 - shape.size() : 1, ' ')
              << norm2_text(arith, cotangent.value, digits) << '\n';
  }
}

// ---- The native vjp (--realize R) ----

// A native cotangent (or the entry's value): the executor's results summed over the samples
// in binary64 (one sample: the realized values, widened exactly).
struct NativeSum {
  std::string name;  // the parameter path, or the argument's name
  bool argument = false;
  ElementType type = ElementType::f64;  // the realized element type of the executor's result
  std::vector<int64_t> shape;
  std::vector<double> values;
  double gap_absolute = 0, gap_relative = 0;  // with --exact: max |native − exact|, / max |exact|
};

struct NativeGradient {
  NativeSum value;
  std::vector<NativeSum> cotangents;
  double seconds = 0;
};

void add_into(NativeSum& sum, const Tensor& tensor) {
  if (sum.values.empty()) {
    sum.type = tensor.type();
    sum.shape = tensor.shape();
    sum.values.assign(tensor.element_count(), 0.0);
  }
  for (uint64_t i = 0; i < tensor.element_count(); ++i) sum.values[i] += tensor.get(i);
}

NativeGradient compute_native(const PreparedRun& prepared, const GradientRunOptions& options,
                              const GlobalOptions& global) {
  const ir::Program program = ad::add_vjps(prepared.program);
  const ir::Function& vjp = vjp_of(program, *prepared.entry);
  const exec::native::Realization realization = exec::native::load_realization(options.realize, program);
  const exec::native::PreparedParameters parameters = exec::native::prepare_parameters(
      program, realization, [&](const std::string& path) { return prepared.parameters.view(path); });
  const exec::native::ExecuteOptions execute{global.threads, options.scalar};
  const ir::Type& result = prepared.entry->type_of(prepared.entry->results[0]);
  Tensor ones(ElementType::f64, result.shape);
  for (uint64_t i = 0; i < ones.element_count(); ++i) ones.set(i, 1.0);
  NativeGradient gradient;
  for (const std::string& name : vjp.result_names) {
    NativeSum cotangent;
    cotangent.argument = name.starts_with("$");
    cotangent.name = cotangent.argument ? prepared.entry->argument_names[std::stoul(name.substr(1))] : name;
    gradient.cotangents.push_back(std::move(cotangent));
  }
  const auto start = std::chrono::steady_clock::now();
  for (int64_t k = 0; k < prepared.count; ++k) {
    std::vector<Tensor> inputs = to_tensors(prepared.inputs(k, global.seed));
    add_into(gradient.value, exec::native::execute(program, prepared.entry->name, realization, inputs, parameters, execute)[0]);
    inputs.push_back(ones);
    const std::vector<Tensor> cotangents = exec::native::execute(program, vjp.name, realization, inputs, parameters, execute);
    for (size_t r = 0; r < cotangents.size(); ++r) add_into(gradient.cotangents[r], cotangents[r]);
  }
  gradient.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return gradient;
}

// The gap of `native` to `exact`, each difference computed in MPFR and then rounded.
void measure_gap(const MpfrArith& arith, NativeSum& native, const Value& exact) {
  Value scratch = Value::make_real(arith, {2});
  double magnitude = 0;
  native.gap_absolute = 0;
  for (int64_t i = 0; i < exact.size(); ++i) {
    const double value = native.values[static_cast<size_t>(i)];
    magnitude = std::max(magnitude, std::fabs(arith.to_double(exact.real(i))));
    if (!std::isfinite(value)) {
      native.gap_absolute = std::numeric_limits<double>::infinity();
      continue;
    }
    arith.set_double(scratch.real(0), value);
    arith.sub(scratch.real(1), scratch.real(0), exact.real(i));
    native.gap_absolute = std::max(native.gap_absolute, std::fabs(arith.to_double(scratch.real(1))));
  }
  native.gap_relative = magnitude > 0 ? native.gap_absolute / magnitude : native.gap_absolute;
}

std::string shortest(double value) {
  std::ostringstream out;
  out << std::setprecision(std::numeric_limits<double>::max_digits10) << value;
  return out.str();
}

// ‖v‖₂ of the binary64 values (squares summed in long double), to `digits` significant digits.
std::string native_norm2_text(const std::vector<double>& values, int digits) {
  long double squares = 0;
  for (double v : values) squares += static_cast<long double>(v) * v;
  std::ostringstream out;
  out << std::setprecision(digits) << static_cast<double>(std::sqrt(squares));
  return out.str();
}

nlohmann::json native_sum_json(const NativeSum& sum, bool exact, int digits) {
  nlohmann::json values = nlohmann::json::array();
  for (double v : sum.values) values.push_back(shortest(v));
  nlohmann::json json = {{"shape", sum.shape}, {"type", type_name(sum.type)},
                         {"norm2", native_norm2_text(sum.values, digits)}, {"values", values}};
  if (exact) {
    json["gap_absolute"] = sum.gap_absolute;
    json["gap_relative"] = sum.gap_relative;
  }
  return json;
}

nlohmann::json native_report_json(const PreparedRun& prepared, const GradientRunOptions& options,
                                  const GlobalOptions& global, const NativeGradient& gradient) {
  nlohmann::json cotangents = nlohmann::json::array();
  for (const NativeSum& cotangent : gradient.cotangents) {
    nlohmann::json json = {{"name", cotangent.name}, {"kind", cotangent.argument ? "argument" : "parameter"}};
    json.update(native_sum_json(cotangent, options.exact, std::numeric_limits<double>::max_digits10));
    cotangents.push_back(std::move(json));
  }
  nlohmann::json report = {{"entry", prepared.entry->name}, {"realize", options.realize},
                           {"scalar", options.scalar},      {"seed", global.seed},
                           {"samples", prepared.count},     {"native_seconds", gradient.seconds},
                           {"value", native_sum_json(gradient.value, options.exact, std::numeric_limits<double>::max_digits10)},
                           {"cotangents", cotangents}};
  if (options.exact) report["bits"] = options.bits;
  return report;
}

void write_native_out(const std::string& path, const PreparedRun& prepared, const GradientRunOptions& options,
                      const NativeGradient& gradient) {
  std::vector<Tensor> tensors;
  for (const NativeSum& cotangent : gradient.cotangents) {
    Tensor tensor(ElementType::f64, cotangent.shape);
    for (size_t i = 0; i < cotangent.values.size(); ++i) tensor.set(i, cotangent.values[i]);
    tensors.push_back(std::move(tensor));
  }
  std::vector<NamedTensor> named;
  for (size_t k = 0; k < tensors.size(); ++k) {
    named.push_back({(gradient.cotangents[k].argument ? "$" : "") + gradient.cotangents[k].name, tensors[k]});
  }
  write_safetensors(path, named,
                    {{"presk:run", "gradient (vjp seeded with ones), native, realization " + options.realize +
                                       ", entry " + prepared.entry->name}});
}

void print_native_table(const PreparedRun& prepared, const GradientRunOptions& options,
                        const NativeGradient& gradient, const std::optional<std::string>& exact_value) {
  const NativeSum& value = gradient.value;
  std::cout << prepared.entry->name << " : " << type_name(value.type) << (value.shape.empty() ? "" : ir::shape_text(value.shape));
  if (value.shape.empty()) std::cout << " = " << shortest(value.values.at(0));
  else std::cout << ", ‖·‖₂ = " << native_norm2_text(value.values, options.digits);
  if (exact_value) std::cout << " (exact " << *exact_value << ")";
  std::cout << '\n';
  size_t width = 9, norm_width = 4;  // "cotangent", "‖·‖₂"
  for (const NativeSum& cotangent : gradient.cotangents) {
    width = std::max(width, cotangent.name.size() + 1);
    norm_width = std::max(norm_width, native_norm2_text(cotangent.values, options.digits).size());
  }
  std::cout << "cotangent" << std::string(width - 9, ' ') << "  shape      ‖·‖₂"
            << (options.exact ? std::string(norm_width - 4 + 2, ' ') + "gap (relative)" : "") << '\n';
  for (const NativeSum& cotangent : gradient.cotangents) {
    const std::string name = (cotangent.argument ? "$" : "") + cotangent.name;
    const std::string shape = ir::shape_text(cotangent.shape), norm = native_norm2_text(cotangent.values, options.digits);
    std::cout << name << std::string(width - name.size(), ' ') << "  " << shape
              << std::string(shape.size() < 10 ? 11 - shape.size() : 1, ' ') << norm;
    if (options.exact) std::cout << std::string(norm_width - norm.size() + 2, ' ') << std::setprecision(3) << cotangent.gap_relative;
    std::cout << '\n';
  }
}

int run_native_gradient(const PreparedRun& prepared, const GradientRunOptions& options, const GlobalOptions& global) {
  NativeGradient gradient = compute_native(prepared, options, global);
  std::optional<std::string> exact_value;
  if (options.exact) {
    MpfrArith arith(options.bits);
    const Gradient exact = compute(arith, prepared, global);
    measure_gap(arith, gradient.value, exact.value);
    for (size_t r = 0; r < gradient.cotangents.size(); ++r) measure_gap(arith, gradient.cotangents[r], exact.cotangents[r].value);
    exact_value = exact.value.shape.empty() ? arith.to_decimal(exact.value.real(0), options.digits)
                                            : "‖·‖₂ = " + norm2_text(arith, exact.value, options.digits);
  }
  if (!options.out.empty()) write_native_out(options.out, prepared, options, gradient);
  if (global.json) {
    std::cout << native_report_json(prepared, options, global, gradient).dump(2) << '\n';
    return 0;
  }
  std::cout << "# gradient: native, realization " << options.realize << (options.scalar ? ", scalar" : "") << ", seed "
            << global.seed << ", cotangent of ones, " << prepared.count << " sample" << (prepared.count == 1 ? "" : "s")
            << ", " << gradient.seconds << " s"
            << (options.exact ? "; exact: MPFR at " + std::to_string(options.bits) + " bits" : "")
            << (options.out.empty() ? "" : ", written to " + options.out) << '\n';
  print_native_table(prepared, options, gradient, exact_value);
  return 0;
}

}  // namespace

int run_gradient(const PreparedRun& prepared, const GradientRunOptions& options,
                 const GlobalOptions& global) {
  if (!options.realize.empty()) return run_native_gradient(prepared, options, global);
  MpfrArith arith(options.bits);
  Gradient gradient = compute(arith, prepared, global);
  if (!options.out.empty()) write_out(arith, options.out, prepared, gradient);
  if (global.json) {
    std::cout << report_json(arith, prepared, global, gradient).dump(2) << '\n';
    return 0;
  }
  std::cout << "# gradient: exact mpfr at " << options.bits << " bits, seed " << global.seed
            << ", cotangent of ones, " << prepared.count << " sample" << (prepared.count == 1 ? "" : "s")
            << (options.out.empty() ? "" : ", written to " + options.out) << '\n';
  print_table(arith, prepared, gradient, options.digits);
  return 0;
}

}  // namespace presk::cli
