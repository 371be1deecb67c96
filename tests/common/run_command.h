// Runs a shell command from a test and captures what it printed and its exit status.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace presk::testing {

struct CommandResult {
  int status = -1;     // the exit status, or 128 + signal when killed by one
  std::string output;  // stdout, then stderr when `merge_stderr`
};

inline CommandResult run_command(const std::string& command, bool merge_stderr = true) {
  std::string full = command + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  CommandResult result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  int raw = pclose(pipe);
  if (WIFEXITED(raw)) result.status = WEXITSTATUS(raw);
  else if (WIFSIGNALED(raw)) result.status = 128 + WTERMSIG(raw);
  return result;
}

// The presk binary under test, quoted for the shell.
inline std::string presk() { return std::string("'") + PRESK_BINARY + "'"; }

}  // namespace presk::testing
