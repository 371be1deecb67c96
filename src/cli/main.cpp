// presk: the command-line entry point. Parses the command line with CLI11, runs the chosen
// command, and maps failures to exit codes: 0 success, 1 user error, 2 usage, 3 internal.
#include <malloc.h>

#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "dist/launch.h"
#include "support/diagnostics.h"

namespace presk::cli {

namespace {

int run(int argc, char** argv) {
  CLI::App app{"presk: an array language in which precision is a resource"};
  app.name("presk");
  app.set_version_flag("--version",
                       std::string("presk ") + PRESK_VERSION + " (git " + PRESK_GIT_REVISION + ")");
  app.require_subcommand(1);
  app.footer("Run `presk COMMAND --help` for a command's options. Exit codes: 0 success, "
             "1 user error, 2 usage, 3 internal error.");

  GlobalOptions global;
  std::vector<CommandRunner> runners = add_commands(app, global);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return run_parsed(runners, global);
}

}  // namespace
}  // namespace presk::cli

int main(int argc, char** argv) {
  // The exact reference allocates and frees buffers of megabytes op after op. By default glibc
  // maps each one afresh (above its dynamic mmap threshold) and gives freed memory back at the
  // heap's top, so every op pays page faults on fresh zero pages: about 7 % of the corpus GPT's
  // exact loss (docs/performance.md). Buffers below 32 MiB now come from the heap and stay there
  // (the peak resident set is unchanged; memory freed below it is kept for the next op).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  presk::dist::Launch launch(argc, argv);  // MPI, only under a launcher (mpirun, srun)
  try {
    return presk::cli::run(argc, argv);
  } catch (const presk::UsageError& e) {
    std::cerr << e.what() << std::endl;
    return 2;
  } catch (const presk::UserError& e) {
    std::cerr << e.what() << std::endl;
    return 1;
  } catch (const presk::InternalError& e) {
    std::cerr << e.what() << std::endl;
    return 3;
  } catch (const std::bad_alloc&) {
    presk::Diagnostic diagnostic{"E0002", "out of memory",
                                 "use smaller --dim values or fewer --samples", {}};
    std::cerr << presk::format_diagnostic(diagnostic) << std::endl;
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error (a bug in presk): " << e.what() << std::endl;
    return 3;
  }
}
