// A chip's numerics contract (docs/chip.md; the seed's module `numerics`): what a chip computes
// at one knob point and how far it may lie from the meaning — the scheme a product by a matrix
// in a block format reads its activation in, how the chip keeps a cache's rows and a recurrent
// memory, how an attention takes its operands where it narrows them, how far a fused op may lie
// from its parts run apart, and the widest integer its products and sums of integers use.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace presk::numerics {

// The values of a quantized activation that share one scale: a fixed count, the block of the
// matrix format that reads it (its group along the contracted axis; the whole axis for a
// per-channel format), or the row the op takes it in — a head's queries, a cached key or value
// row, a query's weights over a tile of keys.
struct Block {
  enum class Kind : uint8_t { fixed, format, row };
  Kind kind = Kind::row;
  int64_t count = 0;  // fixed: the values per scale (>= 1); 0 otherwise

  static Block fixed_count(int64_t n) { return {Kind::fixed, n}; }
  static Block of_format() { return {Kind::format, 0}; }
  static Block of_row() { return {Kind::row, 0}; }
  bool operator==(const Block&) const = default;
};

// How a block's scale s is chosen from its largest magnitude M (docs/chip.md, "Scales"):
//   absmax    s = f32(M / 127), M/127 rounded to the nearest binary32 (ties to even);
//   pow2      s = the least m·2^e ≥ M/127 with m a whole number of `significand_bits` bits
//             (1: a power of two, the MX formats' E8M0);
//   unsigned  for values never negative: s = the least 2^e with M ≤ 255·2^e, codes unsigned
//             eight bits (0 … 255).
// A block whose M is 0 has s = 0 and every code 0.
struct Scale {
  enum class Kind : uint8_t { absmax, pow2, unsigned_pow2 };
  Kind kind = Kind::absmax;
  int significand_bits = 0;  // pow2: 1 … 24; 0 otherwise
  bool operator==(const Scale&) const = default;
};

// The int8 words a value takes (docs/chip.md, "Words"). With s the block's scale:
//   one        q = ⌊x/s⌉                                   value q·s
//   two_rest   q₁ = ⌊x/s⌉, q₂ = ⌊(x − q₁s)/(s/128)⌉            value q₁s + q₂s/128
//   two_code16 c = ⌊x/(s/256)⌉ (16 bits), split c = 256·q₁ + q₂ with q₂ the low byte read
//              signed (−128 … 127)                            value c·s/256
//   three      two_rest and q₃ = ⌊(x − q₁s − q₂s/128)/(s/16384)⌉   value + q₃s/16384
// ⌊·⌉ is the nearest whole number, ties to even. Every word is an int8 (an unsigned byte for
// the first word of an unsigned scale), so a product by int8 weights is a sum of int8 products.
enum class Words : uint8_t { one, two_rest, two_code16, three };

struct Scheme {
  Block block;
  Scale scale;
  Words words = Words::one;
  bool operator==(const Scheme&) const = default;
};

// The floats a chip may keep or take a value in.
enum class FloatFormat : uint8_t { f32, bf16, f16 };

// How an op takes a value: kept in a float format, or quantized in a scheme.
struct Taken {
  std::optional<FloatFormat> float_format;  // exactly one of the two is set
  std::optional<Scheme> scheme;
  bool operator==(const Taken&) const = default;
};

// How a chip keeps the values it stores between steps — a cache's rows, a recurrent memory: as
// the meaning computes them, rounded to the nearest of a narrower float, or a row at a time as
// int8 codes under one binary16 scale (f16(max|row| / 127)), the row first turned by a
// Walsh–Hadamard transform where it is int8_rows_rotated (and turned back when read).
struct Keep {
  enum class Kind : uint8_t { as_computed, float_format, int8_rows, int8_rows_rotated };
  Kind kind = Kind::as_computed;
  FloatFormat format = FloatFormat::f32;  // float_format: bf16 or f16
  bool operator==(const Keep&) const = default;
};

// How an attention a chip computes on narrower units than its values takes its operands: its
// queries, its keys and values, and its weights — each weight times its value row's scale where
// the values are quantized.
struct AttentionNumerics {
  Taken queries;
  Taken keys;
  Taken values;
  Taken weights;
  bool operator==(const AttentionNumerics&) const = default;
};

// How far a value a chip keeps may lie from the value the meaning computes:
// of_block·max|block| + of_value·|v| + floor.
struct Bound {
  double of_block = 0;
  double of_value = 0;
  double floor = 0;

