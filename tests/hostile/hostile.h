// What every hostile-input test does: run presk in a fresh folder on tiny files the test
// writes, then check the exit status, the error code, and that no input file changed.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/run_command.h"
#include "support/temp_folder.h"

namespace presk::hostile {

inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

inline std::string example(const std::string& name) { return std::string(PRESK_SOURCE_DIR) + "/examples/" + name; }

// The first `error[E####]` code in `output`, or "none".
inline std::string error_code_in(const std::string& output) {
  std::smatch match;
  if (std::regex_search(output, match, std::regex("error\\[(E[0-9]{4})\\]"))) return match[1];
  return "none";
}

class HostileTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return folder_.file(name); }

  // Writes `bytes` to `name` in the folder and remembers it as an input to watch.
  std::string write(const std::string& name, const std::string& bytes) {
    std::ofstream(path(name), std::ios::binary) << bytes;
    watch(name);
    return path(name);
  }

  // Remembers the bytes of `name` (already in the folder) to compare after the command.
  void watch(const std::string& name) { watched_[name] = file_bytes(path(name)); }

  // `presk ARGUMENTS` run in the folder, stdout and stderr together.
  presk::testing::CommandResult presk(const std::string& arguments) const {
    return presk::testing::run_command("cd '" + folder_.path() + "' && " + presk::testing::presk() + " " + arguments);
  }

  // As presk, but killed after `seconds` (exit status 124) and with its address space capped
  // at `memory_kib` (an allocation beyond is E0002): for inputs that would run without bound.
  presk::testing::CommandResult bounded_presk(const std::string& arguments, int seconds, long memory_kib) const {
    return presk::testing::run_command("cd '" + folder_.path() + "' && ulimit -v " + std::to_string(memory_kib) +
                                       " && timeout " + std::to_string(seconds) + " " + presk::testing::presk() + " " +
                                       arguments);
  }

  // The command exited with `status` and printed `code` (and, when given, `named`), and no
  // watched file changed; the message stays short (no input echoed whole).
  void expect_refused(const presk::testing::CommandResult& result, int status, const std::string& code,
                      const std::string& named = "") const {
    EXPECT_EQ(result.status, status) << result.output;
    EXPECT_EQ(error_code_in(result.output), code) << result.output;
    if (!named.empty()) {
      EXPECT_NE(result.output.find(named), std::string::npos) << named << " in\n" << result.output;
    }
    EXPECT_LT(result.output.size(), 4000u) << "the message echoes its input";
    expect_inputs_unchanged();
  }

  void expect_inputs_unchanged() const {
    for (const auto& [name, bytes] : watched_) EXPECT_TRUE(file_bytes(path(name)) == bytes) << name << " changed";
  }

  testing_support::TempFolder folder_;
  std::map<std::string, std::string> watched_;
};

}  // namespace presk::hostile
