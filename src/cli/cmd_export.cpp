// `presk export c PROGRAM --entry E --realize R --out DIR`: the entry as C99 source (DIR/NAME.c
// and DIR/NAME.h) that computes the native executor's bits under R, reading the parameters from
// a safetensors file at run time (docs/export.md).
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/pipeline.h"
#include "exec/native/realization.h"
#include "export/c_export.h"
#include "generate/twins.h"
#include "lang/frontend.h"
#include "support/atomic_file.h"
#include "support/diagnostics.h"

namespace presk::cli {
namespace {

struct ExportOptions {
  std::string program;
  std::string entry;
  std::string realize;
  std::string out;
  std::string name;  // the API's prefix; default: the entry's name
  BindingOptions bindings;
};

int run_export_c(const ExportOptions& options) {
  const std::string name = options.name.empty() ? options.entry : options.name;
  if (!export_c::is_c_name(name)) {
    user_error("E1546").hint("pass --name with letters, digits and `_`, not starting with a digit")
        << "`" << name << "` cannot name a C API (presk_" << name << "_run)";
  }
  // A decode entry: every entry compiled, so a realization solved on loss/logits validates and
  // types decode's twin sites (generate/twins.h), as presk generate runs it.
  const bool decode = options.entry == generate::kDecodeEntry;
  const ir::Program program = lang::compile(lang::read_source(options.program),
                                            frontend_options(options.bindings, decode ? "" : options.entry));
  const exec::native::Realization realization = generate::realization_for_entry(
      exec::native::load_realization(options.realize, program), program, options.entry);
  const std::string origin = "presk export c " + options.program + " --entry " + options.entry +
                             " --realize " + options.realize;
  const export_c::CExport files =
      export_c::export_c(program, options.entry, realization, name, origin);
  std::error_code error;
  std::filesystem::create_directories(options.out, error);
  if (error || !std::filesystem::is_directory(options.out)) {
    user_error("E1544").hint("pass --out an existing folder or one that can be created")
        << "cannot create the folder `" << options.out << "`"
        << (error ? ": " + error.message() : "");
  }
  const std::string base = (std::filesystem::path(options.out) / name).string();
  const std::string generate_c = (std::filesystem::path(options.out) / "generate.c").string();
  std::vector<CommandFile> outputs{{"--out", base + ".c"}, {"--out", base + ".h"}};
  if (!files.generate.empty()) outputs.push_back({"--out", generate_c});
  check_output_files(outputs, {{"program", options.program}, {"--realize", realization_file(options.realize)}});
  write_file_atomically(base + ".h", files.header);
  write_file_atomically(base + ".c", files.source);
  if (!files.generate.empty()) {
    write_file_atomically(generate_c, files.generate);
    std::cout << "presk export c: wrote " << base << ".c, " << base << ".h and " << generate_c << " (`" << options.entry
              << "` under " << options.realize << ")\n"
              << "  build: cc -std=c99 -O2 -ffp-contract=off " << generate_c << " -lm -o generate\n"
              << "  run:   ./generate WEIGHTS.safetensors PROMPT TOKENS\n";
    return 0;
  }
  std::cout << "presk export c: wrote " << base << ".c and " << base << ".h (`" << options.entry
            << "` under " << options.realize << ")\n"
            << "  build: cc -std=c99 -O2 -ffp-contract=off -DPRESK_MAIN " << base << ".c -lm -o "
            << name << "\n";
  return 0;
}

Registration registration("export", 60, [](CLI::App& app, GlobalOptions&) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* command =
      app.add_subcommand("export", "Write an entry as source for another toolchain (export c)");
  command->require_subcommand(1);
  CLI::App* c = command->add_subcommand(
      "c", "An entry as C99 (NAME.c, NAME.h) with the native executor's bits under a realization");
  c->add_option("program", options->program, "The .psk program")->required();
  c->add_option("--entry", options->entry, "The entry to export")->required();
  c->add_option("--realize", options->realize, "The realization: f64, f32, bf16 or @file.json")
      ->required();
  c->add_option("--out", options->out, "The folder the files are written to")->required();
  c->add_option("--name", options->name,
                "The API's prefix, presk_NAME_run (default: the entry's name)");
  add_binding_options(*c, options->bindings);
  return [options] { return run_export_c(*options); };
});

}  // namespace
}  // namespace presk::cli
