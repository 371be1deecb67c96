// `presk export c` end to end: the generated C, compiled with the system's `cc` (at -O2 and
// -O0, -ffp-contract=off), run on the same weights and inputs as `presk run --realize R`, writes
// the same bytes, for the examples' entries under f64, f32, bf16, an interleaved order, a mixed
// realization, int8 and int4 weights, and one `presk solve` wrote; and what it does not cover is a
// coded error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "common/error_code.h"
#include "common/realizations.h"
#include "common/run_command.h"
#include "exec/native/realization.h"
#include "exec/reference/parameters.h"
#include "export/c_export.h"
#include "lang/frontend.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"

namespace presk {
namespace {

using testing::presk;
using testing::run_command;

std::string example(const std::string& name) {
  return std::string(PRESK_SOURCE_DIR) + "/examples/" + name;
}

struct Case {
  std::string program, entry, dims;  // dims: "--dim T=4 …"
};

ir::Program compile(const Case& c) {
  lang::FrontendOptions options;
  options.entry = c.entry;
  std::istringstream words(c.dims);
  for (std::string flag, binding; words >> flag >> binding;) {
    const size_t eq = binding.find('=');
    (flag == "--dim" ? options.dims : options.consts)
        .push_back({binding.substr(0, eq), std::stoll(binding.substr(eq + 1))});
  }
  return lang::compile(lang::read_source(c.program), options);
}

// Every parameter uniform in [−0.6, 0.6) from a fixed generator (no zero heads: the logits
// would all be +0), as binary64; the entry's inputs as `presk run` synthesizes them.
void write_inputs(const ir::Program& program, const std::string& entry, const std::string& weights,
                  const std::string& data) {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) * 0x1p-53;
  };
  std::vector<Tensor> values;  // (NamedTensor holds a reference)
  for (const ir::Param& param : program.params) {
    values.emplace_back(ElementType::f64, param.type.shape);
    for (int64_t i = 0; i < param.type.element_count(); ++i)
      values.back().set(static_cast<uint64_t>(i), 1.2 * next() - 0.6);
  }
  std::vector<NamedTensor> params;
  for (size_t k = 0; k < values.size(); ++k) params.push_back({program.params[k].path, values[k]});
  write_safetensors(weights, params);
  const ir::Function& function = *program.find_function(entry);
  bool integers = false;
  for (const ir::Type& type : function.argument_types) integers |= type.kind == ir::ElemKind::Int;
  const int64_t range = integers ? reference::default_token_range(program) : 2;
  const std::vector<Tensor> inputs =
      reference::to_tensors(reference::synthesize_inputs(function, 7, range));
  std::vector<NamedTensor> named;
  for (size_t k = 0; k < inputs.size(); ++k)
    named.push_back({function.argument_names[k], inputs[k]});
  write_safetensors(data, named);
}

std::vector<std::byte> tensor_bytes(const std::string& path, const std::string& name,
                                    std::string* dtype) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  const SafetensorsEntry& entry = file.entry(name);
  *dtype = entry.file_dtype;
  const std::span<const std::byte> bytes = file.raw_bytes(entry);
  return std::vector<std::byte>(bytes.begin(), bytes.end());
}

// The realizations compared: uniform f64/f32/bf16, interleaved-8, the mixed one of tests/common
// (sites and parameters in f64, f32 and bf16), and int8 absmax / int4 pow2 weights, as files.
std::vector<std::pair<std::string, std::string>> realizations(
    const ir::Program& program, const testing_support::TempFolder& folder) {
  std::vector<std::pair<std::string, std::string>> out = {
      {"f64", "f64"}, {"f32", "f32"}, {"bf16", "bf16"}};
  for (const exec::native::Realization& r : testing::test_realizations(program)) {
    if (r.origin != "interleaved-8" && r.origin != "mixed" && r.origin != "int8" &&
        r.origin != "int4")
      continue;
    if (r.origin.starts_with("int") && r.quant.empty()) continue;  // no parameter of rank 2
    const std::string path = folder.file(r.origin + ".json");
    std::ofstream(path) << exec::native::realization_to_json(r).dump(2);
    out.push_back({r.origin, "@" + path});
  }
  return out;
}

// The compilers: `cc` at -O2, and at -O0; clang at -O2 for the host's FMA unit with its own
// default contraction (on): the file's pragma must keep every a·b + c unfused.
const std::string kO2 = "cc -std=c99 -O2 -ffp-contract=off";
const std::string kO0 = "cc -std=c99 -O0 -ffp-contract=off";
const std::string kClangNative = "clang -std=c99 -O2 -march=native";

