// The shared command-line steps: bindings and host-tensor conversion (cli/pipeline.h).
#include "cli/pipeline.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "exec/reference/interpreter.h"
#include "support/diagnostics.h"

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

PreparedRun prepare_run(const RunInputOptions& options, const GlobalOptions& global) {
  PreparedRun prepared;
  prepared.program = lang::compile(lang::read_source(options.program_path),
                                   frontend_options(options.bindings, options.entry));
  prepared.entry = &reference::find_entry(prepared.program, options.entry);
  prepared.parameters = options.weights.empty()
      ? reference::synthesize_parameters(prepared.program, global.seed, global.threads)
      : reference::load_weights(prepared.program, options.weights);
  bool has_integer_input = false;
  for (const ir::Type& type : prepared.entry->argument_types) {
    has_integer_input |= type.kind == ir::ElemKind::Int;
  }
  prepared.token_range = options.token_range;
  if (prepared.token_range == 0 && has_integer_input && options.data.empty()) {
    prepared.token_range = reference::default_token_range(prepared.program);
  }
  prepared.first = options.offset;
  prepared.count = options.samples > 0 ? options.samples : 1;
  if (!options.data.empty()) {
    prepared.data.emplace(*prepared.entry, options.data);
    prepared.data->require(prepared.first, prepared.count);
  }
  return prepared;
}

std::vector<CommandFile> run_input_files(const RunInputOptions& options) {
  return {{"the program", options.program_path}, {"--weights", options.weights}, {"--data", options.data}};
}

std::string realization_file(const std::string& argument) {
  return !argument.empty() && argument[0] == '@' ? argument.substr(1) : "";
}

}  // namespace presk::cli
