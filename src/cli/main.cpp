// presk: the command-line entry point. Parses the command line with CLI11, runs the chosen
// command, and maps failures to exit codes: 0 success, 1 user error, 2 usage, 3 internal.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <thread>

#include "cli/command.h"
#include "support/diagnostics.h"

namespace presk::cli {

std::vector<CommandInfo>& command_registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}

void add_threads_option(CLI::App& command, GlobalOptions& global) {
  command.add_option("--threads", global.threads, "Worker threads (default: all cores)")
      ->check(CLI::Range(1, 4096));
}

void add_seed_option(CLI::App& command, GlobalOptions& global) {
  command.add_option("--seed", global.seed, "Seed of every generator this run uses")
      ->capture_default_str();
}

void add_json_option(CLI::App& command, GlobalOptions& global) {
  command.add_flag("--json", global.json, "Print one JSON object on stdout instead of a table");
}

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
  std::vector<CommandInfo> commands = command_registry();
  std::sort(commands.begin(), commands.end(),
            [](const CommandInfo& a, const CommandInfo& b) { return a.order < b.order; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (const CommandInfo& info : commands) {
    CLI::App* before = app.get_subcommands({}).empty() ? nullptr : app.get_subcommands({}).back();
    std::function<int()> runner = info.setup(app, global);
    CLI::App* added = app.get_subcommands({}).back();
    internal_assert(added != before);
    runners.emplace_back(added, std::move(runner));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (global.threads == 0) global.threads = std::max(1u, std::thread::hardware_concurrency());
  for (auto& [command, runner] : runners) {
    if (command->parsed()) return runner();
  }
  return 2;
}

}  // namespace
}  // namespace presk::cli

int main(int argc, char** argv) {
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
