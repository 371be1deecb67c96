// Parameters read in place (value.h, ir::read_in_place): a contraction reads its in-place operand
// a tile at a time along one of its free letters (ir::tile_letters), converting only the tile to
// exact numbers (about in_place_tile_elements(), at least one index of the letter) and computing
// the tile's output elements with eval_contract itself, then moving them into place. Every output
// element is computed from its own terms alone, in the same order, by the same code (the
// fixed-point rows decide the correctly rounded sum or ExactDot computes the same number; the fma
// chain, mpfr_dot and arb_dot are per element), so the bits are those of the operand converted
// whole. The exact contraction at 512 bits or fewer (the default: 128) skips the conversion: each tile
// is packed in binades straight from its stored values (contract_tiles_exact below), the same
// rows. An embed converts only the rows it gathers (ops_layout.cpp).
#include <algorithm>
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/reference/arith_ball.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/contract_exact.h"
#include "exec/reference/exact_dot.h"
#include "exec/reference/ops.h"
#include "ir/footprint.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {
std::atomic<int64_t> tile_elements{ir::kInPlaceTileElements};
}  // namespace

int64_t in_place_tile_elements() { return tile_elements.load(std::memory_order_relaxed); }
void set_in_place_tile_elements(int64_t elements) {
  tile_elements.store(std::clamp<int64_t>(elements, 1, ir::kInPlaceTileElements), std::memory_order_relaxed);
}

template <class A>
void convert_in_place(const A& arith, const Value<A>& source, int64_t first, int64_t count,
                      typename A::Number* out) {
  internal_assert(source.is_in_place() && first >= 0 && first + count <= source.size());
  std::vector<double> values(static_cast<size_t>(count));
  source.in_place.read(source.in_place_offset + static_cast<uint64_t>(first), values.size(), values.data());
  for (int64_t i = 0; i < count; ++i) arith.set_double(out + i, values[static_cast<size_t>(i)]);  // exact
}

namespace {

// The operand's slice [first, first + count) along `axis`, as the binary64 values its stored
// type converts to exactly (in parallel, by runs contiguous in the source).
template <class A>
std::vector<double> read_tile(const Value<A>& source, size_t axis, int64_t first, int64_t count) {
  internal_assert(source.is_in_place());
  int64_t inner = 1, outer = 1;
  for (size_t i = axis + 1; i < source.shape.size(); ++i) inner *= source.shape[i];
  for (size_t i = 0; i < axis; ++i) outer *= source.shape[i];
  const int64_t extent = source.shape[axis], run = count * inner;  // contiguous in the source
  std::vector<double> values(static_cast<size_t>(outer * run));
  parallel_chunks(outer * run, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t f = begin; f < end;) {
      const int64_t o = f / run, within = f % run, length = std::min(end - f, run - within);
      source.in_place.read(source.in_place_offset + static_cast<uint64_t>((o * extent + first) * inner + within),
                           static_cast<size_t>(length), values.data() + f);
      f += length;
    }
  });
  return values;
}

// The same slice as exact numbers (of A; the source may be another arithmetic's value).
template <class A, class S>
Value<A> convert_tile(const A& arith, const Value<S>& source, size_t axis, int64_t first, int64_t count) {
  Shape shape = source.shape;
  shape[axis] = count;
  Value<A> tile = Value<A>::make_real(arith, shape);
  const std::vector<double> values = read_tile(source, axis, first, count);
  parallel_chunks(tile.size(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t f = begin; f < end; ++f) arith.set_double(tile.real(f), values[static_cast<size_t>(f)]);  // exact
  });
  return tile;
}

// The letters of a spec's x, w and output.
struct SpecLetters {
  std::string x, w, out;
};
SpecLetters letters_of(const std::string& spec) {
  std::string text;
  for (char c : spec) if (c != ' ') text += c;
  const size_t comma = text.find(','), arrow = text.find("->");
  internal_assert(comma != std::string::npos && arrow != std::string::npos);
  return {text.substr(0, comma), text.substr(comma + 1, arrow - comma - 1), text.substr(arrow + 2)};
}

// Where contract_in_place tiles its in-place operand: along `axis` (out_axis in the output),
// `step` indices a tile, the output's elements after out_axis `inner`.
struct Tiling {
  size_t axis, out_axis;
  int64_t extent, step, inner;
};

