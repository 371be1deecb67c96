// The shared command-line steps: bindings and host-tensor conversion (cli/pipeline.h).
#include "cli/pipeline.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <thread>

#include "exec/reference/interpreter.h"
#include "generate/twins.h"
#include "ir/footprint.h"
#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/memory.h"
#include "support/ranks.h"

namespace presk::cli {
namespace {

bool is_identifier(const std::string& text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) {
    return false;
  }
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

void add_binding_options(CLI::App& command, BindingOptions& options) {
  command.add_option("--const", options.consts, "Override a const: --const D=32 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command.add_option("--dim", options.dims, "Bind a dim: --dim T=256 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

std::vector<lang::Binding> parse_bindings(const std::vector<std::string>& texts,
                                          const std::string& option, const char* code) {
  std::vector<lang::Binding> bindings;
  std::map<std::string, std::string> given;  // name → the binding that first set it
  for (const std::string& text : texts) {
    size_t equals = text.find('=');
    std::string name = text.substr(0, equals);
    std::string value = equals == std::string::npos ? "" : text.substr(equals + 1);
    size_t used = 0;
    long long number = 0;
    try {
      number = std::stoll(value, &used, 10);
    } catch (const std::exception&) {
      used = std::string::npos;
    }
    if (!is_identifier(name) || value.empty() || used != value.size()) {
      usage_error(code).hint("write " + option + " NAME=INTEGER, e.g. " + option +
                            (option == "--dim" ? " T=256" : " D=32"))
          << option << " `" << text << "` is not NAME=INTEGER (an integer within ±2^63)";
    }
    auto [first, fresh] = given.emplace(name, text);
    if (!fresh) {
      const int64_t earlier = std::find_if(bindings.begin(), bindings.end(),
                                           [&](const lang::Binding& b) { return b.name == name; })->value;
      if (earlier == number) continue;  // the same value twice binds it once
      usage_error("E0015").hint("give " + option + " " + name + "=… once")
          << option << " binds `" << name << "` twice, to different values (`" << first->second << "`, then `"
          << text << "`)";
    }
    bindings.push_back({name, static_cast<int64_t>(number)});
  }
  return bindings;
}

lang::FrontendOptions frontend_options(const BindingOptions& bindings, const std::string& entry) {
  lang::FrontendOptions frontend;
  frontend.consts = parse_bindings(bindings.consts, "--const", "E0004");
  frontend.dims = parse_bindings(bindings.dims, "--dim", "E0005");
  frontend.entry = entry;
  return frontend;
}

void add_run_input_options(CLI::App& command, RunInputOptions& options) {
  command.add_option("program", options.program_path, "The .psk program")->required();
  command.add_option("--entry", options.entry, "The entry to run")->required();
  add_binding_options(command, options.bindings);
  command.add_option("--weights", options.weights, "Parameters from a safetensors file");
  command.add_option("--data", options.data,
                     "Data arguments from a safetensors file (one tensor per argument, by name)");
  command.add_option("--offset", options.offset,
                     "The first sample to run (of --data's leading axis, or of the seed's samples)")
      ->check(CLI::NonNegativeNumber);
  command.add_option("--samples", options.samples,
                     "Run N samples from --offset on (outputs gain a leading sample axis)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  command.add_option("--token-range", options.token_range,
                     "Synthesized Z inputs lie in [0, V) (default: rows of the embedded table)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 62));
}

std::vector<reference::HostTensor> PreparedRun::inputs(int64_t k, uint64_t seed) const {
  if (data) return data->sample(first + k);
  return reference::synthesize_inputs(*entry, seed, token_range, first + k);
}

uint64_t parameter_bytes_as_read(const PreparedRun& prepared) {
  if (prepared.parameter_bytes > 0) return prepared.parameter_bytes;
  return saturating_product(ir::footprint(prepared.program, nullptr).param_elements, 8);
}

uint64_t reference_bytes_per_element(long bits, bool ball) {
  const uint64_t limbs = static_cast<uint64_t>(std::max(bits, 1L) + 63) / 64;
  return (ball ? 64 : 48) + 8 * limbs;  // the struct, its limbs, the allocator's header
}

namespace {

// E0017 when the run `plan` describes cannot fit in the memory available.
void check_run_memory(const PreparedRun& prepared, const MemoryPlan& plan, const GlobalOptions& global) {
  if (plan.reference_bytes == 0 && plan.native_bytes == 0) return;
  const ir::Footprint size = ir::footprint(prepared.program, prepared.entry, false, !plan.observed);
  const int cores = global.threads > 0 ? global.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const auto at_once = static_cast<uint64_t>(std::min<int64_t>(cores, prepared.count));
  const uint64_t per_value = saturating_product(plan.reference_bytes, at_once) + plan.native_bytes;
  uint64_t needed = saturating_product(saturating_product(size.peak_let_elements, per_value), uint64_t(plan.program_copies));
  // The parameters as read (in their stored types) and their native copies. The reference holds
  // no parameter at --bits beyond what an operation reads (support/param_view.h): unobserved, a
  // tile or the rows an embed gathers (ir::read_in_place); observed, the parameter's let, counted
  // in the peak above at the reference's bytes.
  const uint64_t parameters = parameter_bytes_as_read(prepared);
  needed = saturating_sum(needed, saturating_sum(parameters, saturating_product(size.param_elements, plan.native_bytes)));
  if (plan.keeps_outputs) {
    const uint64_t per_sample = saturating_sum(
        saturating_product(size.result_elements, plan.reference_bytes + plan.native_bytes), 256);
    needed = saturating_sum(needed, saturating_product(per_sample, static_cast<uint64_t>(prepared.count)));
  }
  const std::string run = "the run of `" + prepared.entry->name + "` on " + std::to_string(prepared.count) + " sample" +
                          (prepared.count == 1 ? "" : "s") + " (" + std::to_string(at_once) + " at once; the program's " +
                          std::to_string(size.peak_let_elements) + " elements held at once per sample)";
  const std::string hint = "use smaller --dim or --const values, fewer --samples or --threads, or fewer --bits";
  if (!plan.phases) return check_memory(needed, run, hint);
  std::vector<PhaseEstimate> phases = plan.phases(prepared);
  // The parameters as read stay through every phase.
  uint64_t largest = needed;
  std::string what = run + ": about " + byte_count_text(needed);
  for (PhaseEstimate& phase : phases) {
    phase.bytes = saturating_sum(phase.bytes, parameters);
    largest = std::max(largest, phase.bytes);
    what += "; " + phase.what + ": about " + byte_count_text(phase.bytes);
  }
  check_memory(largest, "the largest of these phases (" + what + ")",
               hint + "; or --sweep f64 where a reverse sweep on the reference is the largest");
}

}  // namespace

namespace {

void prepare_in_place(PreparedRun& prepared, const RunInputOptions& options, const GlobalOptions& global) {
  // The decode entry: every entry, so a realization solved on loss/logits maps onto it (generate/twins.h).
  const bool decode = options.entry == generate::kDecodeEntry;
  prepared.program = lang::compile(lang::read_source(options.program_path),
                                   frontend_options(options.bindings, decode ? "" : options.entry));
  prepared.entry = &reference::find_entry(prepared.program, options.entry);
  prepared.count = options.samples > 0 ? options.samples : 1;
  // A checkpoint is read (mapped: its headers, no tensor) before the estimate, which then knows
  // its types; synthesized parameters are binary64, made after it.
  if (!options.weights.empty()) {
    prepared.parameters = reference::load_weights(prepared.program, options.weights);
    for (const ir::Param& param : prepared.program.params) {
      const ParamView view = prepared.parameters.view(param.path);
      prepared.parameter_bytes = saturating_sum(prepared.parameter_bytes, view ? storage_bytes(view.type(), view.size()) : 0);
    }
  }
  check_run_memory(prepared, options.memory, global);
  if (options.weights.empty()) {
    prepared.parameters = reference::synthesize_parameters(prepared.program, global.seed, global.threads);
  }
  bool has_integer_input = false;
  for (const ir::Type& type : prepared.entry->argument_types) {
    has_integer_input |= type.kind == ir::ElemKind::Int;
  }
  prepared.token_range = options.token_range;
  if (prepared.token_range == 0 && has_integer_input && options.data.empty()) {
    prepared.token_range = reference::default_token_range(prepared.program);
  }
  prepared.first = options.offset;
  if (!options.data.empty()) {
    prepared.data.emplace(*prepared.entry, options.data);
    prepared.data->require(prepared.first, prepared.count);
  }
}

}  // namespace

PreparedRun prepare_run(const RunInputOptions& options, const GlobalOptions& global) {
  PreparedRun prepared;
  // Every rank of a distributed run reads its own copy; one that cannot is E1740 before any work.
  ranks::agree("to read the program, weights and data", [&] { prepare_in_place(prepared, options, global); });
  return prepared;
}

std::vector<CommandFile> run_input_files(const RunInputOptions& options) {
  return {{"the program", options.program_path}, {"--weights", options.weights}, {"--data", options.data}};
}

std::string realization_file(const std::string& argument) {
  return !argument.empty() && argument[0] == '@' ? argument.substr(1) : "";
}

}  // namespace presk::cli
