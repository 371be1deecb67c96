// The command line's conventions (docs/cli.md): help, version, exit codes.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "common/run_command.h"

namespace presk::testing {
namespace {

// The subcommands `presk --help` lists.
std::set<std::string> listed_subcommands() {
  CommandResult help = run_command(presk() + " --help");
  std::set<std::string> names;
  bool in_list = false;
  std::istringstream lines(help.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Subcommands:", 0) == 0) { in_list = true; continue; }
    std::smatch match;
    if (in_list && std::regex_search(line, match, std::regex("^  ([a-z]+) "))) names.insert(match[1]);
  }
  return names;
}

TEST(Cli, HelpListsTheCommands) {
  CommandResult help = run_command(presk() + " --help");
  EXPECT_EQ(help.status, 0);
  std::set<std::string> names = listed_subcommands();
  EXPECT_TRUE(names.count("version")) << help.output;
}

TEST(Cli, EveryCommandHasHelp) {
  for (const std::string& name : listed_subcommands()) {
    CommandResult help = run_command(presk() + " " + name + " --help");
    EXPECT_EQ(help.status, 0) << name;
    EXPECT_NE(help.output.find("Usage:"), std::string::npos) << name << ":\n" << help.output;
  }
}

TEST(Cli, VersionNamesTheRevision) {
  CommandResult version = run_command(presk() + " --version");
  EXPECT_EQ(version.status, 0);
  EXPECT_TRUE(std::regex_search(version.output, std::regex(R"(^presk \d+\.\d+\.\d+ \(git [0-9a-f]+|unknown\))")))
      << version.output;
}

TEST(Cli, UsageErrorsExitWithTwo) {
  EXPECT_EQ(run_command(presk() + " no-such-command").status, 2);
  EXPECT_EQ(run_command(presk()).status, 2);
  EXPECT_EQ(run_command(presk() + " version --no-such-option").status, 2);
}

}  // namespace
}  // namespace presk::testing
