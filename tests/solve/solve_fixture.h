// What the solve tests share: an envelope calibrated into a temporary folder, a solve run with
// --json, and the numbers of its record.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/run_command.h"
#include "support/temp_folder.h"

namespace presk::solve_testing {

inline std::string example(const std::string& name) { return std::string(PRESK_SOURCE_DIR) + "/examples/" + name; }

inline double number(const nlohmann::json& value) {
  if (value.is_string()) return value == "inf" ? INFINITY : std::stod(value.get<std::string>());
  return value.get<double>();
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `presk calibrate --precision PROGRAM --entry E ARGS --bits 128 --out FOLDER/NAME`.
inline std::string calibrate(testing_support::TempFolder& folder, const std::string& program, const std::string& entry,
                             const std::string& args, const std::string& name = "envelope.json") {
  const std::string out = folder.file(name);
  const testing::CommandResult result = testing::run_command(
      testing::presk() + " calibrate --precision " + program + " --entry " + entry + " " + args +
          " --bits 128 --quiet --out " + out,
      false);
  EXPECT_EQ(result.status, 0) << result.output;
  return out;
}

struct Solved {
  int status = -1;
  nlohmann::json report;  // the record (--json), when the solve ran
  std::string output;
};

// `presk solve PROGRAM --precision ENVELOPE ARGS --json --quiet --out OUT`.
inline Solved solve(const std::string& program, const std::string& envelope, const std::string& args,
                    const std::string& out) {
  const testing::CommandResult result = testing::run_command(
      testing::presk() + " solve " + program + " --precision " + envelope + " " + args + " --json --quiet --out " + out,
      false);
  Solved solved{result.status, {}, result.output};
  if (result.status == 0 || result.status == 4) solved.report = nlohmann::json::parse(result.output);
  return solved;
}

// The final type of the value `key` in a solve's record.
inline std::string final_type(const nlohmann::json& record, const std::string& key) {
  for (const auto& value : record["values"]) {
    if (value["key"] == key) return value["final"];
  }
  return "absent";
}
inline std::string proposed_type(const nlohmann::json& record, const std::string& key) {
  for (const auto& value : record["values"]) {
    if (value["key"] == key) return value["proposed"];
  }
  return "absent";
}

// The largest `gap_absolute` of `presk run … --realize @R --exact --json` over its samples.
inline double run_gap(const std::string& program, const std::string& args, const std::string& realization) {
  const testing::CommandResult result = testing::run_command(
      testing::presk() + " run " + program + " " + args + " --realize @" + realization + " --exact --bits 128 --json",
      false);
  EXPECT_EQ(result.status, 0) << result.output;
  const nlohmann::json json = nlohmann::json::parse(result.output);
  double gap = 0;
  std::function<void(const nlohmann::json&)> visit = [&](const nlohmann::json& node) {
    if (node.is_object()) {
      if (node.contains("gap_absolute")) gap = std::max(gap, number(node["gap_absolute"]));
      for (const auto& item : node.items()) visit(item.value());
    } else if (node.is_array()) {
      for (const auto& item : node) visit(item);
    }
  };
  visit(json);
  return gap;
}

}  // namespace presk::solve_testing
