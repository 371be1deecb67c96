// The envelope's run (envelope_run.h).
#include "cli/envelope_run.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "ir/program_hash.h"
#include "lang/lexer.h"
#include "lang/parser.h"
#include "support/diagnostics.h"
#include "support/hf_checkpoint.h"
#include "support/sha256.h"

namespace presk::cli {
namespace {

// The dims the program declares (`dim batch, sequence`, over several lines too), from its parse.
std::set<std::string> declared_dims(const std::string& program) {
  std::shared_ptr<const SourceFile> source = lang::read_source(program);
  DiagnosticSink sink;
  std::vector<lang::Token> tokens = lang::lex(source, sink);
  lang::ProgramAst ast = lang::parse(source, tokens, sink);
  sink.throw_if_errors();
  std::set<std::string> names;
  for (const lang::DimDecl& dim : ast.dims) names.insert(dim.name);
  return names;
}

}  // namespace

BindingOptions recorded_bindings(const BindingOptions& given, const std::map<std::string, std::string>& recorded,
                                 const std::string& program, const std::string& envelope) {
  if (!given.consts.empty() || !given.dims.empty()) {
    for (const auto* texts : {&given.consts, &given.dims}) {
      for (const std::string& text : *texts) {
        const size_t equals = text.find('=');
        const std::string name = text.substr(0, equals), value = equals == std::string::npos ? "" : text.substr(equals + 1);
        const auto found = recorded.find(name);
        if (found != recorded.end() && found->second != value) {
          user_error("E1103").hint("leave out --const/--dim (the envelope's are used), or calibrate again")
              << "the envelope " << envelope << " was measured with " << name << "=" << found->second << ", not "
              << name << "=" << value;
        }
      }
    }
    return given;
  }
  const std::set<std::string> dims = declared_dims(program);
  BindingOptions bindings;
  for (const auto& [name, value] : recorded) {
    (dims.count(name) > 0 ? bindings.dims : bindings.consts).push_back(name + "=" + value);
  }
  return bindings;
}

namespace {

// The entries of the program, for E0931's message.
std::string entries_of(const std::string& program, const BindingOptions& bindings) {
  std::string names;
  try {
    for (const ir::Function& f : lang::compile(lang::read_source(program), frontend_options(bindings, "")).functions) {
      if (f.is_entry) names += (names.empty() ? "" : ", ") + f.name;
    }
  } catch (const UserError&) {
  }
  return names.empty() ? "none" : names;
}

// prepare_run, with an entry the program lacks refused as the envelope's (E0931).
PreparedRun prepare_entry(const RunInputOptions& input, const GlobalOptions& global, const std::string& envelope) {
  try {
    return prepare_run(input, global);
  } catch (const UserError& error) {
    if (error.code() != "E0330") throw;
    user_error("E0931").hint("the program's entries: " + entries_of(input.program_path, input.bindings))
        << "the envelope " << envelope << " is of entry `" << input.entry << "`, which " << input.program_path
        << " does not have";
  }
  internal_assert(false);
  return prepare_run(input, global);
}

// The file the run reads for `what` ("weights", "data"): the given one or the recorded one,
// whose bytes must be the recorded ones when the envelope has their hash.
std::string checked_file(const std::string& given, const std::string& recorded, const std::string& sha256,
                         const char* what, const char* code, const std::string& envelope) {
  const std::string path = given.empty() ? recorded_path(recorded, envelope) : given;
  if (path.empty() || sha256.empty()) return path;
  const std::string actual = weights_sha256(path);  // a checkpoint folder, or a file's bytes
  if (actual != sha256) {
    user_error(code).hint(std::string("pass the ") + what + " file the envelope was calibrated with (" + recorded +
                          "), or calibrate again on this one")
        << "the " << what << " file " << path << " is not the one the envelope " << envelope
        << " was measured with (its SHA-256 is " << actual.substr(0, 16) << "…, the envelope recorded "
        << sha256.substr(0, 16) << "…)";
  }
  return path;
}

// What the exact outputs read from `what`'s file depend on: its SHA-256 (the envelope's, which
// prepare_envelope_run checked, or the file's own), or "synthesized" when there is no file.
std::string file_identity(const std::string& given, const std::string& recorded, const std::string& sha256,
                          const std::string& envelope) {
  const std::string path = given.empty() ? recorded_path(recorded, envelope) : given;
  if (path.empty()) return "synthesized";
  return sha256.empty() ? weights_sha256(path) : sha256;
}

}  // namespace

std::string exact_cache_key(const EnvelopeRunOptions& options, const precision::Envelope& envelope,
                            const PreparedRun& prepared, int64_t held_out_count) {
  nlohmann::ordered_json key;
  key["presk"] = std::string(PRESK_VERSION) + " " + PRESK_GIT_REVISION;
  key["arithmetic"] = "mpfr";
  key["program_hash"] = ir::program_hash(prepared.program);
  key["entry"] = prepared.entry->name;
  key["bindings"] = envelope.bindings;
  key["consts"] = options.bindings.consts;
  key["dims"] = options.bindings.dims;
  key["weights_sha256"] = file_identity(options.weights, envelope.weights, envelope.weights_sha256, options.envelope);
  key["data_sha256"] = file_identity(options.data, envelope.data, envelope.data_sha256, options.envelope);
  key["seed"] = envelope.seed;
  key["token_range"] = prepared.token_range;
  key["bits"] = envelope.bits;
  key["samples"] = {{"first", prepared.first}, {"count", prepared.count}};
  key["held_out"] = {{"first", prepared.first + prepared.count}, {"count", held_out_count}};
  return key.dump();
}

std::string recorded_path(const std::string& recorded, const std::string& envelope_path) {
  if (recorded.empty() || std::filesystem::path(recorded).is_absolute()) return recorded;
  std::error_code error;
  if (std::filesystem::exists(recorded, error)) return recorded;
  const std::filesystem::path beside = std::filesystem::path(envelope_path).parent_path() / recorded;
  return std::filesystem::exists(beside, error) ? beside.string() : recorded;
}

PreparedRun prepare_envelope_run(const EnvelopeRunOptions& options, const precision::Envelope& envelope,
                                 GlobalOptions& global) {
  if (!options.entry.empty() && options.entry != envelope.entry) {
    user_error("E1102").hint("leave out --entry (the envelope's is used), or calibrate the entry you mean")
        << "the envelope " << options.envelope << " is of entry `" << envelope.entry << "`, not `" << options.entry
        << "`";
  }
  if (!options.weights.empty() && envelope.weights.empty()) {
    user_error("E1104").hint("leave out --weights: the envelope's parameters were synthesized from its seed")
        << "the envelope " << options.envelope << " was measured on synthesized parameters, not on " << options.weights;
  }
  RunInputOptions input;
  input.program_path = options.program;
  input.entry = envelope.entry;
  input.bindings = recorded_bindings(options.bindings, envelope.bindings, options.program, options.envelope);
  input.weights = checked_file(options.weights, envelope.weights, envelope.weights_sha256, "weights", "E1104",
                               options.envelope);
  if (!options.data.empty() && envelope.data.empty()) {
    user_error("E1105").hint("leave out --data: the envelope's samples were synthesized from its seed")
        << "the envelope " << options.envelope << " was measured on synthesized samples, not on " << options.data;
  }
  input.data = checked_file(options.data, envelope.data, envelope.data_sha256, "data", "E1105", options.envelope);
  input.offset = envelope.offset;
  input.samples = envelope.samples;
  input.token_range = envelope.token_range;
  // check and solve measure on the reference at the envelope's bits and natively beside it.
  input.memory = {reference_bytes_per_element(envelope.bits, false), kNativeBytesPerElement, 1, true, options.phases,
                  options.observed};
  global.seed = static_cast<uint64_t>(envelope.seed);
  PreparedRun prepared = prepare_entry(input, global, options.envelope);
  const std::string hash = ir::program_hash(prepared.program);
  if (hash != envelope.program_hash) {
    user_error("E0930").hint("calibrate again on this program (presk calibrate --precision), or pass the "
                             "--const/--dim the envelope was measured with")
        << "the envelope " << options.envelope << " was measured on a program with hash " << envelope.program_hash
        << "; " << options.program << " as compiled has hash " << hash;
  }
  return prepared;
}

}  // namespace presk::cli
