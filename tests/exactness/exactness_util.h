// Helpers of the exactness tests: write a program into a fresh folder, run the presk binary
// on it as a user would, and read back the exit status, the error codes it printed and the
// values of `run --json`. Every case checks that the program file is left unchanged.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/run_command.h"
#include "support/temp_folder.h"

namespace presk::exactness {

struct Outcome {
  int status = -1;
  std::set<std::string> codes;  // every error[E####] printed
  std::string output;           // stdout and stderr
  bool internal_error = false;  // "internal error" printed (a bug: never expected)
};

class Program {
 public:
  // `name`'s extension tells presk what it holds: .psk source or .pir printed IR.
  explicit Program(std::string text, std::string name = "program.psk")
      : text_(std::move(text)), name_(std::move(name)) {
    std::ofstream(path()) << text_;
  }
  ~Program() {
    std::ifstream in(path());
    std::stringstream now;
    now << in.rdbuf();
    EXPECT_EQ(now.str(), text_) << "the program file changed";
  }
  std::string path() const { return folder_.file(name_); }
  std::string file(const std::string& name) const { return folder_.file(name); }

  // `presk ARGS` with the program's path appended.
  Outcome run(const std::string& arguments) const {
    testing::CommandResult result =
        testing::run_command(testing::presk() + " " + arguments + " '" + path() + "'");
    Outcome outcome{result.status,
                    {},
                    result.output,
                    result.output.find("internal error") != std::string::npos};
    std::regex code(R"(error\[(E\d{4})\])");
    for (auto it = std::sregex_iterator(result.output.begin(), result.output.end(), code);
         it != std::sregex_iterator(); ++it) {
      outcome.codes.insert((*it)[1]);
    }
    return outcome;
  }

 private:
  testing_support::TempFolder folder_;
  std::string text_;
  std::string name_;
};

// The values of output 0 (of sample 0) that `run --json` printed: the native ones when the
// run has a realization, else the exact ones.
inline std::vector<std::string> json_values(const Program& program, const std::string& arguments) {
  testing::CommandResult result = testing::run_command(
      testing::presk() + " " + arguments + " --json '" + program.path() + "'", false);
  EXPECT_EQ(result.status, 0) << result.output;
  if (result.status != 0) return {};
  nlohmann::json json = nlohmann::json::parse(result.output);
  const nlohmann::json& outputs =
      json.contains("samples") ? json["samples"][0]["outputs"] : json["outputs"];
  return outputs[0]["values"].get<std::vector<std::string>>();
}

// A user error of exactly `code`, exit status 1, and no internal error.
inline void expect_user_error(const Outcome& outcome, const std::string& code) {
  EXPECT_EQ(outcome.status, 1) << outcome.output;
  EXPECT_EQ(outcome.codes, std::set<std::string>{code}) << outcome.output;
  EXPECT_FALSE(outcome.internal_error) << outcome.output;
}

// Success: exit status 0, no error code, no internal error.
inline void expect_success(const Outcome& outcome) {
  EXPECT_EQ(outcome.status, 0) << outcome.output;
  EXPECT_TRUE(outcome.codes.empty()) << outcome.output;
  EXPECT_FALSE(outcome.internal_error) << outcome.output;
}

}  // namespace presk::exactness
