// `presk run --realize R --grad` through the binary: the native vjp's table and JSON against
// the exact `--exact --grad` of the same run, the gaps `--exact --realize --grad` prints, the
// cotangents `--out` writes, and E0541 for --grad on Arb balls.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/run_command.h"
#include "support/safetensors.h"

namespace presk::testing {
namespace {

const std::string kLayernorm =
    std::string(PRESK_SOURCE_DIR) +
    "/examples/layernorm.psk --entry normalize --const D=4 --dim T=3 --seed 5";
const std::string kMlp =
    std::string(PRESK_SOURCE_DIR) + "/examples/mlp.psk --entry loss --dim B=4 --seed 3";

nlohmann::json run_json(const std::string& arguments) {
  CommandResult result = run_command(presk() + " run " + arguments + " --json", false);
  EXPECT_EQ(result.status, 0) << arguments;
  return nlohmann::json::parse(result.output);
}

// The last field of the table line that starts with `name` and a space.
double table_field(const std::string& output, const std::string& name) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(name + " ")) return std::stod(line.substr(line.find_last_of(' ') + 1));
  }
  ADD_FAILURE() << "no row `" << name << "` in\n" << output;
  return NAN;
}

// name → norm2 of the exact --grad's cotangents.
std::map<std::string, double> exact_norms(const std::string& run) {
  std::map<std::string, double> norms;
  const nlohmann::json report = run_json(run + " --exact --grad");
  for (const auto& cotangent : report["cotangents"]) {
    norms[cotangent["name"].get<std::string>()] = std::stod(cotangent["norm2"].get<std::string>());
  }
  return norms;
}

TEST(NativeGradCommand, TableNormsMatchTheExactGradient) {
  const std::map<std::string, double> exact = exact_norms(kLayernorm);
  ASSERT_EQ(exact.size(), 3u);  // x, g, b
  CommandResult table =
      run_command(presk() + " run " + kLayernorm + " --realize f32 --grad --digits 12");
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_NE(table.output.find("# gradient: native, realization f32"), std::string::npos)
      << table.output;
  for (const auto& [name, norm] : exact) {
    const std::string row = name == "x" ? "$x" : name;
    EXPECT_NEAR(table_field(table.output, row), norm, 1e-5 * std::max(norm, 1e-3)) << row;
  }
}

TEST(NativeGradCommand, ExactAndRealizePrintEachCotangentsGap) {
  for (const char* type : {"f64", "f32"}) {
    const double tolerance = type[1] == '6' ? 1e-14 : 1e-5;
    nlohmann::json report = run_json(kMlp + " --exact --grad --realize " + type);
    ASSERT_EQ(report["cotangents"].size(), 5u)
        << report.dump();  // x, hidden.w, hidden.b, out, bias
    for (const auto& cotangent : report["cotangents"]) {
      EXPECT_EQ(cotangent["type"], type);
      EXPECT_LE(cotangent["gap_relative"].get<double>(), tolerance) << cotangent["name"];
      EXPECT_GT(std::stod(cotangent["norm2"].get<std::string>()), 0) << cotangent["name"];
    }
    CommandResult table =
        run_command(presk() + " run " + kMlp + " --exact --grad --realize " + type);
    ASSERT_EQ(table.status, 0) << table.output;
    EXPECT_NE(table.output.find("gap (relative)"), std::string::npos) << table.output;
    EXPECT_LE(table_field(table.output, "hidden.w"), tolerance) << table.output;
  }
}

TEST(NativeGradCommand, OutWritesTheCotangents) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("presk_native_grad_" + std::to_string(::getpid()) + ".safetensors"))
                               .string();
  nlohmann::json report = run_json(kLayernorm + " --realize f64 --grad --out " + path);
  {
    const SafetensorsFile file = SafetensorsFile::open(path);
    ASSERT_EQ(file.entries().size(), 3u);
    for (const auto& cotangent : report["cotangents"]) {
      const std::string name =
          (cotangent["kind"] == "argument" ? "$" : "") + cotangent["name"].get<std::string>();
      const Tensor tensor = file.read(name);
      ASSERT_EQ(tensor.type(), ElementType::f64) << name;
      for (uint64_t i = 0; i < tensor.element_count(); ++i) {
        EXPECT_EQ(tensor.get(i), std::stod(cotangent["values"][i].get<std::string>()))
            << name << "[" << i << "]";
      }
    }
  }
  std::filesystem::remove(path);
}

TEST(NativeGradCommand, GradOnBallsIsE0541) {
  CommandResult result =
      run_command(presk() + " run " + kLayernorm + " --exact --grad --arith ball");
  EXPECT_NE(result.status, 0);
  EXPECT_NE(result.output.find("E0541"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace presk::testing
