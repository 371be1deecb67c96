// The first-order bound (src/precision/bound.h): sound on every example entry under every
// realization of the native bits test and every model (bound ≥ the measured gap to the exact
// reference); blocking leaves it unchanged and interleaving changes it; and on a sum of 4096
// equal f32 terms the measured gap is the hand-simulated rounding error, below the bound.
#include "precision/bound.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "exec/reference/interpreter.h"
#include "common/realizations.h"
#include "ir/sites.h"
#include "lang/frontend.h"
#include "precision/calibrate.h"
#include "precision/measure.h"
#include "support/number_format.h"
#include "support/random.h"

namespace presk::precision {
namespace {

using exec::native::OrderKind;
using exec::native::QuantScheme;
using exec::native::Realization;
using exec::native::RealType;
using exec::native::uniform_realization;

// A program, its parameters and samples, their envelope and the exact outputs.
struct Calibrated {
  ir::Program program;
  const ir::Function* entry = nullptr;
  reference::ParameterStore parameters;
  std::vector<std::vector<reference::HostTensor>> samples;
  Envelope envelope;
  ExactOutputs exact;

  SampleInputs inputs() const {
    return [this](int64_t k) { return samples.at(static_cast<size_t>(k)); };
  }
};

// The envelope (presk calibrate's measurement) and the exact outputs of every sample.
void calibrate(Calibrated& c, long bits = 256) {
  const int64_t samples = static_cast<int64_t>(c.samples.size());
  c.envelope = precision::calibrate(c.program, c.entry->name, c.parameters, samples, c.inputs(),
                                    {bits, 2, {}});
  c.exact = run_exactly(c.program, *c.entry, c.parameters, samples, c.inputs(), bits, 2);
}

// ---- The examples and the realizations.

struct Example {
  const char* file;
  const char* entry;
};

void PrintTo(const Example& example, std::ostream* out) {
  *out << example.file << ":" << example.entry;
}

const Example kExamples[] = {
    {"mse.psk", "mse"},
    {"layernorm.psk", "normalize"},
    {"rmsnorm.psk", "normalize"},
    {"softmax.psk", "probabilities"},
    {"softmax.psk", "log_probabilities"},
    {"softmax.psk", "by_hand"},
    {"mlp.psk", "loss"},
    {"mlp.psk", "logits"},
    {"gpt_tiny.psk", "loss"},
    {"gpt_tiny.psk", "logits"},
};

// Every parameter non-zero: zeros and ones initializers replaced by seeded noise (0.05·z,
// 1 + 0.1·z), so no bias or gain hides an error.
void make_parameters_non_zero(const ir::Program& program, reference::ParameterStore& store) {
  for (const ir::Param& param : program.params) {
    if (param.type.kind != ir::ElemKind::Real) continue;
    const bool zeros = param.init.kind == ir::Initializer::Kind::Zeros;
    const bool ones = param.init.kind == ir::Initializer::Kind::Ones;
    if (!zeros && !ones) continue;
    std::vector<double> values = *store.find(param.path);
    const uint64_t stream = random::stream_of("nonzero." + param.path);
    for (size_t i = 0; i < values.size(); ++i) {
      const double z = random::normal(11, stream, i, 1.0);
      values[i] = zeros ? 0.05 * z : 1 + 0.1 * z;
    }
    store.set(param.path, std::move(values));
  }
}

std::unique_ptr<Calibrated> calibrated_example(const Example& example, int64_t samples = 3) {
  auto c = std::make_unique<Calibrated>();
  lang::FrontendOptions options;
  options.entry = example.entry;
  const std::string file = example.file;
  if (file == "mse.psk")
    options.dims = {{"N", 16}};
  else if (file == "mlp.psk")
    options.dims = {{"B", 4}};
  else
    options.dims = {{"T", 4}};
  c->program = lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + file),
                             options);
  c->entry = c->program.find_function(example.entry);
  c->parameters = reference::synthesize_parameters(c->program, 3, 1);
  make_parameters_non_zero(c->program, c->parameters);
  int64_t range = 2;
  try {
    range = reference::default_token_range(c->program);
  } catch (const UserError&) {
  }
  for (int64_t k = 0; k < samples; ++k)
    c->samples.push_back(reference::synthesize_inputs(*c->entry, 7, range, k));
  calibrate(*c);
  return c;
}

