// `presk tensors` as a user runs it: the table and the JSON of a file presk wrote, and the
// exit status and code of a malformed file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "support/atomic_file.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"

namespace presk {
namespace {

struct CommandRun {
  int status;
  std::string output;  // stdout and stderr
};

CommandRun run_presk(const std::string& arguments) {
  std::string command = std::string(PRESK_BINARY) + " " + arguments + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  std::string output;
  char buffer[4096];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, got);
  int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST(TensorsCommand, ListsAFileAsTableAndJson) {
  testing_support::TempFolder folder;
  Tensor weights(ElementType::bf16, {2, 3}, {"out", "in"});
  for (int i = 0; i < 6; ++i) weights.set(i, 0.5 * i - 1);
  Tensor codes(ElementType::i4, {3});
  codes.set_integer(0, -8);
  std::string path = folder.file("w.safetensors");
  write_safetensors(path, {{"layer.w", weights}, {"codes", codes}}, {{"format", "pt"}});

  CommandRun table = run_presk("tensors " + path + " --values 2");
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_NE(table.output.find("layer.w"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("[out=2, in=3]"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("-1, -0.5, ..."), std::string::npos) << table.output;

  CommandRun json = run_presk("tensors " + path + " --json --values 10");
  ASSERT_EQ(json.status, 0) << json.output;
  nlohmann::json parsed = nlohmann::json::parse(json.output);
  ASSERT_EQ(parsed["tensors"].size(), 2u);
  const nlohmann::json& first = parsed["tensors"][0];  // sorted by name: codes
  EXPECT_EQ(first["name"], "codes");
  EXPECT_EQ(first["dtype"], "i4");
  EXPECT_EQ(first["file_dtype"], "U8");
  EXPECT_EQ(first["values"], nlohmann::json({-8, 0, 0}));
  EXPECT_EQ(parsed["tensors"][1]["values"].size(), 6u);
  EXPECT_EQ(parsed["tensors"][1]["values"][5], 1.5);
  EXPECT_EQ(parsed["metadata"]["format"], "pt");
}

TEST(TensorsCommand, MalformedFileIsAUserError) {
  testing_support::TempFolder folder;
  std::string path = folder.file("bad.safetensors");
  write_file_atomically(path, std::string("\x02\0\0\0\0\0\0\0[]", 10));
  CommandRun run = run_presk("tensors " + path);
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("error[E0105]"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace presk
