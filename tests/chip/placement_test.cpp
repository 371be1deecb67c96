// Quantize insertion's placement rules on small programs (docs/chip.md, "Placement"), and the
// contract checks that need the program (E1710–E1714).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "common/error_code.h"
#include "lang/frontend.h"
#include "numerics/bind.h"
#include "numerics/quantize.h"

namespace presk::numerics {
namespace {

using presk::testing::error_code;

ir::Program compile(const std::string& body, const std::string& consts = "") {
  const std::string text = "const D = 8\nconst T = 4\n" + consts + "module M {\n  param w1 : R[D, D] = normal(0.1)\n"
                           "  param w2 : R[D, D] = normal(0.1)\n" + body;
  return lang::compile(std::make_shared<SourceFile>(SourceFile{"test.psk", text}), {});
}

Contract contract_with(std::vector<std::string> fused = {}) {
  Contract c;
  c.chip = "test";
  c.activation = Scheme{Block::of_row(), {Scale::Kind::absmax, 0}, Words::one};
  c.fused = std::move(fused);
  return c;
}

std::vector<QuantizeSite> placed(const ir::Program& program, const Contract& contract) {
  return quantize(program, contract, bind_contract(contract, program, nullptr));
}

const QuantizeSite& site_of(const std::vector<QuantizeSite>& sites, const std::string& prefix) {
  auto it = std::find_if(sites.begin(), sites.end(), [&](const QuantizeSite& s) { return s.name.rfind(prefix, 0) == 0; });
  EXPECT_NE(it, sites.end()) << prefix;
  return *it;
}

const char* kTwoLayers =
    "  fn apply(x : R[T, D]) -> R[T, D] {\n    let h = tanh(x @ w1)\n    h @ w2\n  }\n}\n"
    "entry f(p : M, x : R[T, D]) -> R[T, D] = p.apply(x)\n";

TEST(Placement, EpilogueWhereTheChipFusesTheProducer) {
  const ir::Program program = compile(kTwoLayers);
  const std::vector<QuantizeSite> fused = placed(program, contract_with({"tanh_quant"}));
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_EQ(site_of(fused, "M.apply/$0").where, Placement::after_producer);  // an argument: on entry
  const QuantizeSite& h = site_of(fused, "M.apply/%2");
  EXPECT_EQ(h.where, Placement::epilogue);
  EXPECT_EQ(h.readers, std::vector<std::string>{"M.apply/%4"});
  EXPECT_EQ(h.block, 8);
  // Without the fused class: a quantize of its own right after the producer.
  EXPECT_EQ(site_of(placed(program, contract_with()), "M.apply/%2").where, Placement::after_producer);
  // A fused class of another op changes nothing.
  EXPECT_EQ(site_of(placed(program, contract_with({"gelu_tanh_quant"})), "M.apply/%2").where, Placement::after_producer);
}

TEST(Placement, NoEpilogueWhenTheProducersValuesAreReadToo) {
  const ir::Program program = compile(
      "  fn apply(x : R[T, D]) -> R[T, D] {\n    let h = tanh(x @ w1)\n    h @ w2 + h\n  }\n}\n"
      "entry f(p : M, x : R[T, D]) -> R[T, D] = p.apply(x)\n");
  EXPECT_EQ(site_of(placed(program, contract_with({"tanh_quant"})), "M.apply/%2").where, Placement::after_producer);
}

TEST(Placement, QuantizedOnceAtTheRootOfItsViews) {
  // Both products read h: one through a slice of rows and a reshape that keep each row whole.
  const ir::Program program = compile(
      "  fn apply(x : R[T, D]) -> R[2, D] {\n    let h = tanh(x @ w1)\n    let v = reshape(h[0 : 2], [2, D])\n"
      "    v @ w2 + h[2 : 4] @ w1\n  }\n}\nentry f(p : M, x : R[T, D]) -> R[2, D] = p.apply(x)\n");
  const std::vector<QuantizeSite> sites = placed(program, contract_with({"tanh_quant"}));
  ASSERT_EQ(sites.size(), 2u) << quantize_text(program, sites);
  const QuantizeSite& h = site_of(sites, "M.apply/%2");
  EXPECT_EQ(h.readers.size(), 2u) << quantize_text(program, sites);
  EXPECT_EQ(h.where, Placement::epilogue);  // read only by the two products, through views
}

TEST(Placement, TableAssembledRowsQuantizedBeforeTheFirstReader) {
  const ir::Program program = compile(
      "  fn apply(a : R[2, D], b : R[2, D]) -> R[T, D] {\n    let t = concat(a, b, axis: 0)\n    tanh(t) @ w2 + t @ w1\n  }\n}\n"
      "entry f(p : M, a : R[2, D], b : R[2, D]) -> R[T, D] = p.apply(a, b)\n");
  const std::vector<QuantizeSite> sites = placed(program, contract_with({"tanh_quant"}));
  const QuantizeSite& t = site_of(sites, "M.apply/%0");
  EXPECT_EQ(t.where, Placement::before_first_reader) << quantize_text(program, sites);
  EXPECT_TRUE(t.row_producers.empty());
  EXPECT_EQ(t.readers.size(), 1u);
}

TEST(Placement, BatchRowsQuantizedByTheirProducers) {
  // PARITY-BATCH-ROW-QUANT: every row of the table is set from a tanh the chip quantizes in its epilogue.
  const ir::Program program = compile(
      "  fn apply(a : R[2, D], b : R[2, D]) -> R[T, D] {\n    let t = concat(tanh(a), tanh(b), axis: 0)\n    t @ w1\n  }\n}\n"
      "entry f(p : M, a : R[2, D], b : R[2, D]) -> R[T, D] = p.apply(a, b)\n");
  std::vector<QuantizeSite> sites = placed(program, contract_with({"tanh_quant"}));
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].where, Placement::per_row_by_producers) << quantize_text(program, sites);
  EXPECT_EQ(sites[0].row_producers, (std::vector<std::string>{"M.apply/%0", "M.apply/%1"}));
  sites = placed(program, contract_with());
  EXPECT_EQ(sites[0].where, Placement::before_first_reader);
}