// The realizations of the native bits test (tests/common/realizations.h), with their names.
std::vector<std::pair<std::string, Realization>> realizations_for(const ir::Program& program) {
  std::vector<std::pair<std::string, Realization>> all;
  for (const Realization& r : testing::test_realizations(program)) all.emplace_back(r.origin, r);
  return all;
}

BoundInputs bound_inputs(const Calibrated& c, const Realization& realization) {
  BoundInputs inputs;
  inputs.program = &c.program;
  inputs.envelope = &c.envelope;
  inputs.realization = &realization;
  inputs.arguments = argument_envelopes(*c.entry, c.envelope.samples, c.inputs());
  inputs.parameter_errors = parameter_errors(c.program, realization, c.parameters);
  return inputs;
}

// ---- Soundness: bound ≥ measured, everywhere.

struct Row {
  std::string example, realization;
  double measured = 0;
  double bounds[4] = {0, 0, 0, 0};
};

std::vector<Row>& table() {
  static std::vector<Row> rows;
  return rows;
}

std::string largest_sources(const EntryBound& bound) {
  std::ostringstream text;
  for (size_t i = 0; i < std::min<size_t>(5, bound.contributions.size()); ++i) {
    text << (i ? ", " : "") << bound.contributions[i].source << " " << bound.contributions[i].error;
  }
  return text.str();
}

class Soundness : public ::testing::TestWithParam<Example> {};

TEST_P(Soundness, BoundIsAtLeastTheMeasuredGap) {
  const Example example = GetParam();
  const std::unique_ptr<Calibrated> c = calibrated_example(example);
  for (const auto& [name, realization] : realizations_for(c->program)) {
    SCOPED_TRACE(std::string(example.file) + ":" + example.entry + " under " + name);
    const MeasuredGap gap = measure_gap(c->program, *c->entry, realization, c->parameters,
                                        c->envelope.samples, c->inputs(), c->exact, 1);
    ASSERT_TRUE(std::isfinite(gap.absolute));
    Row row{std::string(example.file) + ":" + example.entry, name, gap.absolute};
    const BoundInputs inputs = bound_inputs(*c, realization);
    for (BoundModel model : kAllBoundModels) {
      const EntryBound bound = bound_entry(inputs, model);
      row.bounds[static_cast<int>(model)] = bound.absolute;
      EXPECT_GE(bound.absolute, gap.absolute)
          << "model " << bound_model_name(model) << ", largest sources: " << largest_sources(bound);
      EXPECT_TRUE(std::isfinite(bound.absolute)) << "model " << bound_model_name(model);
      double parts = 0;
      for (const Contribution& contribution : bound.contributions) parts += contribution.error;
      EXPECT_NEAR(parts, bound.absolute, 1e-12 * bound.absolute)
          << "the contributions add up to the bound";
    }
    table().push_back(row);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, Soundness, ::testing::ValuesIn(kExamples), [](const auto& info) {
  std::string name = std::string(info.param.file) + "_" + info.param.entry;
  for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
});

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : std::sqrt(values[n / 2 - 1] * values[n / 2]);
}

// Prints, after every test has run, bound vs measured for every (example, realization) of the
// soundness tests that ran, and the median ratio per model over the rows with a non-zero gap
// (the seed's medians under its rules: k 1.8e3, normwise 53, cond 18, rss 12).
class TablePrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    if (table().empty()) return;
    std::vector<double> ratios[4];
    std::cout << std::setprecision(2) << std::scientific;
    std::cout << "| example | realization | measured | k | normwise | cond | rss "
                 "|\n|---|---|---|---|---|---|---|\n";
    for (const Row& row : table()) {
      std::cout << "| " << row.example << " | " << row.realization << " | " << row.measured;
      for (int m = 0; m < 4; ++m) {
        std::cout << " | " << row.bounds[m];
        if (row.measured > 0) ratios[m].push_back(row.bounds[m] / row.measured);
      }
      std::cout << " |\n";
    }
    for (BoundModel model : kAllBoundModels) {
      std::cout << "median bound/measured, " << bound_model_name(model) << ": "
                << median(ratios[static_cast<int>(model)]) << " over " << ratios[0].size()
                << " rows\n";
    }
  }
};
[[maybe_unused]] ::testing::Environment* const kTablePrinter =
    ::testing::AddGlobalTestEnvironment(new TablePrinter);

// ---- The order enters through c(order, k) alone.

