// The command registry and the steps every front of it shares (the `presk` binary, the Python
// module): the registered commands added to an app in `presk --help` order, and the parsed one run.
#include "cli/command.h"

#include <algorithm>
#include <thread>

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

void add_certify_bits_option(CLI::App& command, long& bits) {
  command.add_option("--certify-bits", bits,
                     "The most bits the Arb ball reference may take: it runs at the envelope's bits and, where its "
                     "bound does not certify the gap (balls lose bits to wrapping, ~20-30 a transformer layer), again "
                     "at the bits that bound says it needs, up to this many (above 512 bits, ~10x slower)")
      ->check(CLI::Range(53L, 1L << 20))->capture_default_str();
}

void add_seed_option(CLI::App& command, GlobalOptions& global) {
  command.add_option("--seed", global.seed, "Seed of every generator this run uses")
      ->capture_default_str();
}

void add_json_option(CLI::App& command, GlobalOptions& global) {
  command.add_flag("--json", global.json, "Print one JSON object on stdout instead of a table");
}

std::vector<CommandRunner> add_commands(CLI::App& app, GlobalOptions& global) {
  std::vector<CommandInfo> commands = command_registry();
  std::sort(commands.begin(), commands.end(),
            [](const CommandInfo& a, const CommandInfo& b) { return a.order < b.order; });
  std::vector<CommandRunner> runners;
  for (const CommandInfo& info : commands) {
    CLI::App* before = app.get_subcommands({}).empty() ? nullptr : app.get_subcommands({}).back();
    std::function<int()> runner = info.setup(app, global);
    CLI::App* added = app.get_subcommands({}).back();
    internal_assert(added != before);
    runners.push_back({added, std::move(runner)});
  }
  return runners;
}

int run_parsed(const std::vector<CommandRunner>& runners, GlobalOptions& global) {
  if (global.threads == 0) global.threads = std::max(1u, std::thread::hardware_concurrency());
  for (const CommandRunner& runner : runners) {
    if (runner.command->parsed()) return runner.run();
  }
  return 2;
}

}  // namespace presk::cli