// The exact contraction (contract_exact.h) with each tile packed in binades straight from its
// stored values, the other operand packed once, the results written in place: the elements the
// rows decide have the bits eval_contract gives them, and one they do not (a NaN or infinite
// entry, a row spread over more than 384 bits, a rounding too close to call) is computed
// exactly from the tile converted, as eval_contract computes it. `on_tile`, when given, sees each
// tile's plan, its values and where its outputs go (out_at: a tile's output p to out's index).
using TileHook = std::function<void(const ContractionPlan& plan, const double* values,
                                    const std::function<int64_t(int64_t)>& out_at)>;
template <class S>
Value<MpfrArith> contract_tiles_exact(const MpfrArith& arith, const ir::Let& let, const Value<MpfrArith>& other,
                                      const Value<S>& source, bool tile_w, const Tiling& t,
                                      const TileHook& on_tile = {}) {
  Value<MpfrArith> out = Value<MpfrArith>::make_real(arith, let.type.shape);
  std::optional<PackedOperand> packed_other;
  for (int64_t first = 0; first < t.extent; first += t.step) {
    const int64_t count = std::min(t.step, t.extent - first), run = count * t.inner;
    Shape tile_shape = source.shape;
    tile_shape[t.axis] = count;
    const ContractionPlan plan =
        plan_contraction(let.attrs.spec, tile_w ? other.shape : tile_shape, tile_w ? tile_shape : other.shape);
    if (!packed_other) {
      packed_other.emplace(pack_operand(arith, plan, other, tile_w, false));
      if (tile_w) packed_other->rows.prepare_digits();  // for FixedRows::dot_group
    }
    const std::vector<double> values = read_tile(source, t.axis, first, count);
    const std::function<int64_t(int64_t)> out_at = [&](int64_t p) { return (p / run * t.extent + first) * t.inner + p % run; };
    if (on_tile) on_tile(plan, values.data(), out_at);
    const PackedOperand tile = pack_operand(arith.bits(), plan, values.data(), !tile_w);
    const OutputAt at = [&](int64_t p) { return out.real(out_at(p)); };
    int64_t outputs = 1;
    for (const Letter& letter : plan.free) outputs *= letter.extent;
    const std::vector<int64_t> rest =
        contract_fixed(plan, tile_w ? *packed_other : tile, tile_w ? tile : *packed_other, outputs, at);
    if (rest.empty()) continue;
    const Value<MpfrArith> exact = convert_tile(arith, source, t.axis, first, count);
    contract_exact_elements(arith, plan, tile_w ? other : exact, tile_w ? exact : other, rest, at);
  }
  return out;
}

// The ball contraction (contract_ball.cpp) of a ball operand and a parameter read in place: the
// midpoints by contract_tiles_exact (the parameter's tiles packed from its stored values, IFMA
// where it applies), the radii Σ r·|w| from each tile as it passes (the parameter is exact).
// nullopt where the other operand has a NaN, an infinity or a number beyond binary64.
std::optional<Value<BallArith>> contract_ball_tiles(const BallArith& arith, const ir::Let& let,
                                                    const Value<BallArith>& other, const Value<BallArith>& source,
                                                    bool tile_w, const Tiling& t) {
  Shape first_tile = source.shape;
  first_tile[t.axis] = std::min(t.step, t.extent);
  BallRows rows;  // the other operand's rows do not depend on the tile's extent
  if (!ball_rows(arith, plan_contraction(let.attrs.spec, tile_w ? other.shape : first_tile, tile_w ? first_tile : other.shape),
                 other, tile_w, rows)) {
    return std::nullopt;
  }
  std::vector<double> radius(rows.exact ? 0 : static_cast<size_t>(element_count(let.type.shape)), 0);
  const TileHook radii = [&](const ContractionPlan& plan, const double* values, const std::function<int64_t(int64_t)>& out_at) {
    const BallRows tile = exact_ball_rows(plan, values, !tile_w);
    int64_t outputs = 1;
    for (const Letter& letter : plan.free) outputs *= letter.extent;
    parallel_chunks(outputs, 8, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        radius[static_cast<size_t>(out_at(p))] = tile_w ? radius_bound(plan, rows, tile, p) : radius_bound(plan, tile, rows, p);
      }
    });
  };
  const Value<MpfrArith> mid = contract_tiles_exact(MpfrArith(arith.bits()), let, rows.mid, source, tile_w, t,
                                                    rows.exact ? TileHook{} : radii);
  Value<BallArith> out = Value<BallArith>::make_real(arith, let.type.shape);
  set_balls(arith, mid, radius, out);
  return out;
}

}  // namespace

