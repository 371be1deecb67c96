// The phases' memory estimates (phase_memory.h).
#include "cli/phase_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "ad/vjp.h"
#include "ir/footprint.h"
#include "support/memory.h"

namespace presk::cli {
namespace {

int64_t resolved(int threads) {
  return threads > 0 ? threads : static_cast<int64_t>(std::max(1U, std::thread::hardware_concurrency()));
}

// The largest parameter's elements: what a copy of one parameter's values at a time holds.
uint64_t largest_param(const ir::Program& program) {
  uint64_t largest = 0;
  for (const ir::Param& param : program.params) largest = std::max(largest, static_cast<uint64_t>(std::max<int64_t>(param.type.element_count(), 0)));
  return largest;
}

std::string samples_text(int64_t count) { return fmt::format("{} sample{}", count, count == 1 ? "" : "s"); }

// The native samples of calibrate --sweep f64: one at a time, the lets held at once in binary64,
// the parameters at rest in their stored types.
PhaseEstimate native_samples_phase(const PreparedRun& prepared) {
  const ir::Footprint size = ir::footprint(prepared.program, prepared.entry, true);
  return {"the native binary64 runs of `" + prepared.entry->name + "`, one sample at a time",
          saturating_sum(saturating_product(size.peak_let_elements, kNativeBytesPerElement), parameter_bytes_as_read(prepared))};
}

}  // namespace

PhaseEstimate sweep_phase(const PreparedRun& prepared, precision::Sweep sweep, long bits, bool streams) {
  const ir::Program differentiated = ad::add_vjps(prepared.program);
  const ir::Function* vjp = differentiated.find_function(ad::vjp_name(prepared.entry->name));
  if (vjp == nullptr) return {"no reverse sweep (nothing to differentiate)", 0};
  const bool exact = sweep == precision::Sweep::exact;
  streams = streams && !exact;
  const ir::Footprint size = ir::footprint(differentiated, vjp, !exact, false, streams);
  const uint64_t per_element = exact ? reference_bytes_per_element(bits, false) : kNativeBytesPerElement;
  // The lets the vjp and its callees hold at once (the parameters' cotangents it returns among
  // them, all of them at its end, and one parameter's cotangent copied as its 1-norm is taken;
  // streamed, each only while it is made, its 1-norm taken in place), and natively the
  // parameters prepared for binary64 (in their stored types).
  uint64_t bytes = saturating_product(size.peak_let_elements, per_element);
  if (!streams) bytes = saturating_sum(bytes, saturating_product(largest_param(differentiated), kNativeBytesPerElement));
  if (!exact) bytes = saturating_sum(bytes, parameter_bytes_as_read(prepared));
  return {fmt::format("the reverse sweep of `{}` {} (at most {} elements held at once)", prepared.entry->name,
                      exact ? fmt::format("on the reference at {} bits", bits) : std::string("natively in binary64"),
                      size.peak_let_elements),
          bytes};
}

PhaseEstimate exact_outputs_phase(const PreparedRun& prepared, int64_t count, int64_t at_once, long bits,
                                  bool observed) {
  const ir::Footprint size = ir::footprint(prepared.program, prepared.entry, false, !observed);
  const uint64_t per_element = reference_bytes_per_element(bits, false);
  at_once = std::clamp<int64_t>(at_once, 1, std::max<int64_t>(count, 1));
  uint64_t bytes = saturating_product(saturating_product(size.peak_let_elements, per_element), static_cast<uint64_t>(at_once));
  const uint64_t kept = saturating_product(saturating_product(size.result_elements, per_element), static_cast<uint64_t>(count));
  bytes = saturating_sum(bytes, kept);
  return {fmt::format("the exact outputs of {} on the reference at {} bits ({} at once)", samples_text(count), bits, at_once),
          bytes};
}

std::vector<PhaseEstimate> calibrate_phases(const PreparedRun& prepared, precision::Sweep sweep, long bits, int threads) {
  const int64_t at_once = std::min(resolved(threads), prepared.count);
  if (sweep == precision::Sweep::f64) {
    return {sweep_phase(prepared, sweep, bits), native_samples_phase(prepared),
            exact_outputs_phase(prepared, prepared.count, at_once, bits, false)};
  }
  PhaseEstimate samples = exact_outputs_phase(prepared, prepared.count, at_once, bits, true);
  const PhaseEstimate reverse = sweep_phase(prepared, sweep, bits, false);
  return {{samples.what + " observed, beside " + reverse.what, saturating_sum(samples.bytes, reverse.bytes)}};
}

std::vector<PhaseEstimate> solve_phases(const PreparedRun& prepared, int64_t held_out, bool quant,
                                        precision::Sweep sweep, long bits, int threads) {
  const int64_t count = prepared.count + std::max<int64_t>(held_out, 0);
  // Unobserved: the solve's exact runs read the parameters in place (ir::read_in_place).
  std::vector<PhaseEstimate> phases{exact_outputs_phase(prepared, count, std::min(resolved(threads), count), bits, false)};
  if (quant) {
    PhaseEstimate pass = sweep_phase(prepared, sweep, bits, false);
    const ir::Footprint size = ir::footprint(prepared.program, prepared.entry);
    // One sample's cotangents at a time in binary64 and one matrix's quantized values
    // (solve_setup.cpp's quantize_pass).
    pass.what = "--quant's first-order pass: " + pass.what + ", one sample's cotangents at a time";
    pass.bytes = saturating_sum(pass.bytes, saturating_product(saturating_sum(size.param_elements, largest_param(prepared.program)), 8));
    phases.push_back(std::move(pass));
  }
  return phases;
}

}  // namespace presk::cli
