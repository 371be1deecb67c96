// The profile (src/profile): its file round-trips and is validated with coded errors; a profile
// of another machine is accepted, one with a class missing refused; the roofline fit recovers a
// known roofline from exact samples. And `presk solve --profile` with synthetic profiles: where
// bf16 is slower than f32 it never chooses bf16; where conversions are free and bf16 fast it
// does; with or without a profile the same solve writes the same bytes. No timing is asserted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "common/error_code.h"
#include "profile/calibrate.h"
#include "profile/profile.h"
#include "solve/solve_fixture.h"
#include "support/json_reader.h"

namespace presk::profile {
namespace {

using solve_testing::example;
using solve_testing::read_file;
using testing::error_code;

struct Speeds {
  double f64 = 1e9, f32 = 2e9, bf16 = 4e9;  // operations and bytes per second of each type
  double conversion = 1e-9;                  // seconds per element of every conversion
};

Profile synthetic(const Speeds& speeds, const std::string& cpu = "Synthetic CPU") {
  Profile p;
  p.cpu = cpu;
  p.cores = 2;
  p.threads = 1;
  p.date = "2026-12-01T00:00:00Z";
  const std::map<std::string, double> rate = {{"f64", speeds.f64}, {"f32", speeds.f32}, {"bf16", speeds.bf16},
                                              {"int8", speeds.f32}, {"int4", speeds.f32}};
  for (OpClass c : kClasses) {
    for (const auto& [type, r] : rate) {
      if (type.rfind("int", 0) == 0 && c != OpClass::contraction) continue;
      Fit fit;
      fit.roofline = {1e-7, r, r};
      fit.points = 5;
      fit.held_out = 2;
      fit.residual = 0.125;
      fit.fit_residual = 0.0625;
      p.rooflines[class_name(c)][type] = fit;
    }
  }
  for (const char* from : kFloatTypes) {
    for (const char* to : kFloatTypes) {
      if (std::string(from) == to) continue;
      p.edge[conversion_key(from, to)] = speeds.conversion;
      p.load[conversion_key(from, to)] = speeds.conversion;
    }
  }
  p.load["int8>f32"] = p.load["int4>f32"] = speeds.conversion;
  return p;
}

Profile reparse(const nlohmann::json& json) { return parse_profile(json, "test.json"); }

std::string write(testing_support::TempFolder& folder, const std::string& name, const std::string& text) {
  const std::string path = folder.file(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(Profile, RoundTripsBitForBit) {
  Profile p = synthetic({});
  p.rooflines["contraction"]["f32"].roofline = {1.0 / 3, 2.0 / 7, std::nextafter(1e10, 2e10)};
  p.edge["bf16>f64"] = 0.1 + 0.2;
  const std::string text = profile_to_json(p).dump(1);
  const Profile back = reparse(nlohmann::json::parse(text));
  EXPECT_EQ(profile_to_json(back).dump(1), text);
  EXPECT_EQ(back.roofline(OpClass::contraction, "f32").latency, 1.0 / 3);
  EXPECT_EQ(back.edge_cost(RealType::bf16, RealType::f64), 0.1 + 0.2);
  EXPECT_EQ(back.edge_cost(RealType::f32, RealType::f32), 0);
  EXPECT_EQ(back.load_cost("int8", RealType::f64), 2e-9);  // dequantized to f32, then widened
}

TEST(Profile, AnotherMachineIsAcceptedAMissingClassRefused) {
  const nlohmann::json other = profile_to_json(synthetic({}, "AMD EPYC 9654 96-Core Processor"));
  nlohmann::json more_cores = other;
  more_cores["cores"] = 192;
  EXPECT_EQ(reparse(more_cores).cpu, "AMD EPYC 9654 96-Core Processor");
  EXPECT_EQ(reparse(more_cores).cores, 192);
  nlohmann::json missing = other;
  missing["rooflines"].erase("normalization");
  EXPECT_EQ(error_code([&] { reparse(missing); }), "E1202");
  nlohmann::json missing_type = other;
  missing_type["rooflines"]["layout"].erase("bf16");
  EXPECT_EQ(error_code([&] { reparse(missing_type); }), "E1202");
  nlohmann::json missing_int = other;
  missing_int["rooflines"]["contraction"].erase("int4");
  EXPECT_EQ(error_code([&] { reparse(missing_int); }), "E1202");
  nlohmann::json missing_edge = other;
  missing_edge["conversions"]["edge"].erase("f32>bf16");
  EXPECT_EQ(error_code([&] { reparse(missing_edge); }), "E1202");
}

TEST(Profile, BadFilesGetCodedErrors) {
  const nlohmann::json good = profile_to_json(synthetic({}));
  auto with = [&](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json j = good;
    change(j);
    return error_code([&] { reparse(j); });
  };
  EXPECT_EQ(with([](nlohmann::json& j) { j["format"] = 2; }), "E1201");
  EXPECT_EQ(with([](nlohmann::json& j) { j.erase("format"); }), "E1201");
  EXPECT_EQ(with([](nlohmann::json& j) { j["rooflines"]["elementwise"]["f32"]["rate"] = -1.0; }), "E1203");
  EXPECT_EQ(with([](nlohmann::json& j) { j["rooflines"]["elementwise"]["f32"]["bandwidth"] = 0; }), "E1203");
  EXPECT_EQ(with([](nlohmann::json& j) { j["rooflines"]["reduction"]["f64"]["latency"] = "inf"; }), "E1203");
  EXPECT_EQ(with([](nlohmann::json& j) { j["conversions"]["load"]["int8>f32"] = -1e-9; }), "E1203");
  EXPECT_EQ(with([](nlohmann::json& j) { j.erase("cpu"); }), "E1204");
  EXPECT_EQ(with([](nlohmann::json& j) { j["cores"] = 0; }), "E1204");
  EXPECT_EQ(with([](nlohmann::json& j) { j["threads"] = "two"; }), "E1204");
  EXPECT_EQ(with([](nlohmann::json& j) { j = nlohmann::json::array(); }), "E1201");
  testing_support::TempFolder folder;
  EXPECT_EQ(error_code([&] { read_profile(write(folder, "cut.json", good.dump().substr(0, 40))); }), "E1200");
  EXPECT_EQ(error_code([&] { read_profile(folder.file("absent.json")); }), "E1200");
  EXPECT_EQ(read_profile(write(folder, "good.json", good.dump())).cpu, "Synthetic CPU");
  const nlohmann::json huge = nlohmann::json::parse(R"({"format": 1, "cpu": "x", "cores": 1, "threads": 1,
      "date": "d", "rooflines": {"contraction": {"f64": {"latency": 1e999}}}})", nullptr, false);
  EXPECT_TRUE(huge.is_discarded() || error_code([&] { reparse(huge); }) != "none");
}

TEST(Profile, FitRecoversAKnownRoofline) {
  const Roofline truth{2e-6, 3e10, 1.5e10};
  std::vector<Sample> fitted, held_out;
  for (int i = 0; i < 9; ++i) {
    const double n = std::exp2(8 + i);
    const Sample s{n * (1 + 30 * (i % 3)), n * 8, 0};
    (i % 3 == 1 ? held_out : fitted).push_back({s.work, s.bytes, truth.predict(s.work, s.bytes)});
  }
  const Fit fit = fit_roofline(fitted, held_out);
  EXPECT_LT(fit.fit_residual, 0.06);
  EXPECT_LT(fit.residual, 0.06);
  EXPECT_EQ(fit.points, 6);
  EXPECT_EQ(fit.held_out, 3);
  const Fit again = fit_roofline(fitted, held_out);  // deterministic
  EXPECT_EQ(again.roofline.rate, fit.roofline.rate);
  EXPECT_EQ(again.roofline.latency, fit.roofline.latency);
}

// A synthetic machine of known λ, π, β, timed with noise as calibrate times (each shape the median
// of 5 rounds, each round off by up to ±10 %, deterministic): the fit recovers λ within 25 % and
// π and β within 10 % (the grid's own step is 2^(9/96), 6.7 %), its held-out residual stays under
// kGoodResidual, and the confidence says so.
TEST(Profile, FitRecoversASyntheticMachineFromNoisyMedians) {
  const Roofline truth{3e-6, 4e9, 1.2e10};
  uint64_t state = 12345;
  const auto noise = [&state] {  // in [−0.1, 0.1)
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return 0.2 * (static_cast<double>(state >> 11) / 9007199254740992.0) - 0.1;
  };
  std::vector<Sample> samples;
  for (int i = 0; i < 18; ++i) {
    const double n = std::exp2(6 + i);                     // elements, 64 … 8M
    const double intensity = i % 3 == 0 ? 0.5 : i % 3 == 1 ? 16 : 256;  // memory-, then compute-bound
    Sample s{n * intensity, n * 8, 0};
    std::vector<double> rounds;
    for (int r = 0; r < kMinRounds; ++r) rounds.push_back(truth.predict(s.work, s.bytes) * (1 + noise()));
    std::sort(rounds.begin(), rounds.end());
    s.seconds = rounds[rounds.size() / 2];
    samples.push_back(s);
  }
  std::vector<Sample> fitted, held_out;
  for (size_t i = 0; i < samples.size(); ++i) (i % 4 == 1 ? held_out : fitted).push_back(samples[i]);
  const Fit fit = fit_roofline(fitted, held_out);
  EXPECT_NEAR(fit.roofline.latency / truth.latency, 1, 0.25) << fit.roofline.latency;
  EXPECT_NEAR(fit.roofline.rate / truth.rate, 1, 0.10) << fit.roofline.rate;
  EXPECT_NEAR(fit.roofline.bandwidth / truth.bandwidth, 1, 0.10) << fit.roofline.bandwidth;
  EXPECT_LT(fit.residual, kGoodResidual);
  EXPECT_STREQ(fit_confidence(fit), "good");
  Fit poor = fit;
  poor.residual = 2 * kResidualLimit;
  EXPECT_STREQ(fit_confidence(poor), "LOW");
}

// A synthetic machine's load of an int8 weight: the contraction reads w at 1 byte instead of 4
// (its roofline prices the saving, `traffic` < 0) and dequantizes each element at a known 0.8 ns,
// timed with ±3 % noise. The fit takes the traffic out and recovers 0.8 ns within 15 %, its
// standard error covering the truth; without the traffic taken out (the old confound) the same
// times give a cost below 0.
TEST(Profile, ConversionFitSeparatesTheCostFromTheTraffic) {
  const Roofline f32{1e-6, 2e10, 2.5e9};  // reading w saves 1.2 ns per element at 1 byte
  const double truth = 0.8e-9;
  uint64_t state = 99;
  const auto noise = [&state] {  // in [−0.03, 0.03)
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return 0.06 * (static_cast<double>(state >> 11) / 9007199254740992.0) - 0.03;
  };
  std::vector<ConversionPoint> points, confounded;
  for (int i = 0; i < 8; ++i) {
    const double n = 64.0 * 1024 * (1 + i);  // elements of w (K·M); one row of A: a load-bound contraction
    const double work = 2 * n, bytes_f32 = 4 * n + 8 * 1024, bytes_int8 = n + 8 * 1024;
    const double without = f32.predict(work, bytes_f32), with = f32.predict(work, bytes_int8) + truth * n;
    ConversionPoint p{n, with * (1 + noise()), without * (1 + noise()),
                      f32.predict(work, bytes_int8) - f32.predict(work, bytes_f32)};
    points.push_back(p);
    p.traffic = 0;
    confounded.push_back(p);
  }
  const ConversionFit fit = fit_conversion(points);
  EXPECT_NEAR(fit.cost / truth, 1, 0.15) << fit.cost;
  EXPECT_LT(std::fabs(fit.cost - truth), 3 * fit.error + 0.05 * truth);
  EXPECT_EQ(fit.points, 8);
  EXPECT_LT(fit_conversion(confounded).cost, 0);
  EXPECT_EQ(recorded_cost(fit_conversion(confounded)), 0);
  EXPECT_STREQ(conversion_confidence(fit_conversion(confounded)), "LOW");
}

// A fit past kResidualLimit is rejected and measured again at twice the rounds: a machine noisy at
// the first measurement (every third shape, the held-out ones, 60 % off) and quiet at the second
// is measured twice and keeps the quiet fit; one noisy every time is measured kMeasurements
// times, keeps its best and says it is LOW. A conversion below 0 beyond twice its error is
// measured again; its recorded cost is the last fit's.
TEST(Profile, RejectedFitsAreMeasuredAgain) {
  const Roofline truth{2e-6, 4e9, 1e10};
  const auto samples = [&](bool noisy) {
    std::vector<Sample> out;
    for (int i = 0; i < 12; ++i) {
      const double n = std::exp2(8 + i), work = n * (i % 2 ? 16 : 0.5), bytes = 8 * n;
      out.push_back({work, bytes, truth.predict(work, bytes) * (noisy && i % 3 == 1 ? 1.6 : 1.0)});
    }
    return out;
  };
  std::vector<int> asked;
  std::vector<std::string> lines;
  CalibrateOptions options;
  options.progress = [&](const std::string& line) { lines.push_back(line); };
  const Fit fit = fit_measured(options, "quiet later", [&](int rounds) {
    asked.push_back(rounds);
    return samples(asked.size() == 1);
  });
  EXPECT_EQ(asked, (std::vector<int>{kMinRounds, 2 * kMinRounds}));
  EXPECT_LE(fit.residual, kGoodResidual);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("rejected at 5 rounds"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("confidence good"), std::string::npos) << lines[0];
  asked.clear(), lines.clear();
  const Fit noisy = fit_measured(options, "noisy", [&](int rounds) {
    asked.push_back(rounds);
    return samples(true);
  });
  EXPECT_EQ(asked.size(), static_cast<size_t>(kMeasurements));
  EXPECT_EQ(asked.back(), kMinRounds << (kMeasurements - 1));
  EXPECT_STREQ(fit_confidence(noisy), "LOW");
  EXPECT_NE(lines.at(0).find("kept the best"), std::string::npos) << lines[0];
  // A conversion: below 0 by far at first, then 0.5 ns per element with small noise.
  asked.clear(), lines.clear();
  const double cost = conversion_measured(options, "edge", [&](int rounds) {
    asked.push_back(rounds);
    std::vector<ConversionPoint> points;
    for (int i = 1; i <= 6; ++i) {
      const double n = 1000.0 * i, jitter = (i % 2 ? 1 : -1) * 1e-9;
      points.push_back({n, 1e-5 + (asked.size() == 1 ? -2e-9 : 0.5e-9) * n + jitter, 1e-5, 0});
    }
    return points;
  });
  EXPECT_EQ(asked.size(), 2u);
  EXPECT_NEAR(cost, 0.5e-9, 0.05e-9);
  EXPECT_NE(lines.at(0).find("rejected at 5 rounds"), std::string::npos) << lines[0];
}

TEST(Profile, OpClasses) {
  EXPECT_EQ(op_class(ir::Op::contract), OpClass::contraction);
  EXPECT_EQ(op_class(ir::Op::gelu_tanh), OpClass::transcendental);
  EXPECT_EQ(op_class(ir::Op::softmax), OpClass::normalization);
  EXPECT_EQ(op_class(ir::Op::mean), OpClass::reduction);
  EXPECT_EQ(op_class(ir::Op::transpose), OpClass::layout);
  EXPECT_EQ(op_class(ir::Op::add), OpClass::elementwise);
}

// The types the record gives the values, counted.
std::map<std::string, int> finals(const nlohmann::json& record, const char* which = "proposed") {
  std::map<std::string, int> count;
  for (const auto& value : record["values"]) ++count[value[which].get<std::string>()];
  return count;
}

class SolveByTime : public ::testing::Test {
 protected:
  void SetUp() override {
    envelope_ = solve_testing::calibrate(folder_, example("mlp.psk"), "loss", "--dim B=4 --samples 2");
  }
  solve_testing::Solved solve_with(const Speeds& speeds, const std::string& name) {
    const std::string profile = write(folder_, name + ".profile.json", profile_to_json(synthetic(speeds)).dump());
    return solve_testing::solve(example("mlp.psk"), envelope_, "--budget 1e-1 --profile " + profile, folder_.file(name + ".json"));
  }
  testing_support::TempFolder folder_;
  std::string envelope_;
};

TEST_F(SolveByTime, Bf16SlowerThanF32IsNeverChosen) {
  const solve_testing::Solved solved = solve_with({1e9, 4e9, 1e9, 1e-9}, "slow_bf16");
  ASSERT_EQ(solved.status, 0) << solved.output;
  EXPECT_EQ(finals(solved.report)["bf16"], 0) << solved.report.dump();
  EXPECT_EQ(finals(solved.report, "final")["bf16"], 0);
  EXPECT_GT(finals(solved.report)["f32"], 0);  // f32 is faster, and it is taken
  const nlohmann::json& predicted = solved.report["predicted"];
  EXPECT_LT(predicted["realization_seconds"].get<double>(), predicted["all_f64_seconds"].get<double>());
  EXPECT_GT(predicted["floor_seconds"].get<double>(), predicted["realization_seconds"].get<double>());
}

// --narrow measured under a profile narrows only where the profile predicts a saving: with bf16
// slower than f32, the narrowing that takes bf16 by bytes (the same solve without a profile)
// keeps none, and the realization is predicted no slower than the proposal it narrowed.
TEST_F(SolveByTime, NarrowingKeepsNoStepPredictedSlower) {
  const std::string profile = write(folder_, "slow.profile.json", profile_to_json(synthetic({1e9, 4e9, 1e9, 1e-9})).dump());
  const solve_testing::Solved bytes =
      solve_testing::solve(example("mlp.psk"), envelope_, "--budget 1e-1 --narrow measured", folder_.file("bytes.json"));
  ASSERT_EQ(bytes.status, 0) << bytes.output;
  ASSERT_GT(finals(bytes.report, "final")["bf16"], 0) << "the test needs a narrowing that takes bf16 by bytes";
  const solve_testing::Solved timed = solve_testing::solve(
      example("mlp.psk"), envelope_, "--budget 1e-1 --narrow measured --profile " + profile, folder_.file("timed.json"));
  ASSERT_EQ(timed.status, 0) << timed.output;
  EXPECT_EQ(finals(timed.report, "final")["bf16"], 0) << timed.report.dump();
  int tried = 0;
  for (const auto& move : timed.report["moves"]) tried += move["kind"] == "try_narrow" && move["to"] == "bf16";
  EXPECT_EQ(tried, 0) << "a step predicted slower is never tried";
}

// solve --profile --report: the HTML report shows the predicted times the record holds.
TEST_F(SolveByTime, TheReportShowsThePredictedTimes) {
  const std::string profile = write(folder_, "r.profile.json", profile_to_json(synthetic({1e9, 4e9, 1e9, 1e-9})).dump());
  const std::string html = folder_.file("r.html");
  const solve_testing::Solved solved = solve_testing::solve(
      example("mlp.psk"), envelope_, "--budget 1e-1 --profile " + profile + " --report " + html, folder_.file("r.json"));
  ASSERT_EQ(solved.status, 0) << solved.output;
  const std::string text = read_file(html);
  for (const char* field : {"all_f64_seconds", "realization_seconds", "all_f32_seconds", "floor_seconds"}) {
    const double seconds = solved.report["predicted"][field].get<double>();
    const std::string cell = std::string("data-field=\"predicted_") + field + "\" data-value=\"";
    const size_t at = text.find(cell);
    ASSERT_NE(at, std::string::npos) << field;
    EXPECT_EQ(std::stod(text.substr(at + cell.size(), 40)), seconds) << field;
  }
}

TEST_F(SolveByTime, FreeConversionsAndFastBf16ChooseBf16) {
  const solve_testing::Solved solved = solve_with({1e9, 2e9, 8e9, 0}, "fast_bf16");
  ASSERT_EQ(solved.status, 0) << solved.output;
  EXPECT_GT(finals(solved.report)["bf16"], 0) << solved.report.dump();
}

TEST_F(SolveByTime, ConversionsDearerThanTheSavingKeepF64) {
  const solve_testing::Solved solved = solve_with({1e9, 1.01e9, 1.02e9, 1e-3}, "dear_edges");
  ASSERT_EQ(solved.status, 0) << solved.output;
  const nlohmann::json& predicted = solved.report["predicted"];
  EXPECT_LE(predicted["realization_seconds"].get<double>(), predicted["all_f64_seconds"].get<double>());
}

TEST_F(SolveByTime, SameBytesEveryRunWithAndWithoutProfile) {
  const std::string plain1 = folder_.file("plain1.json"), plain2 = folder_.file("plain2.json");
  ASSERT_EQ(solve_testing::solve(example("mlp.psk"), envelope_, "--budget 1e-2", plain1).status, 0);
  ASSERT_EQ(solve_testing::solve(example("mlp.psk"), envelope_, "--budget 1e-2", plain2).status, 0);
  EXPECT_EQ(read_file(plain1), read_file(plain2));
  EXPECT_EQ(nlohmann::json::parse(read_file(plain1))["solve"].count("predicted"), 0u);  // no trace of pricing
  const solve_testing::Solved a = solve_with({1e9, 2e9, 8e9, 1e-10}, "timed1");
  const solve_testing::Solved b = solve_with({1e9, 2e9, 8e9, 1e-10}, "timed2");
  ASSERT_EQ(a.status, 0);
  nlohmann::json fa = nlohmann::json::parse(read_file(folder_.file("timed1.json")));
  nlohmann::json fb = nlohmann::json::parse(read_file(folder_.file("timed2.json")));
  fa["solve"]["predicted"].erase("profile");  // the profile's own path differs
  fb["solve"]["predicted"].erase("profile");
  EXPECT_EQ(fa.dump(), fb.dump());
}

TEST_F(SolveByTime, CommandErrors) {
  const std::string profile = write(folder_, "p.json", profile_to_json(synthetic({})).dump());
  nlohmann::json missing = profile_to_json(synthetic({}));
  missing["rooflines"].erase("layout");
  const std::string bad = write(folder_, "bad.json", missing.dump());
  auto status_of = [&](const std::string& args) {
    return testing::run_command(testing::presk() + " " + args, true);
  };
  const std::string base = "solve " + example("mlp.psk") + " --precision " + envelope_ + " --budget 1e-2 --quiet --out " +
                           folder_.file("x.json");
  EXPECT_NE(status_of(base + " --profile " + bad).output.find("E1202"), std::string::npos);
  EXPECT_NE(status_of(base + " --profile " + profile + " --exhaustive").output.find("E1205"), std::string::npos);
  EXPECT_NE(status_of("bench").output.find("E1206"), std::string::npos);
  EXPECT_NE(status_of("bench " + example("mlp.psk") + " --entry loss --dim B=4 --realize f64 --vs f32 --grad").output.find("E1208"),
            std::string::npos);
  EXPECT_NE(status_of("bench " + example("mlp.psk") + " --entry loss --dim B=4 --realize f64 --vs f32 --machine " + profile)
                .output.find("E1207"),
            std::string::npos);
  EXPECT_NE(status_of("bench " + example("mlp.psk") + " --entry loss --dim B=8 --realize f64 --vs f32 --machine " + profile +
                      " --precision " + envelope_)
                .output.find("E1209"),
            std::string::npos);  // the envelope is of B=4
}

TEST_F(SolveByTime, BenchVsTimesEachAndPredictsTheRatio) {
  const std::string profile = write(folder_, "p.json", profile_to_json(synthetic({})).dump());
  const testing::CommandResult result = testing::run_command(
      testing::presk() + " bench " + example("mlp.psk") + " --entry loss --dim B=4 --realize f64 --vs f32 --vs bf16 -n 2 " +
          "--rounds 2 --machine " + profile + " --precision " + envelope_ + " --json",
      false);
  ASSERT_EQ(result.status, 0) << result.output;
  const nlohmann::json out = nlohmann::json::parse(result.output.substr(result.output.find('{')));
  ASSERT_EQ(out["realizations"].size(), 3u);
  EXPECT_EQ(out["realizations"][0]["ratio"].get<double>(), 1.0);
  EXPECT_EQ(out["realizations"][0]["predicted_ratio"].get<double>(), 1.0);
  EXPECT_EQ(out["realizations"][1]["rounds_ms"].size(), 2u);
  // f32 runs at twice f64's synthetic speed: every priced term halves, the latencies aside.
  EXPECT_LT(out["realizations"][1]["predicted_ratio"].get<double>(), 1.0);
}

}  // namespace
}  // namespace presk::profile
