// `presk dump --stage ast|ir|sites PROGRAM`: stops the pipeline after the named stage and
// prints what it holds (docs/ir.md). PROGRAM is a .psk source, or for `ir` and `sites` a
// .pir file of printed IR, which is parsed and verified (so round trips can be tested).
// The stages vjp, sensitivity and kernel are listed and refused until they exist.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/program_json.h"
#include "ir/sites.h"
#include "ir/verifier.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"

namespace presk::cli {
namespace {

struct DumpOptions {
  std::string stage;
  std::string program_path;
  std::string entry;
  std::vector<std::string> consts;  // "K=V", as given
  std::vector<std::string> dims;    // "N=V", as given
};

const std::vector<std::string> kStages = {"ast", "ir", "sites", "vjp", "sensitivity", "kernel"};
const std::vector<std::string> kComing = {"vjp", "sensitivity", "kernel"};

bool is_identifier(const std::string& text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) {
    return false;
  }
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// "NAME=INTEGER" → Binding; anything else is `code` (E0004 for --const, E0005 for --dim).
std::vector<lang::Binding> parse_bindings(const std::vector<std::string>& texts,
                                          const std::string& option, const char* code) {
  std::vector<lang::Binding> bindings;
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
      user_error(code).hint("write " + option + " NAME=INTEGER, e.g. " + option +
                            (option == "--dim" ? " T=256" : " D=32"))
          << option << " `" << text << "` is not NAME=INTEGER (an integer within ±2^63)";
    }
    bindings.push_back({name, static_cast<int64_t>(number)});
  }
  return bindings;
}

bool is_printed_ir(const std::string& path) {
  return path.size() > 4 && path.compare(path.size() - 4, 4, ".pir") == 0;
}

// Checks the command line before anything is read; throws the usage errors.
void check_usage(const DumpOptions& options, const GlobalOptions& global) {
  for (const std::string& stage : kComing) {
    if (options.stage == stage) {
      user_error("E0449").hint("available now: --stage ast, ir or sites")
          << "`presk dump --stage " << stage << "` is not implemented yet";
    }
  }
  if (options.stage == "ast" && (global.json || is_printed_ir(options.program_path))) {
    user_error("E0448").hint("the AST exists only for a .psk source, and only as text")
        << "`--stage ast` " << (global.json ? "has no JSON form" : "cannot read printed IR (.pir)");
  }
  bool bound = !options.consts.empty() || !options.dims.empty() || !options.entry.empty();
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

int run_dump(const DumpOptions& options, const GlobalOptions& global) {
  lang::FrontendOptions frontend;
  try {
    check_usage(options, global);
    frontend.consts = parse_bindings(options.consts, "--const", "E0004");
    frontend.dims = parse_bindings(options.dims, "--dim", "E0005");
  } catch (const UserError& error) {
    std::cerr << error.what() << std::endl;
    return 2;
  }
  frontend.entry = options.entry;
  if (options.stage == "ast") {
    std::cout << lang::dump_ast(lang::read_source(options.program_path));
    return 0;
  }
  ir::Program program = load_program(options, frontend);
  if (options.stage == "ir") {
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
      ->add_option("--stage", options->stage, "ast | ir | sites (coming: vjp, sensitivity, kernel)")
      ->required()
      ->check(CLI::IsMember(kStages));
  command
      ->add_option("program", options->program_path,
                   "A .psk program, or printed IR (.pir) for --stage ir|sites")
      ->required();
  command->add_option("--const", options->consts, "Override a const: --const D=32 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_option("--dim", options->dims, "Bind a dim: --dim T=256 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_option("--entry", options->entry, "Only this entry and what it calls");
  add_json_option(*command, global);
  return [options, &global] { return run_dump(*options, global); };
});

}  // namespace
}  // namespace presk::cli
