// `presk COMMAND ARGS…` run in-process, for the module's calibrate, check, solve, explain and
// quantize (python/presk/precision.py): the commands of src/cli, registered as for the binary,
// parsed by CLI11 and run with the GIL released; what they print on stdout (their --json
// report) is captured and returned with the exit code. One command at a time: stdout is the
// process's.
#include "python/commands.h"

#include <pybind11/stl.h>

#include <iostream>
#include <mutex>
#include <sstream>

#include "cli/command.h"
#include "python/interruptible.h"
#include "support/diagnostics.h"

namespace presk::python {
namespace {

namespace py = pybind11;

std::mutex command_mutex;  // one command at a time: std::cout is redirected while it runs

// std::cout into a string for the scope's duration.
class CapturedStdout {
 public:
  CapturedStdout() : previous_(std::cout.rdbuf(text_.rdbuf())) {}
  ~CapturedStdout() { std::cout.rdbuf(previous_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* previous_;
};

std::pair<int, std::string> run_command_line(const std::vector<std::string>& args) {
  std::lock_guard<std::mutex> lock(command_mutex);
  CLI::App app{"presk"};
  app.name("presk");
  app.require_subcommand(1);
  cli::GlobalOptions global;
  const std::vector<cli::CommandRunner> runners = cli::add_commands(app, global);
  std::vector<const char*> argv{"presk"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& error) {
    std::string command = args.empty() ? "" : args.front();
    usage_error("E1354").hint("see `presk " + command + " --help` and docs/python.md for the values each argument takes")
        << "presk." << command << ": " << error.what();
  }
  CapturedStdout captured;
  const int code = cli::run_parsed(runners, global);
  return {code, captured.text()};
}

}  // namespace

void bind_commands(pybind11::module_& module) {
  namespace py = pybind11;
  module.def(
      "command", [](const std::vector<std::string>& args) { return run_interruptible([&] { return run_command_line(args); }); },
      py::arg("args"),
      "Runs `presk ARGS…` in-process; returns (exit code, stdout). A user error raises presk.Error.");
}

}  // namespace presk::python
