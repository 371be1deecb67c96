// The command registry: each file in src/cli defines one `presk <command>` and registers
// it with a static Registration, so main.cpp never lists the commands.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace presk::cli {

// Options every command shares (docs/cli.md).
struct GlobalOptions {
  int threads = 0;        // 0: all cores
  uint64_t seed = 0;
  bool json = false;      // one JSON object on stdout instead of a table
};

// Adds the command's subcommand to `app` and returns the function that runs it once
// the command line has been parsed. The runner returns the process exit code.
using CommandSetup = std::function<std::function<int()>(CLI::App& app, GlobalOptions& global)>;

struct CommandInfo {
  std::string name;
  int order;  // position in `presk --help`
  CommandSetup setup;
};

std::vector<CommandInfo>& command_registry();

struct Registration {
  Registration(std::string name, int order, CommandSetup setup) {
    command_registry().push_back({std::move(name), order, std::move(setup)});
  }
};

// Adds --threads, --seed and --json to a subcommand (only those a command uses).
void add_threads_option(CLI::App& command, GlobalOptions& global);
void add_seed_option(CLI::App& command, GlobalOptions& global);
void add_json_option(CLI::App& command, GlobalOptions& global);
// --certify-bits (check --measure, solve --certify): the most bits the ball reference may take.
void add_certify_bits_option(CLI::App& command, long& bits);

// A registered command added to an app, and what runs it once the command line is parsed.
struct CommandRunner {
  CLI::App* command;
  std::function<int()> run;
};
// Adds every registered command to `app`, in `presk --help` order.
std::vector<CommandRunner> add_commands(CLI::App& app, GlobalOptions& global);
// Runs the command `app.parse` chose (--threads 0: all cores) and returns its exit code.
int run_parsed(const std::vector<CommandRunner>& runners, GlobalOptions& global);

}  // namespace presk::cli