// Exports `c` under `realize`, compiles it with each of `compilers`, runs it, and compares its
// result's dtype and bytes with `presk run --realize`'s.
void expect_same_bytes(const Case& c, const std::string& label, const std::string& realize,
                       const testing_support::TempFolder& folder,
                       const std::vector<std::string>& compilers) {
  const std::string weights = folder.file("weights.safetensors"),
                    data = folder.file("data.safetensors");
  const std::string expected = folder.file("native.safetensors"), source_dir = folder.file("c");
  const testing::CommandResult run =
      run_command(presk() + " run " + c.program + " --entry " + c.entry + " " + c.dims +
                  " --realize " + realize + " --weights " + weights + " --data " + data +
                  " --out " + expected + " --threads 2");
  ASSERT_EQ(run.status, 0) << run.output;
  const testing::CommandResult exported =
      run_command(presk() + " export c " + c.program + " --entry " + c.entry + " " + c.dims +
                  " --realize " + realize + " --out " + source_dir + " --name t");
  ASSERT_EQ(exported.status, 0) << exported.output;
  std::string want_dtype;
  const std::vector<std::byte> want = tensor_bytes(expected, c.entry, &want_dtype);
  for (size_t k = 0; k < compilers.size(); ++k) {
    const std::string& level = compilers[k];
    const std::string binary = folder.file("t" + std::to_string(k)),
                      got_path = folder.file("c" + std::to_string(k) + ".safetensors");
    const testing::CommandResult built =
        run_command(level + " -Wall -Wextra -DPRESK_MAIN " + source_dir + "/t.c -lm -o " + binary);
    ASSERT_EQ(built.status, 0) << built.output;
    EXPECT_EQ(built.output, "") << "warnings in the generated C (" << label << ")";
    const testing::CommandResult ran =
        run_command(binary + " " + weights + " " + data + " " + got_path);
    ASSERT_EQ(ran.status, 0) << ran.output;
    std::string got_dtype;
    const std::vector<std::byte> got = tensor_bytes(got_path, c.entry, &got_dtype);
    EXPECT_EQ(got_dtype, want_dtype) << c.program << " " << c.entry << " " << label << " " << level;
    EXPECT_TRUE(got == want) << c.program << " " << c.entry << " under " << label << " at " << level
                             << ": the exported C's bytes differ from presk run's";
  }
}

// `only`: the realizations compared (empty: all).
void check_case(const Case& c, const std::vector<std::string>& only = {}) {
  testing_support::TempFolder folder;
  const ir::Program program = compile(c);
  write_inputs(program, c.entry, folder.file("weights.safetensors"),
               folder.file("data.safetensors"));
  for (const auto& [label, realize] : realizations(program, folder)) {
    if (!only.empty() && std::find(only.begin(), only.end(), label) == only.end()) continue;
    // -O0 and clang once per entry (the mixed realization: every conversion); -O2 for each.
    expect_same_bytes(c, label, realize, folder,
                      label == "mixed" ? std::vector<std::string>{kO2, kO0, kClangNative}
                                       : std::vector<std::string>{kO2});
  }
}

TEST(ExportC, MseSameBytesAsNative) {
  check_case({example("mse.psk"), "mse", "--dim N=37"});
}
TEST(ExportC, LayerNormSameBytesAsNative) {
  check_case({example("layernorm.psk"), "normalize", "--dim T=5"});
}
TEST(ExportC, RmsNormSameBytesAsNative) {
  check_case({example("rmsnorm.psk"), "normalize", "--dim T=5"});
}
TEST(ExportC, SoftmaxSameBytesAsNative) {
  check_case({example("softmax.psk"), "probabilities", "--dim T=3"});
  check_case({example("softmax.psk"), "log_probabilities", "--dim T=3"});
}
TEST(ExportC, MlpSameBytesAsNative) {
  check_case({example("mlp.psk"), "logits", "--dim B=3"});
  check_case({example("mlp.psk"), "loss", "--dim B=3"});
}
TEST(ExportC, TinyGptSameBytesAsNative) {
  check_case({example("gpt_tiny.psk"), "logits", "--dim T=5"});
  check_case({example("gpt_tiny.psk"), "loss", "--dim T=5"},
             {"f64", "bf16", "mixed"});  // the logits' code, and the loss
}

