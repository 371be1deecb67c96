// Parameters read in place (ir::read_in_place, exec/reference/ops_in_place.cpp): a contraction
// reads its parameter operand a tile at a time and an embed the rows it gathers, never the whole
// tensor at --bits. The results must be the bits of the path that converts every parameter whole,
// which a run with an observer attached still takes (the interpreter hands an observer every
// value): the small Llama (D 64, 2 layers, GQA 4/2) and the corpus GPT, on parameters held as
// binary64 and on a bf16 checkpoint folder read in place, at tiles small enough that every
// contraction splits into many (partial ones included), in MPFR and in Arb balls.
#include <arb.h>

#include <algorithm>
#include <limits>

#include "exec/reference/checkpoint.h"
#include "exec/reference/exact_dot.h"
#include "exec/reference/ops.h"
#include "exec/reference/weights.h"
#include "ir/footprint.h"
#include "lang/frontend.h"
#include "reference/support.h"
#include "support/temp_folder.h"

namespace presk::testing {
namespace {

using reference::BallArith;
using reference::MpfrArith;

ir::Program compile(const std::string& name, std::vector<lang::Binding> dims, const std::string& entry,
                    std::vector<lang::Binding> consts = {}) {
  lang::FrontendOptions options;
  options.dims = std::move(dims);
  options.consts = std::move(consts);
  options.entry = entry;
  return lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + name), options);
}

// An observer that looks at nothing: attached, it makes the interpreter convert every parameter
// whole (the path before parameters were read in place).
class Blind final : public reference::Observer {
 public:
  void on_value(const reference::SiteContext&, const reference::ValueView&) override {}
};

bool same_bits(const __mpfr_struct* a, const __mpfr_struct* b) {
  if (mpfr_nan_p(a) || mpfr_nan_p(b)) return mpfr_nan_p(a) && mpfr_nan_p(b);
  return mpfr_equal_p(a, b) && mpfr_signbit(a) == mpfr_signbit(b);
}
bool same_bits(const arb_struct* a, const arb_struct* b) { return arb_equal(a, b) != 0; }

// The entry's results on synthesized inputs, parameters in place (no observer) or whole (`whole`).
template <class A>
std::vector<reference::Value<A>> results(const ir::Program& program, const std::string& entry,
                                         const reference::ParameterStore& params, bool whole, int threads) {
  Blind blind;
  reference::RunOptions options;
  options.bits = 128;
  options.threads = threads;
  options.observer = whole ? &blind : nullptr;
  const ir::Function& function = reference::find_entry(program, entry);
  const auto inputs = reference::synthesize_inputs(function, 5, reference::default_token_range(program));
  return run<A>(program, inputs, options, params, entry);
}

template <class A>
void expect_same_bits(const ir::Program& program, const std::string& entry, const reference::ParameterStore& params) {
  const auto whole = results<A>(program, entry, params, true, 2);
  for (int64_t tile : {int64_t{1} << 20, int64_t{1000}, int64_t{37}, int64_t{1}}) {
    reference::set_in_place_tile_elements(tile);
    const auto in_place = results<A>(program, entry, params, false, 2);
    ASSERT_EQ(in_place.size(), whole.size());
    for (size_t r = 0; r < whole.size(); ++r) {
      ASSERT_EQ(in_place[r].size(), whole[r].size());
      int64_t differing = 0;
      for (int64_t i = 0; i < whole[r].size(); ++i) differing += !same_bits(in_place[r].real(i), whole[r].real(i));
      EXPECT_EQ(differing, 0) << entry << " result " << r << " at tiles of " << tile;
    }
  }
  reference::set_in_place_tile_elements(ir::kInPlaceTileElements);
}

// The parameters read in place of a program: the lets of every function that read_in_place says.
int64_t lets_in_place(const ir::Program& program) {
  int64_t count = 0;
  for (const ir::Function& function : program.functions) {
    for (uint32_t j = 0; j < function.lets.size(); ++j) count += ir::read_in_place(function, j);
  }
  return count;
}

