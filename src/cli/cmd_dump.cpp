// `presk dump --stage ast|ir|sites|vjp PROGRAM`: stops the pipeline after the named stage and
// prints what it holds (docs/ir.md). PROGRAM is a .psk source, or for `ir` and `sites` a
// .pir file of printed IR, which is parsed and verified (so round trips can be tested).
// `vjp` prints the IR with each function's generated `.vjp` (docs/ad.md). The stages
// sensitivity and kernel are listed and refused until they exist.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "ad/vjp.h"
#include "cli/command.h"
#include "cli/pipeline.h"
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
  BindingOptions bindings;
};

const std::vector<std::string> kStages = {"ast", "ir", "sites", "vjp", "sensitivity", "kernel"};
const std::vector<std::string> kComing = {"sensitivity", "kernel"};

bool is_printed_ir(const std::string& path) {
  return path.size() > 4 && path.compare(path.size() - 4, 4, ".pir") == 0;
}

// Checks the command line before anything is read; throws the usage errors.
void check_usage(const DumpOptions& options, const GlobalOptions& global) {
  for (const std::string& stage : kComing) {
    if (options.stage == stage) {
      user_error("E0449").hint("available now: --stage ast, ir, sites or vjp")
          << "`presk dump --stage " << stage << "` is not implemented yet";
    }
  }
  if (options.stage == "ast" && (global.json || is_printed_ir(options.program_path))) {
    user_error("E0448").hint("the AST exists only for a .psk source, and only as text")
        << "`--stage ast` " << (global.json ? "has no JSON form" : "cannot read printed IR (.pir)");
  }
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
  ir::Program program = load_program(options, frontend);
  if (options.stage == "vjp") program = ad::add_vjps(program);
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
      ->add_option("--stage", options->stage, "ast | ir | sites | vjp (coming: sensitivity, kernel)")
      ->required()
      ->check(CLI::IsMember(kStages));
  command
      ->add_option("program", options->program_path,
                   "A .psk program, or printed IR (.pir) for --stage ir|sites|vjp")
      ->required();
  add_binding_options(*command, options->bindings);
  command->add_option("--entry", options->entry, "Only this entry and what it calls");
  add_json_option(*command, global);
  return [options, &global] { return run_dump(*options, global); };
});

}  // namespace
}  // namespace presk::cli