// Integer weights are held as their codes and scales: the loader quantizes each (pk_quantize, one
// allocation of bytes and f32 scales) and keeps no f32 copy of it, every read is a pk_qat (its
// meaning f32(q·s)); and the bytes are presk run's under int8 over the last axis with f64 sites,
// and grouped int4 and int8 scales (8 rows share a scale).
TEST(ExportC, IntegerWeightsAreHeldAsCodesAndScales) {
  const Case c{example("mlp.psk"), "logits", "--dim B=3"};
  const ir::Program program = compile(c);
  testing_support::TempFolder folder;
  write_inputs(program, c.entry, folder.file("weights.safetensors"), folder.file("data.safetensors"));
  for (const auto& [label, bits, over, group] : {std::tuple{"int8-f64-last-axis", 8, -1, 0},
                                                 std::tuple{"int4-grouped", 4, -2, 8},
                                                 std::tuple{"int8-grouped", 8, -2, 8}}) {
    exec::native::Realization r = exec::native::uniform_realization(
        bits == 8 && over == -1 ? exec::native::RealType::f64 : exec::native::RealType::f32);
    r.origin = label;
    size_t quantized = 0;
    for (const ir::Param& param : program.params) {
      if (param.type.rank() < 2) continue;
      r.quant[param.path] = {bits, over, exec::native::QuantScheme::absmax, group};
      ++quantized;
    }
    ASSERT_GT(quantized, 0u);
    exec::native::validate_realization(r, program);
    const export_c::CExport files = export_c::export_c(program, c.entry, r, "t", "test");
    size_t calls = 0;
    for (size_t at = files.source.find("= pk_quantize(values"); at != std::string::npos;
         at = files.source.find("= pk_quantize(values", at + 1)) {
      ++calls;
    }
    EXPECT_EQ(calls, quantized) << label;
    size_t copies = 0;  // the other parameters' (the biases') buffers in their realized types
    for (size_t at = files.source.find("; ++i) into[i] = "); at != std::string::npos;
         at = files.source.find("; ++i) into[i] = ", at + 1)) {
      ++copies;
    }
    EXPECT_EQ(copies, program.params.size() - quantized) << label << ": a copy of the integer weights";
    EXPECT_NE(files.source.find("pk_qat(v"), std::string::npos) << label;
    const std::string path = folder.file(std::string(label) + ".json");
    std::ofstream(path) << exec::native::realization_to_json(r).dump(2);
    expect_same_bytes(c, label, "@" + path, folder, {kO2});
  }
}

// Llama's grouped-query attention, rotary embedding (slice, concat), SiLU and RMS norms.
TEST(ExportC, LlamaSameBytesAsNative) {
  check_case({example("llama.psk"), "logits", "--dim T=4 --const V=32 --const F=24"},
             {"bf16", "mixed", "int4"});
}

// Every elementwise function on edge values (±0, ±∞, NaN, subnormals, each function's thresholds
// and clamps), each rounded into the site's type first: the transcendentals are presk's own
// algorithms, written once more in C, and must agree on every bit, NaN payloads included.
TEST(ExportC, EdgeValuesSameBytesAsNative) {
  std::vector<double> x = {
      0.0,    -0.0,   INFINITY, -INFINITY, NAN,    1e-310, -1e-310, 1e-45,  0x1p-126, 700.0,
      709.9,  710.5,  720.0,    -745.0,    -746.5, -800.0, 88.5,    89.5,   90.0,     -103.9,
      -104.5, -110.0, 1.25,     -1.25,     1.2499, 27.0,   28.5,    30.0,   56.5,     60.0,
      0.5,    -0.5,   3.0,      -3.0,      1e10,   -1e10,  1e300,   -1e300, 3.4e38,   1.0,
      -1.0,   2.0,    1e-8,     -1e-8,     0.3,    -5.5,   12.25,   -17.0,  5e-324};
  // Ramps, where a fused a·b + c in log's reduction shows (clang without the file's pragma).
  for (int i = 0; i < 200; ++i) x.push_back(1.0 + i / 37.0);
  for (int i = 0; i < 100; ++i) x.push_back(0.001 * (i + 1));
  std::vector<double> y;
  for (size_t i = 0; i < x.size(); ++i)
    y.push_back(i % 7 == 0   ? 0.0
                : i % 7 == 1 ? -0.0
                : i % 7 == 2 ? NAN
                             : 0.75 - 0.5 * static_cast<double>(i % 5));
  testing_support::TempFolder folder;
  const std::string n = std::to_string(x.size());
  const Case c{std::string(PRESK_SOURCE_DIR) + "/tests/export/elementwise.psk", "functions",
               "--dim N=" + n};
  const ir::Program program = compile(c);
  write_inputs(program, c.entry, folder.file("weights.safetensors"),
               folder.file("data.safetensors"));
  Tensor xs(ElementType::f64, {static_cast<int64_t>(x.size())}), ys = xs;
  for (size_t i = 0; i < x.size(); ++i) xs.set(i, x[i]), ys.set(i, y[i]);
  write_safetensors(folder.file("data.safetensors"), {{"x", xs}, {"y", ys}});
  for (const auto& [label, realize] : realizations(program, folder)) {
    if (label != "int8" && label != "int4")
      expect_same_bytes(c, label, realize, folder, {kO2, kClangNative});
  }
}

