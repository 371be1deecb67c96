// The parameters' cotangents streamed out of the native reverse sweep (ir/cotangent_stream.h,
// ExecuteOptions::cotangents): each handed on once as soon as it is computed, a stacked
// parameter's a layer at a time in layer order, and nothing of it returned; the values handed
// on are the collected run's bits, element for element, and `--sweep f64`'s statistics from the
// streamed sweep (binary64_sensitivity) are the collected ones' bits, on the small Llama
// (D 64, 2 layers, GQA 4/2) and the corpus GPT, on 1 and 2 threads.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ad/vjp.h"
#include "exec/native/executor.h"
#include "exec/native/realization.h"
#include "exec/reference/parameters.h"
#include "exec/reference/value.h"
#include "ir/footprint.h"
#include "lang/frontend.h"
#include "precision/native_sweep.h"

namespace presk::precision {
namespace {

namespace native = exec::native;

struct Case {
  const char* program;
  const char* entry;
};
const Case kCases[] = {{"llama.psk", "logits"}, {"gpt.psk", "loss"}};

ir::Program compile(const Case& c) {
  lang::FrontendOptions options;
  options.dims = {{"T", 6}};
  options.entry = c.entry;
  return ad::add_vjps(lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + c.program), options));
}

// Every parameter drawn at random (gpt.psk's head is zero-initialized: every other gradient
// would be zero), the same values on every run.
reference::ParameterStore parameters_of(const ir::Program& program) {
  reference::ParameterStore store;
  std::mt19937_64 draw(7);
  for (const ir::Param& param : program.params) {
    std::vector<double> values(static_cast<size_t>(param.type.element_count()));
    for (double& value : values) value = (static_cast<double>(draw() >> 11) * 0x1p-53 - 0.5) * 0.2;
    store.set(param.path, std::move(values));
  }
  return store;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<Tensor> vjp_inputs(const ir::Program& program, const ir::Function& forward) {
  std::vector<Tensor> tensors = reference::to_tensors(reference::synthesize_inputs(forward, 5, reference::default_token_range(program)));
  Tensor ones(ElementType::f64, forward.type_of(forward.results.at(0)).shape);
  for (uint64_t i = 0; i < ones.element_count(); ++i) ones.set(i, 1.0);
  tensors.push_back(std::move(ones));
  return tensors;
}

// The vjp's results, collected (no sink) or streamed (each handed-on value's elements appended
// to its path's list, the layers it came with recorded).
std::vector<native::Value> sweep(const ir::Program& program, const Case& c, const native::PreparedParameters& parameters,
                                 int threads, std::map<std::string, std::vector<double>>* streamed,
                                 std::map<std::string, std::vector<int64_t>>* layers) {
  const native::Realization realization = native::uniform_realization(native::RealType::f64);
  const std::string vjp = ad::vjp_name(c.entry);
  std::vector<native::Value> arguments;
  const std::vector<Tensor> inputs = vjp_inputs(program, *program.find_function(c.entry));
  for (size_t i = 0; i < inputs.size(); ++i) arguments.push_back(native::argument_value(program, vjp, i, inputs[i], realization));
  const native::CotangentSink sink = [&](const std::string& path, const std::vector<int64_t>& at, const native::Value& value) {
    const native::Buffer<double> elements = native::load_f64(value);
    (*streamed)[path].insert((*streamed)[path].end(), elements.begin(), elements.end());
    (*layers)[path].insert((*layers)[path].end(), at.begin(), at.end());
  };
  native::ExecuteOptions options(threads, false);
  if (streamed) options.cotangents = &sink;
  return native::execute_values(program, vjp, realization, std::move(arguments), parameters, options);
}

TEST(CotangentStream, EachParametersCotangentIsHandedOnOnceInTheOrderOfItsStackedValue) {
  for (const Case& c : kCases) {
    const ir::Program program = compile(c);
    const reference::ParameterStore store = parameters_of(program);
    const native::PreparedParameters parameters = binary64_parameters(program, store);
    const ir::Function& vjp = *program.find_function(ad::vjp_name(c.entry));
    for (int threads : {1, 2}) {
      const std::vector<native::Value> collected = sweep(program, c, parameters, threads, nullptr, nullptr);
      std::map<std::string, std::vector<double>> streamed;
      std::map<std::string, std::vector<int64_t>> layers;
      const std::vector<native::Value> left = sweep(program, c, parameters, threads, &streamed, &layers);
      ASSERT_EQ(left.size(), collected.size());
      size_t handed = 0;
      for (size_t r = 0; r < vjp.results.size(); ++r) {
        const std::string& name = vjp.result_names[r];
        const ir::Param* param = program.find_param(name);
        if (param == nullptr) continue;  // an argument's cotangent: returned as before
        SCOPED_TRACE(std::string(c.program) + " " + name + " threads " + std::to_string(threads));
        const native::Buffer<double> whole = native::load_f64(collected[r]);
        if (!streamed.contains(name)) {  // read by more than a return (gpt's `pos`: the fold's x̄): returned
          ASSERT_NE(left[r].storage, nullptr);
          const native::Buffer<double> returned = native::load_f64(left[r]);
          for (size_t i = 0; i < whole.size(); ++i) ASSERT_TRUE(same_bits(returned[i], whole[i])) << i;
          continue;
        }
        EXPECT_EQ(left[r].storage, nullptr);  // nothing of it returned
        ASSERT_EQ(streamed[name].size(), whole.size());
        for (size_t i = 0; i < whole.size(); ++i) ASSERT_TRUE(same_bits(streamed[name][i], whole[i])) << i;
        std::vector<int64_t> order;  // layer l of each stack axis, row-major: 0, 1, … L − 1
        const int64_t stacked = param->stack_depth > 0 ? param->type.shape.at(0) : 0;
        for (int64_t l = 0; l < stacked; ++l) order.push_back(l);
        if (param->stack_depth <= 1) {
          EXPECT_EQ(layers[name], order);
        }
        ++handed;
      }
      EXPECT_EQ(handed, streamed.size());
      EXPECT_GT(handed, 10U);
    }
  }
}

TEST(CotangentStream, TheSweepsStatisticsAreTheCollectedOnesBits) {
  for (const Case& c : kCases) {
    const ir::Program program = compile(c);
    const reference::ParameterStore store = parameters_of(program);
    const native::PreparedParameters parameters = binary64_parameters(program, store);
    const auto inputs = reference::synthesize_inputs(*program.find_function(c.entry), 5, reference::default_token_range(program));
    const reference::Sensitivity reference_run = binary64_sensitivity(program, c.entry, parameters, inputs, 1, false);
    for (int threads : {1, 2}) {
      for (bool stream : {false, true}) {
        SCOPED_TRACE(std::string(c.program) + " threads " + std::to_string(threads) + (stream ? " streamed" : " collected"));
        const reference::Sensitivity run = binary64_sensitivity(program, c.entry, parameters, inputs, threads, stream);
        ASSERT_EQ(run.parameters.size(), reference_run.parameters.size());
        int positive = 0;
        for (const auto& [path, norm] : reference_run.parameters) {
          EXPECT_TRUE(same_bits(run.parameters.at(path), norm)) << path << ": " << run.parameters.at(path) << " against " << norm;
          positive += norm > 0;
        }
        EXPECT_GT(positive, 3);
        ASSERT_EQ(run.sites.size(), reference_run.sites.size());
        for (const auto& [site, norm] : reference_run.sites) {
          const std::optional<double>& other = run.sites.at(site);
          ASSERT_EQ(other.has_value(), norm.has_value()) << site;
          if (norm) {
            EXPECT_TRUE(same_bits(*other, *norm)) << site;
          }
        }
      }
    }
  }
}

// The estimate knows it (ir::footprint's streams_cotangents): collected, the sweep's peak holds
// every parameter's cotangent at its end (at least all the parameters' elements); streamed, less
// than that, and never less than the largest cotangent handed on (a stacked parameter's a layer
// at a time) being made and observed.
TEST(CotangentStream, TheFootprintHoldsNoLongerEveryCotangent) {
  for (const Case& c : kCases) {
    const ir::Program program = compile(c);
    const ir::Function* vjp = program.find_function(ad::vjp_name(c.entry));
    const ir::Footprint collected = ir::footprint(program, vjp, true), streamed = ir::footprint(program, vjp, true, false, true);
    uint64_t largest = 0;
    for (const ir::Param& param : program.params) {  // a stacked one's cotangent is made a layer at a time
      int64_t layer = param.type.element_count();
      for (int d = 0; d < param.stack_depth; ++d) layer /= param.type.shape.at(static_cast<size_t>(d));
      largest = std::max<uint64_t>(largest, static_cast<uint64_t>(layer));
    }
    SCOPED_TRACE(c.program);
    EXPECT_GE(collected.peak_let_elements, collected.param_elements);
    EXPECT_LT(streamed.peak_let_elements, streamed.param_elements);
    EXPECT_GE(streamed.peak_let_elements, 2 * largest);
  }
}

}  // namespace
}  // namespace presk::precision
