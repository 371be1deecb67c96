// A realization (docs/realization.md): which machine type each stored value (site) and each
// parameter takes, which parameters are integer-quantized, and in which order sums add.
// Read from JSON (`"format": 1`) or named uniformly (`f32`), then validated against a
// program so every site and path it names exists. Errors E0600–E0619.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "exec/native/numeric.h"
#include "ir/ir.h"

namespace presk::exec::native {

// How a sum of terms t_0 … t_{n-1} adds (docs/semantics.md, "Reduction orders").
enum class OrderKind : uint8_t { sequential, blocked, interleaved };
struct Order {
  OrderKind kind = OrderKind::sequential;
  int64_t block = 0;     // blocked: the tile edge (changes no bit: same sums as sequential)
  int64_t partials = 1;  // interleaved: number of partial sums n >= 1
  bool operator==(const Order&) const = default;
};

enum class QuantScheme : uint8_t { absmax, pow2 };
// An integer-quantized parameter: q in [-(2^(bits-1)-1), 2^(bits-1)-1], one f32 scale per
// index of every axis but `over` (an axis of the parameter's full shape, negative from the end),
// or with a group G, one per G consecutive elements along `over` (G divides that axis).
struct QuantSpec {
  int bits = 8;  // 8 or 4
  int64_t over = -2;
  QuantScheme scheme = QuantScheme::absmax;
  int64_t group = 0;  // 0: the whole axis (one scale per channel)
  bool operator==(const QuantSpec&) const = default;
};

// A chip's integer sums (docs/chip.md, "The chip's products"; set from a contract by
// numerics::chip_realization, never read from a file): with `bits` > 0, a contraction of an
// activation whose codes a `quantize` let gave (a chip's program) by integer weights scaled along
// the contracted axis, or by another quantize's codes (an attention's keys, its values' codes),
// sums the codes in an accumulator of `bits` bits, wrapping or saturating;
// 0: every contraction computes on the values, in its site's type.
struct IntegerSums {
  int bits = 0;
  bool saturate = false;
};

struct Realization {
  std::string origin;  // "f32" for a named one, the file path for a file (for messages)
  RealType default_type = RealType::f32;
  Order order;
  std::map<std::string, RealType> sites;   // by site name "<fn>/%<n>"
  std::map<std::string, RealType> params;  // by full parameter path
  std::map<std::string, QuantSpec> quant;  // by full parameter path
  IntegerSums integer_sums;

  RealType site_type(const std::string& site_name) const;
  RealType param_type(const std::string& path) const;
  const QuantSpec* param_quant(const std::string& path) const;
};

const char* order_kind_name(OrderKind kind);

// Every type uniform: `--realize f32`.
Realization uniform_realization(RealType type);

// Parses the JSON object of a realization file; checks its own structure (format, fields,
// types on the menu, order, quant specs), not the program. `origin` names it in messages.
Realization parse_realization(const nlohmann::json& json, const std::string& origin);

// The realization a file's bytes hold: strict JSON (support/json_reader.h; E0600 when it is
// not JSON, E0010–E0014 for what strict JSON refuses), then parse_realization.
Realization parse_realization_text(std::string_view text, const std::string& origin);

// Checks every site and path against `program`: unknown names (the message lists the
// nearest existing ones), a path both typed and quantized, a site that holds no real value,
// a quant axis out of range.
void validate_realization(const Realization& realization, const ir::Program& program);

// Whether a realization may type `let`'s site: a real-valued let that computes (param lets
// and control lets — call, fold, get — hand on a value typed elsewhere).
bool is_typable(const ir::Let& let);

// `--realize` argument: a type name ("f64", "f32", "bf16") or "@path.json", read but not yet
// validated against a program; load_realization also validates it.
Realization read_realization(const std::string& argument);
Realization load_realization(const std::string& argument, const ir::Program& program);

// The JSON form of a realization (format 1), for dumps and tests.
nlohmann::json realization_to_json(const Realization& realization);

}  // namespace presk::exec::native
