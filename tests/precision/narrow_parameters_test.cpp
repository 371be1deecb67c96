// Parameters at rest in their stored type under a binary64 realization (prepare_parameters):
// a bf16 or f32 checkpoint's tensors are kept narrow, never copied whole in binary64, and
// every reader widens them exactly, so the native binary64 runs of `--sweep f64` have the bits
// of the runs on the same parameters widened to binary64 first: every value an observer sees
// (with the terms of every sum and contraction), the results unobserved, and the reverse
// sweep's statistics, on the small Llama (D 64, 2 layers, GQA 4/2), 1 and 2 threads.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ad/vjp.h"
#include "exec/native/executor.h"
#include "exec/native/realization.h"
#include "exec/reference/checkpoint.h"
#include "exec/reference/parameters.h"
#include "exec/reference/value.h"
#include "exec/reference/weights.h"
#include "lang/frontend.h"
#include "precision/native_sweep.h"
#include "support/temp_folder.h"

namespace presk::precision {
namespace {

namespace native = exec::native;

// Every value and term statistic it is handed, in order, as binary64 bit patterns.
class Recorder final : public reference::Observer {
 public:
  std::vector<uint64_t> bits;
  void on_value(const reference::SiteContext&, const reference::ValueView& value) override {
    for (int64_t i = 0; value.f64 != nullptr && i < value.count; ++i) push(value.f64[i]);
    for (int64_t i = 0; value.integers != nullptr && i < value.count; ++i) bits.push_back(static_cast<uint64_t>(value.integers[i]));
  }
  bool wants_terms() const override { return true; }
  void on_terms(const reference::SiteContext&, std::span<const reference::TermStatistics> terms) override {
    for (const reference::TermStatistics& t : terms) push(t.sum_abs_terms), push(t.root_sum_squares), push(t.operand_abs_sums[0]), push(t.operand_abs_sums[1]);
  }

 private:
  void push(double x) {
    uint64_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    bits.push_back(b);
  }
};

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(NarrowParameters, Binary64RunsOnACheckpointInItsOwnTypeHaveTheWidenedBits) {
  lang::FrontendOptions options;
  options.dims = {{"T", 6}};
  options.entry = "logits";
  const ir::Program program = ad::add_vjps(lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/llama.psk"), options));
  const auto inputs = reference::synthesize_inputs(*program.find_function("logits"), 5, reference::default_token_range(program));
  for (const ElementType dtype : {ElementType::bf16, ElementType::f32}) {
    testing_support::TempFolder folder;
    reference::SynthCheckpointOptions synth;
    synth.out = folder.file("checkpoint");
    synth.seed = 3;
    synth.dtype = dtype;
    reference::write_synthetic_checkpoint(program, synth);
    const reference::ParameterStore stored = reference::load_weights(program, synth.out);
    reference::ParameterStore widened;
    for (const ir::Param& param : program.params) widened.set(param.path, *stored.find(param.path));
    const native::PreparedParameters narrow = binary64_parameters(program, stored), wide = binary64_parameters(program, widened);
    const native::Value& head = *narrow.find("lm_head.weight");
    EXPECT_EQ(head.type, dtype == ElementType::bf16 ? native::RealType::bf16 : native::RealType::f32);
    EXPECT_EQ(wide.find("lm_head.weight")->type, native::RealType::f64);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(dtype == ElementType::bf16 ? "bf16" : "f32") + " threads " + std::to_string(threads));
      Recorder a, b;
      const std::vector<Tensor> x = observe_binary64(program, "logits", narrow, inputs, a, threads);
      const std::vector<Tensor> y = observe_binary64(program, "logits", wide, inputs, b, threads);
      EXPECT_GT(a.bits.size(), 1000U);
      EXPECT_TRUE(a.bits == b.bits);
      const native::Realization f64 = native::uniform_realization(native::RealType::f64);
      const std::vector<Tensor> u = native::execute(program, "logits", f64, reference::to_tensors(inputs), narrow, native::ExecuteOptions(threads, false));
      const std::vector<Tensor> v = native::execute(program, "logits", f64, reference::to_tensors(inputs), wide, native::ExecuteOptions(threads, false));
      ASSERT_EQ(u.at(0).element_count(), v.at(0).element_count());
      ASSERT_EQ(u[0].element_count(), x.at(0).element_count());
      for (uint64_t i = 0; i < u[0].element_count(); ++i) {
        ASSERT_TRUE(same_bits(u[0].get(i), v[0].get(i))) << i;
        ASSERT_TRUE(same_bits(x[0].get(i), y.at(0).get(i))) << i;
      }
      const reference::Sensitivity s = binary64_sensitivity(program, "logits", narrow, inputs, threads);
      const reference::Sensitivity t = binary64_sensitivity(program, "logits", wide, inputs, threads);
      for (const auto& [path, norm] : t.parameters) EXPECT_TRUE(same_bits(s.parameters.at(path), norm)) << path;
      for (const auto& [site, norm] : t.sites) {
        ASSERT_EQ(s.sites.at(site).has_value(), norm.has_value()) << site;
        if (norm) {
          EXPECT_TRUE(same_bits(*s.sites.at(site), *norm)) << site;
        }
      }
    }
  }
}

}  // namespace
}  // namespace presk::precision
