// Parameters at rest (issue #37): a preparation through a PreparedCache prepares again only the
// parameters whose type changed (counted), with the bits of a fresh preparation; and a weight
// stored narrower than its product's site in Hugging Face's [out, in] orientation (a bf16 weight
// read by an f64 or f32 contraction "tk,nk->tn") is read in place by the kernel, widened as the
// panel loads it, with the bits of the same weight widened beforehand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "exec/native/executor.h"
#include "exec/native/numeric.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"

namespace presk::exec::native {
namespace {

ir::Program compile_text(const std::string& text, int64_t t) {
  lang::FrontendOptions options;
  options.dims = {{"T", t}};
  return lang::compile(std::make_shared<SourceFile>(SourceFile{"prepared.psk", text}), options);
}

const char* const kProgram = R"(
const N = 37
const K = 19
dim T
module Layer {
  param weight : R[N, K] = normal(0.1)
  param bias : R[N] = zeros
}
module Model {
  param up : Layer
  param down : R[N, K] = normal(0.1)
}
entry out(p : Model, x : R[T, K]) -> R[T, N] = einsum("tk,nk->tn", x, p.up.weight) + p.up.bias + einsum("tk,nk->tn", x, p.down)
)";

std::map<std::string, std::vector<double>> values_of(const ir::Program& program, bool bf16) {
  std::map<std::string, std::vector<double>> values;
  for (const ir::Param& param : program.params) {
    std::vector<double>& v = values[param.path];
    for (int64_t i = 0; i < param.type.element_count(); ++i) {
      const double x = std::sin(0.37 * static_cast<double>(i) + static_cast<double>(param.path.size())) / 3;
      v.push_back(bf16 ? static_cast<double>(from_bf16(to_bf16(static_cast<float>(x)))) : x);
    }
  }
  return values;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.element_count() != b.element_count()) return false;
  for (uint64_t i = 0; i < a.element_count(); ++i) {
    const double x = a.get(i), y = b.get(i);
    if (std::memcmp(&x, &y, sizeof x) != 0) return false;
  }
  return true;
}

TEST(PreparedParameters, ACachePreparesOnlyTheParametersWhoseTypeChanged) {
  const ir::Program program = compile_text(kProgram, 5);
  const auto values = values_of(program, false);
  const ParameterSource source = [&](const std::string& path) {
    auto it = values.find(path);
    return it == values.end() ? ParamView{} : ParamView(&it->second);
  };
  Tensor x(ElementType::f64, {5, 19});
  for (uint64_t i = 0; i < x.element_count(); ++i) x.set(i, std::cos(0.1 * static_cast<double>(i)));
  Realization all = uniform_realization(RealType::f64);
  Realization one = all, two = all;
  one.params["down"] = RealType::bf16;
  two.params["down"] = RealType::f32;
  two.params["up.weight"] = RealType::bf16;
  PreparedCache cache;
  const uint64_t params = program.params.size();
  ASSERT_EQ(params, 3u);
  const std::vector<std::pair<const Realization*, uint64_t>> steps = {
      {&all, 3}, {&all, 3}, {&one, 4}, {&one, 4}, {&two, 6}, {&all, 8}, {&all, 8}};
  for (const auto& [realization, count] : steps) {
    const PreparedParameters cached = prepare_parameters(program, *realization, source, &cache);
    EXPECT_EQ(cache.preparations(), count);
    const PreparedParameters fresh = prepare_parameters(program, *realization, source);
    const Tensor a = execute(program, "out", *realization, {x}, cached, {1, false}).at(0);
    const Tensor b = execute(program, "out", *realization, {x}, fresh, {1, false}).at(0);
    EXPECT_TRUE(same_bits(a, b));
    for (const ir::Param& param : program.params) {
      const Value* c = cached.find(param.path);
      ASSERT_NE(c, nullptr);
      EXPECT_EQ(c->type, fresh.find(param.path)->type) << param.path;
    }
  }
}

TEST(PreparedParameters, ANarrowerWeightInOutInOrderIsReadInPlaceWithTheWidenedBits) {
  const ir::Program program = compile_text(kProgram, 70);
  const auto rounded = values_of(program, true);  // every value exact in bf16
  const ParameterSource source = [&](const std::string& path) {
    auto it = rounded.find(path);
    return it == rounded.end() ? ParamView{} : ParamView(&it->second);
  };
  Tensor x(ElementType::f64, {70, 19});
  for (uint64_t i = 0; i < x.element_count(); ++i) x.set(i, std::cos(0.1 * static_cast<double>(i)) * 1.5);
  for (RealType site : {RealType::f64, RealType::f32}) {
    Realization widened = uniform_realization(site), narrow = widened;
    for (const ir::Param& param : program.params) narrow.params[param.path] = RealType::bf16;
    if (site == RealType::f64) narrow.params["down"] = RealType::f32;  // f32 at rest, f64 product
    const PreparedParameters at_rest = prepare_parameters(program, narrow, source);
    const PreparedParameters wide = prepare_parameters(program, widened, source);
    ASSERT_EQ(at_rest.find("up.weight")->type, RealType::bf16);
    for (ExecuteOptions run : {ExecuteOptions{1, false}, ExecuteOptions{2, false}, ExecuteOptions{1, true}}) {
      const Tensor a = execute(program, "out", narrow, {x}, at_rest, run).at(0);
      const Tensor b = execute(program, "out", widened, {x}, wide, run).at(0);
      EXPECT_TRUE(same_bits(a, b)) << real_type_name(site) << " threads " << run.threads << " scalar " << run.force_scalar;
    }
  }
}

}  // namespace
}  // namespace presk::exec::native