  static const Bound EXACT;  // bit for bit
  bool is_exact() const { return of_block == 0 && of_value == 0 && floor == 0; }
  // Whether `got` lies within the bound of `meant`, whose block's largest magnitude is `block_max`.
  bool admits(double got, double meant, double block_max) const;
  bool operator==(const Bound&) const = default;
};
inline const Bound Bound::EXACT{};

// What an integer accumulator does with a partial result beyond its bits.
enum class Overflow : uint8_t { wrap, saturate };

struct Contract {
  std::string chip;  // a name for messages and reports
  // The scheme a product by a matrix in a block format reads its activation in; none: its values.
  std::optional<Scheme> activation;
  // Per product (a contraction's site name): its own scheme, or none where it reads values.
  std::map<std::string, std::optional<Scheme>> products;
  Keep cache;                           // every cache's rows (a cache_write's site)
  std::map<std::string, Keep> caches;   // per cache site
  Keep memory;                          // a recurrent memory
  // How an attention takes its operands where it narrows them; none: on its values as kept.
  std::optional<AttentionNumerics> attention;
  // Per attention (its scores' site name): its own forms, or none where it attends on its values
  // as kept.
  std::map<std::string, std::optional<AttentionNumerics>> attentions;
  // The ops the chip runs with their quantize as one (`contract_quant`, `gelu_tanh_quant`, …:
  // an IR op's name and `_quant`), and how far such a fused op may lie from its parts apart.
  std::vector<std::string> fused;
  Bound fused_bound = Bound::EXACT;
  int accumulator_bits = 32;  // 1 … 64
  Overflow overflow = Overflow::wrap;
  bool operator==(const Contract&) const = default;

  // The scheme the product at `site` reads its activation in (its own, else the default).
  std::optional<Scheme> scheme_of(const std::string& site) const;
  // How the cache written at `site` is kept (its own, else the default).
  Keep keep_of(const std::string& site) const;
  // The forms of the attention whose scores are at `site` (its own, else the default).
  std::optional<AttentionNumerics> attention_of(const std::string& site) const;
  // Whether some attention takes its operands in forms (the default or one of its own).
  bool has_attention_forms() const;
};

const char* float_format_name(FloatFormat format);  // "f32", "bf16", "f16"
const char* keep_name(const Keep& keep);            // "as_computed", "f16", "int8_rows", …
const char* words_name(Words words);                // "one", "two_rest", …
std::string scheme_text(const Scheme& scheme);      // "row/absmax/one", "32/pow2(1)/two_rest"
// A scheme's scale and words, as the IR's `quantize` carries them in attrs.spec: "absmax/one",
// "pow2(1)/two_rest", "unsigned/one"; and back, with a fixed block of `block` values (none:
// malformed, or block < 1).
std::string scheme_spec(const Scheme& scheme);
std::optional<Scheme> parse_scheme_spec(std::string_view spec, int64_t block);
// The scheme of a `quantize` let (attrs.spec, attrs.starts = {block}); E1722 where malformed.
Scheme scheme_of_spec(std::string_view spec, const std::vector<int64_t>& starts);
// A cache row's keep as a `quantize` let carries it (its block the row): "keep/int8_rows",
// "keep/f16", …; and back: none for a spec that is no keep (a scheme's), E1722 for "keep/" and
// an unknown mode.
std::string keep_spec(const Keep& keep);
std::optional<Keep> keep_of_spec(std::string_view spec);
// The keep mode a name stands for ("as_computed", "f32", "bf16", "f16", "int8_rows",
// "int8_rows_rotated"); none for another name.
std::optional<Keep> parse_keep_name(std::string_view name);

// The values that share one scale for `block`, in a row of `row` values read by a matrix whose
// format has blocks of `format_block` values along the contracted axis (0: one scale per
// channel, the whole row). 0 when the block does not divide the row.
int64_t block_length(const Block& block, int64_t row, int64_t format_block);

// The number of int8 words a value takes, and the step of word w (0-based) as a fraction of s:
// 1, 1/128, 1/16384 (two_code16: 1/256 for its one code).
int word_count(Words words);

// The largest code magnitude of each word: 127 for the first (255 unsigned), 64 for a rest word
// (|rest| ≤ step/2), 32512 for the 16-bit code (two_code16's words are 127 and 128).
int64_t largest_code(const Scheme& scheme, int word);

}  // namespace presk::numerics
