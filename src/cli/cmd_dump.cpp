// `presk dump --stage ast|ir|sites|vjp|sensitivity PROGRAM`: stops the pipeline after the named
// stage and prints what it holds (docs/ir.md). PROGRAM is a .psk source, or for `ir` and `sites`
// a .pir file of printed IR, which is parsed and verified (so round trips can be tested).
// `vjp` prints the IR with each function's generated `.vjp` (docs/ad.md), and with `--remat
// store|recompute` also the entry's `.fwd`/`.bwd` (ad/split.h). `sensitivity` runs
// the entry's vjp on the reference (reference::sensitivity) and ranks every site and parameter
// by ‖∂L/∂v‖₁ (docs/ad.md). `chip` places the quantizes a contract implies (--contract C,
// numerics/quantize.h; docs/chip.md). The stage kernel is listed and refused until it exists.
#include <algorithm>
#include <map>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ad/split.h"
#include "ad/vjp.h"
#include "cli/command.h"
#include "cli/pipeline.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/sensitivity.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/program_json.h"
#include "ir/sites.h"
#include "ir/verifier.h"
#include "lang/frontend.h"
#include "numerics/attention_forms.h"
#include "numerics/contract_json.h"
#include "numerics/quantize.h"
#include "support/diagnostics.h"

namespace presk::cli {
namespace {

struct DumpOptions {
  std::string stage;
  std::string program_path;
  std::string entry;
  BindingOptions bindings;
  // --stage sensitivity only: the run (pipeline.h) and the working precision.
  std::string weights;
  std::string data;
  int64_t offset = 0;
  std::optional<long> bits;
  std::string remat;  // --stage vjp only: "store" or "recompute", the entry's .fwd/.bwd
  std::string contract;  // --stage chip only: the chip's contract (docs/chip.md)
};

const std::vector<std::string> kStages = {"ast", "ir", "sites", "vjp", "sensitivity", "chip", "kernel"};
const std::vector<std::string> kComing = {"kernel"};
constexpr long kDefaultBits = 256;

bool is_printed_ir(const std::string& path) {
  return path.size() > 4 && path.compare(path.size() - 4, 4, ".pir") == 0;
}

// --weights, --data, --offset and --bits belong to --stage sensitivity, which needs --entry
// and a .psk source.
void check_sensitivity_usage(const DumpOptions& options) {
  bool run_options = !options.weights.empty() || !options.data.empty() || options.offset != 0 ||
                     options.bits.has_value();
  if (options.stage != "sensitivity") {
    if (!run_options) return;
    user_error("E0446").hint("drop --weights, --data, --offset and --bits, or use --stage sensitivity")
        << "--weights, --data, --offset and --bits apply to `--stage sensitivity` only";
  }
  if (is_printed_ir(options.program_path)) {
    user_error("E0448").hint("run the sensitivity of a .psk source")
        << "`--stage sensitivity` cannot read printed IR (.pir)";
  }
  if (options.entry.empty()) {
    user_error("E0446").hint("name the entry to differentiate: --entry E")
        << "`--stage sensitivity` needs --entry";
  }
}

// Checks the command line before anything is read; throws the usage errors.
void check_usage(const DumpOptions& options, const GlobalOptions& global) {
  for (const std::string& stage : kComing) {
    if (options.stage == stage) {
      user_error("E0449").hint("available now: --stage ast, ir, sites, vjp, sensitivity or chip")
          << "`presk dump --stage " << stage << "` is not implemented yet";
    }
  }
  if (options.stage == "ast" && (global.json || is_printed_ir(options.program_path))) {
    user_error("E0448").hint("the AST exists only for a .psk source, and only as text")
        << "`--stage ast` " << (global.json ? "has no JSON form" : "cannot read printed IR (.pir)");
  }
  check_sensitivity_usage(options);
  if ((options.stage == "chip") != !options.contract.empty()) {
    usage_error("E1720").hint("presk dump --stage chip PROGRAM --contract C.json")
        << (options.contract.empty() ? "`--stage chip` needs --contract" : "--contract applies to `--stage chip` only");
  }
  if (!options.remat.empty()) {
    ad::parse_remat(options.remat);
    if (options.stage != "vjp" || options.entry.empty()) {
      user_error("E0814").hint("presk dump --stage vjp PROGRAM.psk --entry E --remat " +
                               options.remat)
          << "--remat splits an entry's vjp: it needs --stage vjp and --entry";
    }
  }
  if (options.stage == "sensitivity") return;
  bool bound = !options.bindings.consts.empty() || !options.bindings.dims.empty() ||
               !options.entry.empty();
  if (is_printed_ir(options.program_path) && bound) {
    user_error("E0447").hint(
        "printed IR is already bound and lowered; drop --const, --dim and --entry")
        << "--const, --dim and --entry apply to a .psk source, not to `" << options.program_path
        << "`";
  }
}

// The IR of the program: lowered from a .psk source, or read back from a .pir file.
ir::Program load_program(const DumpOptions& options, const lang::FrontendOptions& frontend) {
  std::shared_ptr<const SourceFile> source = lang::read_source(options.program_path);
  if (!is_printed_ir(options.program_path)) return lang::compile(source, frontend);
  ir::Program program = ir::parse_program(source);
  ir::verify_program(program, ir::VerifyMode::UserInput);
  return program;
}

// One ranked line of `--stage sensitivity`: a site of a differentiated function, or a parameter.
struct SensitivityRow {
  std::string kind;  // "parameter" or "site"
  std::string name;  // the parameter path, or "F/%j"
  std::string op;    // the site's op ("" for a parameter)
  int64_t elements = 0;
  std::optional<double> total;  // Σ‖∂L/∂v‖₁; nullopt: unknown