template <class A>
Value<A> contract_in_place(const A& arith, const ir::Let& let, const Value<A>& x, const Value<A>& w,
                           std::vector<TermStatistics>* terms) {
  internal_assert(x.is_in_place() != w.is_in_place());  // ir::read_in_place: never both
  const bool tile_w = w.is_in_place();
  const Value<A>& source = tile_w ? w : x;
  const SpecLetters spec = letters_of(let.attrs.spec);
  const std::string& own = tile_w ? spec.w : spec.x;
  const std::string candidates = ir::tile_letters(let.attrs.spec, tile_w ? 1 : 0);
  internal_assert(!candidates.empty());
  size_t axis = own.find(candidates[0]);  // the longest of the tile letters
  for (char c : candidates) axis = source.shape[own.find(c)] > source.shape[axis] ? own.find(c) : axis;
  const int64_t extent = source.shape[axis];
  const size_t out_axis = spec.out.find(own[axis]);
  const int64_t per_index = extent == 0 ? 0 : source.size() / extent;
  const int64_t step = std::max<int64_t>(1, in_place_tile_elements() / std::max<int64_t>(per_index, 1));
  int64_t inner = 1;  // the output's elements after its tile axis
  for (size_t i = out_axis + 1; i < let.type.shape.size(); ++i) inner *= let.type.shape[i];
  if constexpr (std::is_same_v<A, MpfrArith>) {
    if (terms == nullptr && contraction_sums() == ContractionSums::Exact && FixedRows::supports(arith.bits()) &&
        x.size() > 0 && w.size() > 0) {
      return contract_tiles_exact(arith, let, tile_w ? x : w, source, tile_w, Tiling{axis, out_axis, extent, step, inner});
    }
  }
  if constexpr (std::is_same_v<A, BallArith>) {
    if (terms == nullptr && FixedRows::supports(arith.bits()) && x.size() > 0 && w.size() > 0) {
      std::optional<Value<BallArith>> out =
          contract_ball_tiles(arith, let, tile_w ? x : w, source, tile_w, Tiling{axis, out_axis, extent, step, inner});
      if (out) return std::move(*out);
    }
  }
  Value<A> out = Value<A>::make_real(arith, let.type.shape);
  if (terms != nullptr) terms->resize(static_cast<size_t>(out.size()));
  ir::Let part_let = let;
  for (int64_t first = 0; first < extent; first += step) {
    const int64_t count = std::min(step, extent - first);
    const Value<A> tile = convert_tile(arith, source, axis, first, count);
    part_let.type.shape[out_axis] = count;
    std::vector<TermStatistics> part_terms;
    std::vector<TermStatistics>* want = terms != nullptr ? &part_terms : nullptr;
    Value<A> part = tile_w ? eval_contract(arith, part_let, x, tile, want) : eval_contract(arith, part_let, tile, w, want);
    const int64_t run = count * inner;  // the tile's output elements are runs of `run` in out
    for (int64_t p = 0; p < part.size(); ++p) {
      const int64_t o = (p / run * extent + first) * inner + p % run;
      arith.set(out.real(o), part.real(p));  // exact: the same precision
      if (terms != nullptr) (*terms)[static_cast<size_t>(o)] = part_terms[static_cast<size_t>(p)];
    }
  }
  return out;
}

template Value<MpfrArith> contract_in_place(const MpfrArith&, const ir::Let&, const Value<MpfrArith>&,
                                            const Value<MpfrArith>&, std::vector<TermStatistics>*);
template Value<BallArith> contract_in_place(const BallArith&, const ir::Let&, const Value<BallArith>&,
                                            const Value<BallArith>&, std::vector<TermStatistics>*);
template void convert_in_place(const MpfrArith&, const Value<MpfrArith>&, int64_t, int64_t, MpfrArith::Number*);
template void convert_in_place(const BallArith&, const Value<BallArith>&, int64_t, int64_t, BallArith::Number*);

}  // namespace presk::reference
