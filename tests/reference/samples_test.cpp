// Multi-sample runs: samples in parallel (or elements in parallel) give the same bits for any
// thread count and equal single runs of each sample; --data files hold samples on a leading
// axis; --out files round-trip (F64 values, exact decimals in the metadata).
#include <filesystem>
#include <nlohmann/json.hpp>

#include "exec/reference/output_file.h"
#include "exec/reference/weights.h"
#include "lang/frontend.h"
#include "reference/support.h"
#include "support/diagnostics.h"
#include "support/safetensors.h"

namespace presk::testing {
namespace {

using reference::MpfrArith;
using Samples = std::vector<std::vector<MpfrValue>>;

ir::Program compile_mlp(int64_t batch) {
  lang::FrontendOptions options;
  options.dims = {{"B", batch}};
  options.entry = "loss";
  return lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/mlp.psk"), options);
}

Samples run_mlp_samples(const ir::Program& program, const reference::ParameterStore& params,
                        int64_t count, int threads) {
  const ir::Function& entry = reference::find_entry(program, "loss");
  reference::RunOptions options;
  options.bits = 160;
  options.threads = threads;
  reference::SampleArguments<MpfrArith> arguments_of = [&](const MpfrArith& a, int64_t k) {
    std::vector<MpfrValue> arguments;
    for (const auto& host : reference::synthesize_inputs(entry, 9, 10, 5 + k)) {
      arguments.push_back(reference::to_value(a, host));
    }
    return arguments;
  };
  return reference::run_samples<MpfrArith>(program, entry, params, count, arguments_of, options);
}

TEST(ReferenceSamples, BitIdenticalForAnyThreadCountAndEqualToSingleRuns) {
  ir::Program program = compile_mlp(3);
  auto params = reference::synthesize_parameters(program, 4, 2);
  Samples one = run_mlp_samples(program, params, 5, 1);
  for (int threads : {2, 3, 8}) {  // 5 ≥ threads: parallel over samples; 8: over elements
    Samples many = run_mlp_samples(program, params, 5, threads);
    for (size_t k = 0; k < one.size(); ++k) {
      EXPECT_TRUE(mpfr_equal_p(one[k][0].real(0), many[k][0].real(0))) << threads << " threads, sample " << k;
    }
  }
  const ir::Function& entry = reference::find_entry(program, "loss");
  reference::RunOptions options;
  options.bits = 160;
  for (int64_t k = 0; k < 5; ++k) {
    auto single = run<MpfrArith>(program, reference::synthesize_inputs(entry, 9, 10, 5 + k), options, params, "loss");
    EXPECT_TRUE(mpfr_equal_p(single[0].real(0), one[k][0].real(0))) << k;
  }
  EXPECT_FALSE(mpfr_equal_p(one[0][0].real(0), one[1][0].real(0)));  // samples differ
}

std::string temporary(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("presk_samples_" + name)).string();
}

TEST(ReferenceSamples, DataFileReadsSamplesOfALeadingAxis) {
  ir::Program program = compile_mlp(2);
  const ir::Function& entry = reference::find_entry(program, "loss");
  Tensor x(ElementType::f32, {4, 2, 16}), labels(ElementType::i32, {4, 2});
  for (uint64_t i = 0; i < x.element_count(); ++i) x.set(i, 0.25 * static_cast<double>(i));
  for (uint64_t i = 0; i < labels.element_count(); ++i) labels.set_integer(i, static_cast<int64_t>(i % 10));
  std::string path = temporary("data.safetensors");
  write_safetensors(path, {{"x", x}, {"labels", labels}});
  reference::DataFile data(entry, path);
  EXPECT_EQ(data.samples(), 4);
  data.require(1, 3);
  std::vector<reference::HostTensor> third = data.sample(2);
  EXPECT_EQ(third[0].reals[0], 0.25 * 64);
  EXPECT_EQ(third[1].integers[1], 5);
  EXPECT_EQ(error_code([&] { data.require(2, 3); }), "E0515");
  EXPECT_EQ(error_code([&] { reference::load_inputs(entry, path, 4); }), "E0515");
}

TEST(ReferenceSamples, OutFileRoundTrips) {
  ir::Program program = compile_mlp(3);
  auto params = reference::synthesize_parameters(program, 4, 1);
  Samples samples = run_mlp_samples(program, params, 3, 2);
  MpfrArith arith(160);
  reference::RunRecord record{"mlp.psk", "loss", "mpfr", 160, 9, 5, true, "", ""};
  std::string path = temporary("out.safetensors");
  reference::write_outputs(path, arith, reference::find_entry(program, "loss"), samples, record);
  SafetensorsFile file = SafetensorsFile::open(path);
  const SafetensorsEntry& loss = file.entry("loss");
  EXPECT_EQ(loss.file_dtype, "F64");
  EXPECT_EQ(loss.shape, std::vector<int64_t>{3});
  auto exact = nlohmann::json::parse(file.metadata().at("presk:exact:loss"));
  ASSERT_EQ(exact.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    const __mpfr_struct* value = samples[k][0].real(0);
    EXPECT_EQ(file.value(loss, k), mpfr_get_d(value, MPFR_RNDN));
    Exact back(160);
    mpfr_set_str(back, exact[k].get<std::string>().c_str(), 10, MPFR_RNDN);
    EXPECT_TRUE(mpfr_equal_p(back, value)) << k;  // the decimal identifies the 160-bit number
  }
  auto run = nlohmann::json::parse(file.metadata().at("presk:run"));
  EXPECT_EQ(run["offset"], 5);
  EXPECT_EQ(run["samples"], 3);
}

}  // namespace
}  // namespace presk::testing
