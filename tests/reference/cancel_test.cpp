// Cancellation (support/cancel.h): once requested, the exact interpreter stops at its next let
// with Cancelled, on one thread and with samples in parallel; cleared, it runs again.
#include "exec/reference/weights.h"
#include "lang/frontend.h"
#include "reference/support.h"
#include "support/cancel.h"

namespace presk::testing {
namespace {

using reference::MpfrArith;

TEST(ReferenceCancel, StopsRunsAndSamplesUntilCleared) {
  lang::FrontendOptions options;
  options.dims = {{"B", 2}};
  const ir::Program program =
      lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/mlp.psk"), options);
  const ir::Function& entry = reference::find_entry(program, "logits");
  const auto params = reference::synthesize_parameters(program, 1, 1);
  const auto inputs = reference::synthesize_inputs(entry, 1, 0, 0);
  reference::RunOptions run_options;
  run_options.bits = 64;
  reference::SampleArguments<MpfrArith> arguments_of = [&](const MpfrArith& a, int64_t) {
    std::vector<MpfrValue> arguments;
    for (const auto& host : inputs) arguments.push_back(reference::to_value(a, host));
    return arguments;
  };
  request_cancel();
  EXPECT_THROW(run<MpfrArith>(program, inputs, run_options, params, "logits"), Cancelled);
  run_options.threads = 2;
  EXPECT_THROW(reference::run_samples<MpfrArith>(program, entry, params, 4, arguments_of, run_options), Cancelled);
  clear_cancel();
  EXPECT_EQ(reference::run_samples<MpfrArith>(program, entry, params, 4, arguments_of, run_options).size(), 4u);
}

}  // namespace
}  // namespace presk::testing