  std::optional<double> per_element() const {
    if (!total || elements == 0) return std::nullopt;
    return *total / static_cast<double>(elements);
  }
};

// How many times each function runs in one run of `function` (multiplied by `runs`): once per
// call, L times per fold over a stack of L layers (the extent of axis `depth` of its params).
void count_runs(const ir::Program& program, const ir::Function& function, int64_t runs, const std::string& path,
                int depth, std::map<std::string, int64_t>& counts) {
  counts[function.name] += runs;
  for (const ir::Let& let : function.lets) {
    if (let.op != ir::Op::call && let.op != ir::Op::fold) continue;
    const ir::Function* callee = program.find_function(let.attrs.callee);
    if (!callee) continue;
    std::string inner = path.empty() ? let.attrs.path : let.attrs.path.empty() ? path : path + "." + let.attrs.path;
    int64_t layers = 1;
    if (let.op == ir::Op::fold) {
      for (const ir::Param& param : program.params) {
        if (param.path.rfind(inner + ".", 0) == 0 && param.stack_depth > depth) {
          layers = param.type.shape[static_cast<size_t>(depth)];
          break;
        }
      }
    }
    count_runs(program, *callee, runs * layers, inner, depth + (let.op == ir::Op::fold ? 1 : 0), counts);
  }
}

// Every parameter and every non-tuple site (a tuple's parts are its `get` sites), ranked by
// total, largest first; the unknown ones last, by name. A site's elements are those of one
// sample: its type's count times the runs of its function.
std::vector<SensitivityRow> sensitivity_rows(const ir::Program& program, const std::string& entry,
                                             const reference::Sensitivity& report) {
  std::map<std::string, int64_t> runs;
  if (const ir::Function* function = program.find_function(entry)) count_runs(program, *function, 1, "", 0, runs);
  std::vector<SensitivityRow> rows;
  for (const auto& [path, total] : report.parameters) {
    const ir::Param* param = program.find_param(path);
    rows.push_back({"parameter", path, "", param ? param->type.element_count() : 0, total});
  }
  for (const ir::Function& function : program.functions) {
    for (uint32_t j = 0; j < function.lets.size(); ++j) {
      auto found = report.sites.find(function.site_name(j));
      const ir::Let& let = function.lets[j];
      if (found == report.sites.end() || let.type.is_tuple()) continue;
      const int64_t calls = std::max<int64_t>(1, runs[function.name]);
      rows.push_back({"site", found->first, std::string(ir::op_name(let.op)), let.type.element_count() * calls,
                      found->second});
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const SensitivityRow& a, const SensitivityRow& b) {
    if (a.total.has_value() != b.total.has_value()) return a.total.has_value();
    return a.total && *a.total > *b.total;
  });
  return rows;
}

std::string magnitude_text(std::optional<double> value) {
  if (!value) return "unknown";
  char text[32];
  std::snprintf(text, sizeof text, "%.6e", *value);
  return text;
}

nlohmann::json magnitude_json(std::optional<double> value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

void print_sensitivity(const DumpOptions& options, const GlobalOptions& global, long bits,
                       const std::vector<SensitivityRow>& rows) {
  if (global.json) {
    nlohmann::json out = {{"entry", options.entry}, {"bits", bits}, {"seed", global.seed}, {"offset", options.offset}};
    nlohmann::json list = nlohmann::json::array();
    for (const SensitivityRow& row : rows) {
      list.push_back({{"kind", row.kind}, {"name", row.name}, {"op", row.op.empty() ? nlohmann::json(nullptr) : nlohmann::json(row.op)},
                      {"elements", row.elements}, {"total", magnitude_json(row.total)},
                      {"per_element", magnitude_json(row.per_element())}});
    }
    out["rows"] = std::move(list);
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << "# sensitivity of `" << options.entry << "`: ||dL/dv||_1 for a cotangent of ones, exact mpfr at "
            << bits << " bits, seed " << global.seed << ", sample " << options.offset << "\n"
            << "# unknown: the reverse sweep reached no adjoint of the site (never 0)\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-9s  %-36s  %-14s  %9s  %14s  %14s\n", "kind", "name", "op", "elements", "total", "per element");
  std::cout << line;
  for (const SensitivityRow& row : rows) {
    std::snprintf(line, sizeof line, "%-9s  %-36s  %-14s  %9lld  %14s  %14s\n", row.kind.c_str(), row.name.c_str(),
                  row.op.empty() ? "-" : row.op.c_str(), static_cast<long long>(row.elements),
                  magnitude_text(row.total).c_str(), magnitude_text(row.per_element()).c_str());
    std::cout << line;
  }
}

// `--stage sensitivity`: one sample of the entry (pipeline.h's prepare_run), its vjp run by
// reference::sensitivity at --bits, the ranked sites and parameters.
int dump_sensitivity(const DumpOptions& options, const GlobalOptions& global) {
  RunInputOptions input{options.program_path, options.entry, options.bindings, options.weights, options.data,
                        options.offset, 0, 0, {reference_bytes_per_element(options.bits.value_or(kDefaultBits), false), 0, 3, false, {}}};
  PreparedRun prepared = prepare_run(input, global);
  ad::require_differentiable(prepared.program, options.entry);
  ir::Program program = ad::add_vjps(prepared.program);
  if (program.find_function(ad::vjp_name(options.entry)) == nullptr) {
    user_error("E0445").hint("differentiate an entry with a real result that reads a real argument or a parameter")
        << "`" << options.entry << "` has nothing to differentiate";
  }
  long bits = options.bits.value_or(kDefaultBits);
  reference::MpfrArith arith(bits);
  std::vector<reference::Value<reference::MpfrArith>> arguments;
  for (const reference::HostTensor& host : prepared.inputs(0, global.seed)) arguments.push_back(reference::to_value(arith, host));
  reference::RunOptions run;
  run.bits = bits;
  reference::Sensitivity report = reference::sensitivity(program, options.entry, prepared.parameters, std::move(arguments), run);
  print_sensitivity(options, global, bits, sensitivity_rows(program, options.entry, report));
  return 0;
}

int run_dump(const DumpOptions& options, const GlobalOptions& global) {
  lang::FrontendOptions frontend;
  try {
    check_usage(options, global);
    frontend = frontend_options(options.bindings, options.entry);
  } catch (const UserError& error) {
    std::cerr << error.what() << std::endl;
    return 2;
  }
  if (options.stage == "ast") {
    std::cout << lang::dump_ast(lang::read_source(options.program_path));
    return 0;
  }
  if (options.stage == "sensitivity") return dump_sensitivity(options, global);
  ir::Program program = load_program(options, frontend);
  if (options.stage == "chip") {
    // The quantize insertion's placement (numerics/quantize.h) under the contract.
    const numerics::Contract contract = numerics::read_contract_file(options.contract);
    const std::vector<numerics::QuantizedProduct> products = numerics::bind_contract(contract, program, nullptr);
    const std::vector<numerics::QuantizeSite> sites = numerics::quantize(program, contract, products);
    std::cout << (global.json ? numerics::quantize_json(sites).dump(2) + "\n"
                              : "# chip `" + contract.chip + "`\n" + numerics::quantize_text(program, sites) +
                                    (contract.has_attention_forms() ? numerics::attention_text(program, contract) : "") +
                                    "\n# the program as the chip runs it\n" +
                                    ir::print_program(numerics::chip_program(program, contract, sites, products)));
    return 0;
  }
  if (options.stage == "vjp") program = ad::add_vjps(program);
  if (!options.remat.empty())
    program = ad::add_fwd_bwd(program, options.entry, ad::parse_remat(options.remat));
  if (options.stage == "ir" || options.stage == "vjp") {
    std::cout << (global.json ? ir::program_json(program).dump(2) + "\n"
                              : ir::print_program(program));
  } else {
    std::cout << (global.json ? ir::site_table_json(program).dump(2) + "\n"
                              : ir::print_site_table(program));
  }
  return 0;
}

Registration registration("dump", 10, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<DumpOptions>();
  CLI::App* command = app.add_subcommand(
      "dump", "Print a stage of the pipeline: the AST, the IR, or the site table");
  command
      ->add_option("--stage", options->stage, "ast | ir | sites | vjp | sensitivity | chip (coming: kernel)")
      ->required()
      ->check(CLI::IsMember(kStages));
  command
      ->add_option("program", options->program_path,
                   "A .psk program, or printed IR (.pir) for --stage ir|sites|vjp")
      ->required();
  add_binding_options(*command, options->bindings);
  command->add_option("--entry", options->entry, "Only this entry and what it calls");
  command->add_option("--remat", options->remat,
                      "vjp: also the entry's .fwd/.bwd, keeping the activations (store) or the "
                      "arguments (recompute)");
  command->add_option("--contract", options->contract, "chip: the chip's contract (docs/chip.md), whose quantizes are placed");
  command->add_option("--weights", options->weights, "sensitivity: parameters from a safetensors file");
  command->add_option("--data", options->data, "sensitivity: data arguments from a safetensors file");
  command->add_option("--offset", options->offset, "sensitivity: the sample to run")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--bits", options->bits, "sensitivity: working precision in bits (MPFR, default 256)")
      ->check(CLI::Range(reference::kMinBits, reference::kMaxBits));
  add_seed_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_dump(*options, global); };
});

}  // namespace
}  // namespace presk::cli
