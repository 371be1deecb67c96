// `presk run --exact --grad` (run_gradient.h): adds the vjps to the prepared program, runs the
// entry and `entry.vjp` on the reference (MPFR at --bits) per sample, sums the results over the
// samples, and reports the cotangents: a table of 2-norms, every element with --json, and F64
// tensors named by parameter path (`$<name>` for an argument) with --out.
#include "cli/run_gradient.h"

#include <algorithm>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "ad/vjp.h"
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

}  // namespace

int run_gradient(const PreparedRun& prepared, const GradientRunOptions& options,
                 const GlobalOptions& global) {
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