// A realization `presk solve` wrote (calibrated and solved on the tiny MLP) exports with its bits.
TEST(ExportC, SolvedRealizationSameBytesAsNative) {
  testing_support::TempFolder folder;
  const Case c{example("mlp.psk"), "loss", "--dim B=4"};
  const std::string envelope = folder.file("envelope.json"), solved = folder.file("solved.json");
  const testing::CommandResult calibrated =
      run_command(presk() + " calibrate --precision " + c.program + " --entry loss " + c.dims +
                  " --samples 2 --bits 128 --quiet --out " + envelope);
  ASSERT_EQ(calibrated.status, 0) << calibrated.output;
  const testing::CommandResult solve =
      run_command(presk() + " solve " + c.program + " --precision " + envelope +
                  " --budget 1e-2 --quiet --out " + solved);
  ASSERT_EQ(solve.status, 0) << solve.output;
  const ir::Program program = compile(c);
  write_inputs(program, c.entry, folder.file("weights.safetensors"),
               folder.file("data.safetensors"));
  expect_same_bytes(c, "solved", "@" + solved, folder, {kO2, kClangNative});
}

TEST(ExportC, CodedErrors) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk") + " --dim B=3";
  struct Refusal {
    std::string args, code;
  };
  const std::string file = folder.file("a-file");
  std::ofstream(file) << "not a folder";
  const Refusal refusals[] = {
      {mlp + " --entry nope --realize f32 --out " + folder.file("o"),
       "E0"},  // the front end refuses the entry first
      {mlp + " --entry loss --realize f32 --out " + file, "E1544"},
      {mlp + " --entry loss --realize f32 --name 9x --out " + folder.file("o"), "E1546"},
  };
  for (const Refusal& r : refusals) {
    const testing::CommandResult result = run_command(presk() + " export c " + r.args);
    EXPECT_EQ(result.status, 1) << r.args << "\n" << result.output;
    EXPECT_NE(result.output.find("error[" + r.code), std::string::npos) << r.args << "\n"
                                                                        << result.output;
  }
}

// What the library refuses: an entry that does not exist, and an op it does not cover (a
// training compile's dropout), named with its site; and the same export twice, the same text.
TEST(ExportC, RefusesWhatItDoesNotCover) {
  lang::FrontendOptions training;
  training.dims = {{"T", 4}};
  training.training = true;
  const ir::Program program = lang::compile(lang::read_source(example("gpt_tiny.psk")), training);
  const exec::native::Realization f32 =
      exec::native::uniform_realization(exec::native::RealType::f32);
  EXPECT_EQ(testing::error_code([&] { export_c::export_c(program, "nope", f32, "t", ""); }),
            "E1540");
  try {
    export_c::export_c(program, "loss", f32, "t", "");
    ADD_FAILURE() << "a training compile's dropout was exported";
  } catch (const UserError& error) {
    EXPECT_EQ(error.code(), "E1541");
    EXPECT_NE(std::string(error.what()).find("dropout"), std::string::npos) << error.what();
  }
  lang::FrontendOptions inference;
  inference.dims = {{"T", 4}};
  const ir::Program logits = lang::compile(lang::read_source(example("gpt_tiny.psk")), inference);
  const export_c::CExport once = export_c::export_c(logits, "logits", f32, "t", "origin");
  const export_c::CExport again = export_c::export_c(logits, "logits", f32, "t", "origin");
  EXPECT_EQ(once.source, again.source);  // the same export writes the same bytes
  EXPECT_EQ(once.header, again.header);
  EXPECT_TRUE(export_c::is_c_name("logits_2"));
  EXPECT_FALSE(export_c::is_c_name("2logits"));
  EXPECT_FALSE(export_c::is_c_name("a-b"));
}

}  // namespace
}  // namespace presk
