// `presk run --exact --grad` through the binary: the printed 2-norms of mse's cotangents against
// the closed form ∂/∂p (1/N)‖p − t‖² = (2/N)(p − t), layernorm's parameter cotangents (--json
// and the table) against central differences of two `presk run --exact` runs on --weights
// files, and the coded error for --grad with --arith ball or --realize.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/run_command.h"
#include "support/safetensors.h"

namespace presk::testing {
namespace {

const std::string kLayernorm = std::string(PRESK_SOURCE_DIR) + "/examples/layernorm.psk";
const std::string kMse = std::string(PRESK_SOURCE_DIR) + "/examples/mse.psk";
const std::string kShape = " --const D=4 --dim T=3 --seed 5";

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("presk_grad_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// The last field of the table line that starts with `name` and a space.
double table_norm(const std::string& output, const std::string& name) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(name + " ")) continue;
    return std::stod(line.substr(line.find_last_of(' ') + 1));
  }
  ADD_FAILURE() << "no row `" << name << "` in\n" << output;
  return NAN;
}

nlohmann::json run_json(const std::string& arguments) {
  CommandResult result = run_command(presk() + " run " + arguments + " --json", false);
  EXPECT_EQ(result.status, 0) << arguments;
  return nlohmann::json::parse(result.output);
}

// Σ of the entry's output elements (the vjp's objective for a seed of ones) with g, b given.
long double objective(const std::vector<double>& g, const std::vector<double>& b) {
  Tensor gt(ElementType::f64, {4}), bt(ElementType::f64, {4});
  for (uint64_t i = 0; i < 4; ++i) {
    gt.set(i, g[i]);
    bt.set(i, b[i]);
  }
  std::string path = temp_path("w.safetensors");
  write_safetensors(path, {{"g", gt}, {"b", bt}});
  nlohmann::json report = run_json(kLayernorm + " --entry normalize --exact" + kShape + " --weights " + path);
  std::filesystem::remove(path);
  long double total = 0;
  for (const auto& value : report["outputs"][0]["values"]) total += std::stold(value.get<std::string>());
  return total;
}

TEST(GradCommand, MseMatchesClosedForm) {
  CommandResult table = run_command(presk() + " run " + kMse + " --entry mse --dim N=8 --exact --grad --digits 15");
  ASSERT_EQ(table.status, 0) << table.output;
  nlohmann::json report = run_json(kMse + " --entry mse --dim N=8 --exact --grad");
  double value = std::stod(report["value"]["values"][0].get<std::string>());
  // ‖(2/N)(p − t)‖₂ = (2/N)·√(N·value) = 2·√(value/N), and t̄ = −p̄.
  double expected = 2 * std::sqrt(value / 8);
  EXPECT_NEAR(table_norm(table.output, "$prediction"), expected, 1e-13 * expected);
  EXPECT_NEAR(table_norm(table.output, "$target"), expected, 1e-13 * expected);
  const auto& cotangents = report["cotangents"];
  ASSERT_EQ(cotangents.size(), 2u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(std::stod(cotangents[0]["values"][i].get<std::string>()),
              -std::stod(cotangents[1]["values"][i].get<std::string>()));
  }
}

TEST(GradCommand, LayernormMatchesCentralDifferences) {
  std::vector<double> g = {0.75, -1.25, 2.0, 0.5}, b = {0.125, -0.5, 1.0, 0.25};
  Tensor gt(ElementType::f64, {4}), bt(ElementType::f64, {4});
  for (uint64_t i = 0; i < 4; ++i) {
    gt.set(i, g[i]);
    bt.set(i, b[i]);
  }
  std::string weights = temp_path("base.safetensors"), out = temp_path("out.safetensors");
  write_safetensors(weights, {{"g", gt}, {"b", bt}});
  std::string grad = kLayernorm + " --entry normalize --exact --grad --digits 15" + kShape + " --weights " + weights;
  CommandResult table = run_command(presk() + " run " + grad + " --out " + out);
  ASSERT_EQ(table.status, 0) << table.output;
  nlohmann::json report = run_json(grad);
  std::filesystem::remove(weights);
  EXPECT_TRUE(std::filesystem::exists(out));
  std::filesystem::remove(out);
  const double h = std::ldexp(1.0, -10);  // L is affine in g and b: the differences are exact
  for (const char* name : {"g", "b"}) {
    const nlohmann::json* cotangent = nullptr;
    for (const auto& entry : report["cotangents"])
      if (entry["name"] == name) cotangent = &entry;
    ASSERT_NE(cotangent, nullptr) << name;
    double squares = 0;
    for (size_t j = 0; j < 4; ++j) {
      std::vector<double> plus_g = g, minus_g = g, plus_b = b, minus_b = b;
      (name[0] == 'g' ? plus_g : plus_b)[j] += h;
      (name[0] == 'g' ? minus_g : minus_b)[j] -= h;
      double difference = static_cast<double>((objective(plus_g, plus_b) - objective(minus_g, minus_b)) / (2 * h));
      double vjp = std::stod((*cotangent)["values"][j].get<std::string>());
      EXPECT_NEAR(vjp, difference, 1e-9 * std::max(1.0, std::fabs(difference))) << name << "[" << j << "]";
      squares += difference * difference;
    }
    EXPECT_NEAR(table_norm(table.output, name), std::sqrt(squares), 1e-9 * std::sqrt(squares)) << name;
  }
}

TEST(GradCommand, GradNeedsMpfrReference) {
  for (const char* extra : {" --arith ball"}) {
    CommandResult result =
        run_command(presk() + " run " + kMse + " --entry mse --dim N=4 --exact --grad" + extra);
    EXPECT_NE(result.status, 0) << extra;
    EXPECT_NE(result.output.find("E0541"), std::string::npos) << result.output;
  }
}

}  // namespace
}  // namespace presk::testing
