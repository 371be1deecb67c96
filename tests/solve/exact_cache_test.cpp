// The exact outputs' cache beside the envelope (precision/exact_cache.h): a second solve, a
// --narrow solve and `explain PROGRAM` read it instead of running the reference and give the
// same bytes; another program, weights, bits or bindings is a miss that rewrites it; a truncated,
// corrupted or foreign file is ignored with a note and rewritten; --no-exact-cache skips it.
#include <filesystem>
#include <fstream>

#include "solve/files_fixture.h"

namespace presk::solve_testing {
namespace {

struct SolveRun {
  int status = -1;
  nlohmann::json report;
  std::string errors;  // stderr
  std::string bytes;   // the realization written
};

// `presk solve PROGRAM --precision ENVELOPE ARGS --json --out OUT`, stderr kept apart.
SolveRun solve_noting(testing_support::TempFolder& folder, const std::string& program, const std::string& envelope,
                 const std::string& args, const std::string& name = "solved.json") {
  const std::string out = folder.file(name), errors = folder.file("stderr.txt");
  const testing::CommandResult result = testing::run_command(
      "(" + testing::presk() + " solve " + program + " --precision " + envelope + " " + args + " --json --out " + out +
          " 2>" + errors + ")",
      false);
  SolveRun run{result.status, {}, read_file(errors), read_file(out)};
  if (result.status == 0 || result.status == 4) run.report = nlohmann::json::parse(result.output);
  return run;
}

bool from_cache(const SolveRun& run) { return run.report["seconds"]["exact_from_cache"].get<bool>(); }

// `presk calibrate --precision … --out FOLDER/envelope.json` with the bits given in ARGS.
std::string calibrate_with(testing_support::TempFolder& folder, const std::string& program, const std::string& args) {
  const std::string out = folder.file("envelope.json");
  const testing::CommandResult result = testing::run_command(
      testing::presk() + " calibrate --precision " + program + " --entry loss " + args + " --quiet --out " + out, false);
  EXPECT_EQ(result.status, 0) << result.output;
  return out;
}

TEST(ExactCache, SecondSolveReadsItAndGivesTheSameBytes) {
  Files files;
  const std::string cache = files.envelope + ".exact.safetensors";
  const SolveRun first = solve_noting(files.folder, files.program, files.envelope, "--budget 1e-3");
  ASSERT_EQ(first.status, 0) << first.errors;
  EXPECT_FALSE(from_cache(first));
  EXPECT_NE(first.errors.find("exact reference: 3 samples in sample and 3 held out"), std::string::npos) << first.errors;
  ASSERT_TRUE(std::filesystem::exists(cache));
  EXPECT_FALSE(std::filesystem::exists(cache + ".presk-tmp"));

  const SolveRun second = solve_noting(files.folder, files.program, files.envelope, "--budget 1e-3", "second.json");
  ASSERT_EQ(second.status, 0) << second.errors;
  EXPECT_TRUE(from_cache(second));
  EXPECT_NE(second.errors.find("exact outputs: from cache " + cache), std::string::npos) << second.errors;
  EXPECT_EQ(second.errors.find("exact reference:"), std::string::npos) << "the reference ran again:\n" << second.errors;
  EXPECT_EQ(second.bytes, first.bytes);
  EXPECT_EQ(second.report["gap"], first.report["gap"]);

  // Another budget and --narrow measure against the same cached outputs.
  const SolveRun narrow = solve_noting(files.folder, files.program, files.envelope, "--budget 1e-4 --narrow heldout", "n.json");
  ASSERT_EQ(narrow.status, 0) << narrow.errors;
  EXPECT_TRUE(from_cache(narrow));
  const SolveRun narrow_fresh = solve_noting(files.folder, files.program, files.envelope,
                                        "--budget 1e-4 --narrow heldout --no-exact-cache", "n2.json");
  EXPECT_FALSE(from_cache(narrow_fresh));
  EXPECT_EQ(narrow_fresh.bytes, narrow.bytes) << "the cached outputs are not the reference's";

  // explain PROGRAM solves first, from the cache.
  const testing::CommandResult explained = testing::run_command(
      testing::presk() + " explain " + files.program + " --precision " + files.envelope + " --budget 1e-3");
  EXPECT_EQ(explained.status, 0) << explained.output;
  EXPECT_NE(explained.output.find("exact outputs: from cache"), std::string::npos) << explained.output;
}

TEST(ExactCache, NoExactCacheNeitherReadsNorWrites) {
  Files files;
  const std::string cache = files.envelope + ".exact.safetensors";
  const SolveRun off = solve_noting(files.folder, files.program, files.envelope, "--budget 1e-3 --no-exact-cache");
  ASSERT_EQ(off.status, 0) << off.errors;
  EXPECT_FALSE(from_cache(off));
  EXPECT_FALSE(std::filesystem::exists(cache));
  solve_noting(files.folder, files.program, files.envelope, "--budget 1e-3");
  ASSERT_TRUE(std::filesystem::exists(cache));
  EXPECT_FALSE(from_cache(solve_noting(files.folder, files.program, files.envelope, "--budget 1e-3 --no-exact-cache")));
}

// Each change of what the outputs depend on, calibrated into the same envelope path: the next
// solve ignores the cache with a note and rewrites it, the one after reads it.
TEST(ExactCache, AnotherProgramWeightsBitsOrBindingsIsAMiss) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk");
  const std::string w1 = write_weights(folder, "w1.safetensors", 1), w2 = write_weights(folder, "w2.safetensors", 5);
  const std::string base = "--dim B=4 --samples 2 --bits 128";
  struct Change {
    const char* what;
    std::string program, args;
  };
  const Change changes[] = {
      {"the start", mlp, base + " --weights " + w1},
      {"weights", mlp, base + " --weights " + w2},
      {"bits", mlp, "--dim B=4 --samples 2 --bits 160 --weights " + w2},
      {"bindings", mlp, "--dim B=3 --samples 2 --bits 160 --weights " + w2},
      {"program", example("solver/equal_terms.psk"), "--dim T=4 --samples 2 --bits 160"},
  };
  for (const Change& change : changes) {
    const std::string program = change.program;
    const std::string envelope = program == mlp ? calibrate_with(folder, program, change.args)
                                                : calibrate(folder, program, "total", "--dim T=4 --samples 2");
    const SolveRun miss = solve_noting(folder, program, envelope, "--budget 1e-3 --min-gain 0");
    ASSERT_EQ(miss.status, 0) << change.what << miss.errors;
    EXPECT_FALSE(from_cache(miss)) << change.what;
    if (std::string(change.what) != "the start") {
      EXPECT_NE(miss.errors.find("ignoring the cache"), std::string::npos) << change.what << miss.errors;
    }
    const SolveRun hit = solve_noting(folder, program, envelope, "--budget 1e-3 --min-gain 0", "hit.json");
    EXPECT_TRUE(from_cache(hit)) << change.what << hit.errors;
    EXPECT_EQ(hit.bytes, miss.bytes) << change.what;
  }
}

TEST(ExactCache, ACorruptFileIsIgnoredAndRewritten) {
  Files files;
  const std::string cache = files.envelope + ".exact.safetensors";
  const SolveRun first = solve_noting(files.folder, files.program, files.envelope, "--budget 1e-3");
  ASSERT_EQ(first.status, 0) << first.errors;
  const std::string good = read_file(cache);
  ASSERT_GT(good.size(), 64u);
  auto write = [&](const std::string& bytes) { std::ofstream(cache, std::ios::binary | std::ios::trunc) << bytes; };
  std::string flipped = good;
  flipped[flipped.size() - 9] = static_cast<char>(flipped[flipped.size() - 9] ^ 0x10);  // a significand bit
  const std::string corruptions[] = {good.substr(0, good.size() / 2), good.substr(0, 5), flipped, "not a cache"};
  for (const std::string& bad : corruptions) {
    write(bad);
    const SolveRun run = solve_noting(files.folder, files.program, files.envelope, "--budget 1e-3", "again.json");
    ASSERT_EQ(run.status, 0) << run.errors;
    EXPECT_FALSE(from_cache(run)) << bad.size();
    EXPECT_NE(run.errors.find("ignoring the cache"), std::string::npos) << run.errors;
    EXPECT_EQ(run.bytes, first.bytes);
    EXPECT_EQ(read_file(cache), good) << "not rewritten";
  }
}

}  // namespace
}  // namespace presk::solve_testing