TEST(Bind, ContractChecksThatNeedTheProgram) {
  const ir::Program program = compile(kTwoLayers);
  Contract c = contract_with();
  c.products["M.apply/%2"] = std::nullopt;  // a tanh, no product
  EXPECT_EQ(error_code([&] { bind_contract(c, program, nullptr); }), "E1710");
  c = contract_with();
  c.products["M.apply/%4"] = std::nullopt;  // this product reads its values
  EXPECT_EQ(bind_contract(c, program, nullptr).size(), 1u);
  c.activation->block = Block::fixed_count(3);  // rows of 8
  EXPECT_EQ(error_code([&] { bind_contract(c, program, nullptr); }), "E1711");
  c.activation->block = Block::fixed_count(4);
  EXPECT_EQ(bind_contract(c, program, nullptr).front().block, 4);
  c = contract_with();
  c.caches["M.apply/%1"] = Keep{Keep::Kind::int8_rows, FloatFormat::f32};  // a product, no cache
  EXPECT_EQ(error_code([&] { bind_contract(c, program, nullptr); }), "E1712");
  c = contract_with();
  c.activation->scale.kind = Scale::Kind::unsigned_pow2;  // x may be negative
  EXPECT_EQ(error_code([&] { bind_contract(c, program, nullptr); }), "E1714");
}

TEST(Bind, RotatedCachesNeedPowerOfTwoRows) {
  const std::string cache = "  fn step(c : R[T, W], r : R[1, W], at : Z) -> R[T, W] = cache_write(c, r, at)\n}\n"
                            "entry f(p : M, c : R[T, W], r : R[1, W], at : Z) -> R[T, W] = p.step(c, r, at)\n";
  Contract c = contract_with();
  c.cache = Keep{Keep::Kind::int8_rows_rotated, FloatFormat::f32};
  EXPECT_EQ(error_code([&] { bind_contract(c, compile(cache, "const W = 6\n"), nullptr); }), "E1713");
  c.caches["M.step/%0"] = Keep{Keep::Kind::int8_rows, FloatFormat::f32};
  EXPECT_EQ(error_code([&] { bind_contract(c, compile(cache, "const W = 6\n"), nullptr); }), "none");
}

}  // namespace
}  // namespace presk::numerics