TEST(ReferenceInPlace, SmallLlamaHasTheBitsOfParametersConvertedWhole) {
  for (const char* entry : {"logits", "loss"}) {
    const ir::Program program = compile("llama.psk", {{"T", 5}}, entry);
    // The embedding, every projection and the head: 2 + 7 per layer's function (+ the head).
    EXPECT_GE(lets_in_place(program), 9) << entry;
    const reference::ParameterStore params = reference::synthesize_parameters(program, 11, 1);
    expect_same_bits<MpfrArith>(program, entry, params);
  }
}

TEST(ReferenceInPlace, Bf16CheckpointReadInPlaceHasTheSameBits) {
  const ir::Program program = compile("llama.psk", {{"T", 4}}, "logits");
  testing_support::TempFolder folder;
  reference::SynthCheckpointOptions synth;
  synth.out = folder.file("checkpoint");
  synth.seed = 3;
  synth.dtype = ElementType::bf16;
  reference::write_synthetic_checkpoint(program, synth);
  const reference::ParameterStore params = reference::load_weights(program, synth.out);
  expect_same_bits<MpfrArith>(program, "logits", params);
  expect_same_bits<BallArith>(program, "logits", params);
}

TEST(ReferenceInPlace, CorpusGptHasTheBitsOfParametersConvertedWhole) {
  // gpt.psk contracts its weights as stored [in, out] ("td,dv->tv"): tiles along a later axis.
  for (const char* entry : {"logits", "loss"}) {
    const ir::Program program = compile("gpt.psk", {{"T", 6}}, entry);
    EXPECT_GE(lets_in_place(program), 4) << entry;
    const reference::ParameterStore params = reference::synthesize_parameters(program, 7, 1);
    expect_same_bits<MpfrArith>(program, entry, params);
    expect_same_bits<BallArith>(program, entry, params);  // contract_ball_tiles: its radii too
    for (auto sums : {reference::ContractionSums::MpfrDot, reference::ContractionSums::FmaChain}) {
      reference::set_contraction_sums(sums);
      expect_same_bits<MpfrArith>(program, entry, params);
    }
    reference::set_contraction_sums(reference::ContractionSums::Exact);
  }
}

TEST(ReferenceInPlace, EntriesTheFixedRowsCannotDecideHaveTheBitsOfParametersConvertedWhole) {
  // Each matrix's tiles are packed from the stored values; an element the fixed rows cannot
  // decide is computed exactly from the tile converted. Rows that force it: a NaN, an infinity,
  // entries spread over more than 384 bits (2^-1074 beside 1), a row of zeros, and a row whose
  // terms cancel to 0 exactly.
  const ir::Program program = compile("gpt.psk", {{"T", 6}}, "logits");
  reference::ParameterStore params = reference::synthesize_parameters(program, 5, 1);
  int edited = 0;
  for (const ir::Param& param : program.params) {
    if (param.type.shape.size() < 2) continue;
    std::vector<double> values = *params.find(param.path);
    const size_t row = static_cast<size_t>(param.type.shape.back());
    switch (edited++ % 4) {
      case 0: values[row + 1] = std::numeric_limits<double>::quiet_NaN(); break;
      case 1: values[2 * row] = -std::numeric_limits<double>::infinity(); break;
      case 2: values[0] = 0x1p-1074, values[row] = 1.0, values[3] = 0x1p-600; break;
      default: std::fill(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(row), 0.0); break;
    }
    params.set(param.path, std::move(values));
  }
  EXPECT_GE(edited, 4);
  expect_same_bits<MpfrArith>(program, "logits", params);
}

TEST(ReferenceInPlace, FootprintCountsNoWholeParameterWhenReadInPlace) {
  // A head and a table of 2^23 elements each (V 131072, D 64): read in place they cost a tile
  // (2 · 2^20 elements: the tile and its packed rows) and nothing, not themselves and a copy.
  const ir::Program program = compile("llama.psk", {{"T", 4}}, "logits", {{"V", 131072}});
  const ir::Function& entry = reference::find_entry(program, "logits");
  const ir::Footprint whole = ir::footprint(program, &entry, false, false);
  const ir::Footprint in_place = ir::footprint(program, &entry, false, true);
  EXPECT_GE(whole.peak_let_elements, uint64_t{2} << 23);  // the head and its converted copy
  EXPECT_GE(in_place.peak_let_elements, uint64_t{2} << 20);  // a tile
  EXPECT_LT(in_place.peak_let_elements, uint64_t{1} << 22);
}

}  // namespace
}  // namespace presk::testing
