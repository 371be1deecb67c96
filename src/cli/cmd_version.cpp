// `presk version`: the version and what this build can do on this CPU.
#include "cli/command.h"

#include <iostream>

namespace presk::cli {
namespace {

Registration registration("version", 100, [](CLI::App& app, GlobalOptions&) {
  app.add_subcommand("version", "Print presk's version and git revision");
  return [] {
    std::cout << "presk " << PRESK_VERSION << " (git " << PRESK_GIT_REVISION << ")\n";
    return 0;
  };
});

}  // namespace
}  // namespace presk::cli