TEST(Order, BlockingLeavesTheBoundAndInterleavingChangesIt) {
  const std::unique_ptr<Calibrated> c = calibrated_example({"layernorm.psk", "normalize"}, 2);
  Realization sequential = uniform_realization(RealType::f32), blocked = sequential,
              interleaved = sequential;
  blocked.order = {OrderKind::blocked, 64, 1};
  interleaved.order = {OrderKind::interleaved, 0, 8};
  for (BoundModel model : kAllBoundModels) {
    const double s = bound_entry(bound_inputs(*c, sequential), model).absolute;
    EXPECT_EQ(bound_entry(bound_inputs(*c, blocked), model).absolute, s) << bound_model_name(model);
    EXPECT_NE(bound_entry(bound_inputs(*c, interleaved), model).absolute, s)
        << bound_model_name(model);
  }
}

TEST(Order, RoundingDepth) {
  const exec::native::Order sequential{}, blocked{OrderKind::blocked, 64, 1};
  const exec::native::Order interleaved{OrderKind::interleaved, 0, 8};
  EXPECT_EQ(rounding_depth(sequential, 32, false), 31);
  EXPECT_EQ(rounding_depth(sequential, 32, true), 32);
  EXPECT_EQ(rounding_depth(blocked, 32, false), 31);
  // 8 partials of 4 terms (3 additions each, 4 fmas), then a tree of depth 3.
  EXPECT_EQ(rounding_depth(interleaved, 32, false), 6);
  EXPECT_EQ(rounding_depth(interleaved, 32, true), 7);
  // 33 terms: partial 0 has 5; partial 0 sits at depth 3.
  EXPECT_EQ(rounding_depth(interleaved, 33, false), 7);
  // 3 terms: 3 partials of one term; the tree adds p0 + p1, then (p0 + p1) + p2.
  EXPECT_EQ(rounding_depth(interleaved, 3, false), 2);
  EXPECT_EQ(rounding_depth(interleaved, 1, false), 0);
  // 6 partials: (01)(23)(45) → (0123)(45) → all: partials 0–3 go through 3 additions.
  EXPECT_EQ(rounding_depth({OrderKind::interleaved, 0, 6}, 6, false), 3);
  EXPECT_EQ(rounding_depth({OrderKind::interleaved, 0, 5}, 5, false),
            3);  // p4 moves up twice, then 1
}

// ---- The exactly known case: 4096 equal terms added in f32, sequentially.

TEST(KnownCase, SumOfEqualTermsInF32) {
  constexpr int64_t kTerms = 4096;
  const float term = 0.1f;  // exact in f32, so the argument's rounding is zero
  auto c = std::make_unique<Calibrated>();
  auto source = std::make_shared<SourceFile>(
      SourceFile{"inline.psk", "dim N\nentry total(x : R[N]) -> R = sum(x)\n"});
  lang::FrontendOptions options;
  options.dims = {{"N", kTerms}};
  c->program = lang::compile(source, options);
  c->entry = c->program.find_function("total");
  reference::HostTensor x;
  x.type = c->entry->argument_types[0];
  x.reals.assign(kTerms, static_cast<double>(term));
  c->samples = {{x}};
  calibrate(*c);

  float s = term;  // the f32 sequence: s₀ = t, s_k = fl(s_{k−1} + t)
  for (int64_t k = 1; k < kTerms; ++k) s = s + term;
  const double exact = static_cast<double>(term) * kTerms;  // 24 bits times 2^12: exact
  const double hand = std::fabs(static_cast<double>(s) - exact);
  ASSERT_GT(hand, 0);

  const Realization f32 = uniform_realization(RealType::f32);
  const MeasuredGap gap =
      measure_gap(c->program, *c->entry, f32, c->parameters, 1, c->inputs(), c->exact, 1);
  EXPECT_EQ(gap.absolute, hand);
  const BoundInputs inputs = bound_inputs(*c, f32);
  for (BoundModel model : kAllBoundModels) {
    const EntryBound bound = bound_entry(inputs, model);
    EXPECT_GE(bound.absolute, hand) << bound_model_name(model);
    // Nothing but the sum's own rounding: γ_4095(2⁻²⁴) · 4096·t (+ the store into f32, 0 here:
    // the exact sum is an f32 number).
    EXPECT_DOUBLE_EQ(bound.absolute, gamma(kTerms - 1, 0x1p-24) * exact) << bound_model_name(model);
  }
  std::cout << "4096 × 0.1f in f32: measured gap " << gap.absolute << ", γ_4095 bound "
            << bound_entry(inputs, BoundModel::cond).absolute << '\n';
}

}  // namespace
}  // namespace presk::precision
