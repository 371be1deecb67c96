// The contract's small facts (contract.h): names, word counts and code ranges.
#include "numerics/scheme/contract.h"

#include <cmath>

#include "support/diagnostics.h"
#include "support/json_reader.h"

namespace presk::numerics {

bool Bound::admits(double got, double meant, double block_max) const {
  if (is_exact()) return got == meant || (got != got && meant != meant);
  return std::fabs(got - meant) <= of_block * block_max + of_value * std::fabs(meant) + floor;
}

std::optional<Scheme> Contract::scheme_of(const std::string& site) const {
  auto it = products.find(site);
  return it == products.end() ? activation : it->second;
}

Keep Contract::keep_of(const std::string& site) const {
  auto it = caches.find(site);
  return it == caches.end() ? cache : it->second;
}

std::optional<AttentionNumerics> Contract::attention_of(const std::string& site) const {
  auto it = attentions.find(site);
  return it == attentions.end() ? attention : it->second;
}

bool Contract::has_attention_forms() const {
  if (attention) return true;
  for (const auto& [site, forms] : attentions) {
    if (forms) return true;
  }
  return false;
}

const char* float_format_name(FloatFormat format) {
  switch (format) {
    case FloatFormat::f32: return "f32";
    case FloatFormat::bf16: return "bf16";
    case FloatFormat::f16: return "f16";
  }
  return "?";
}

const char* keep_name(const Keep& keep) {
  switch (keep.kind) {
    case Keep::Kind::as_computed: return "as_computed";
    case Keep::Kind::float_format: return float_format_name(keep.format);
    case Keep::Kind::int8_rows: return "int8_rows";
    case Keep::Kind::int8_rows_rotated: return "int8_rows_rotated";
  }
  return "?";
}

const char* words_name(Words words) {
  switch (words) {
    case Words::one: return "one";
    case Words::two_rest: return "two_rest";
    case Words::two_code16: return "two_code16";
    case Words::three: return "three";
  }
  return "?";
}

std::string scheme_spec(const Scheme& scheme) {
  std::string text;
  switch (scheme.scale.kind) {
    case Scale::Kind::absmax: text = "absmax"; break;
    case Scale::Kind::pow2: text = "pow2(" + std::to_string(scheme.scale.significand_bits) + ")"; break;
    case Scale::Kind::unsigned_pow2: text = "unsigned"; break;
  }
  return text + "/" + words_name(scheme.words);
}

std::string scheme_text(const Scheme& scheme) {
  std::string text;
  switch (scheme.block.kind) {
    case Block::Kind::fixed: text = std::to_string(scheme.block.count); break;
    case Block::Kind::format: text = "format"; break;
    case Block::Kind::row: text = "row"; break;
  }
  return text + "/" + scheme_spec(scheme);
}

std::optional<Scheme> parse_scheme_spec(std::string_view spec, int64_t block) {
  const size_t slash = spec.find('/');
  if (slash == std::string_view::npos || block < 1) return std::nullopt;
  const std::string_view scale = spec.substr(0, slash);
  const std::string_view words = spec.substr(slash + 1);
  Scheme scheme;
  scheme.block = Block::fixed_count(block);
  if (scale == "absmax") {
    scheme.scale.kind = Scale::Kind::absmax;
  } else if (scale == "unsigned") {
    scheme.scale.kind = Scale::Kind::unsigned_pow2;
  } else if (scale.starts_with("pow2(") && scale.ends_with(")") && scale.size() > 6 && scale.size() < 9) {
    int bits = 0;
    for (char c : scale.substr(5, scale.size() - 6)) {
      if (c < '0' || c > '9') return std::nullopt;
      bits = bits * 10 + (c - '0');
    }
    if (bits < 1 || bits > 24) return std::nullopt;
    scheme.scale = {Scale::Kind::pow2, bits};
  } else {
    return std::nullopt;
  }
  for (Words w : {Words::one, Words::two_rest, Words::two_code16, Words::three}) {
    if (words == words_name(w)) {
      scheme.words = w;
      return scheme;
    }
  }
  return std::nullopt;
}

Scheme scheme_of_spec(std::string_view spec, const std::vector<int64_t>& starts) {
  const int64_t block = starts.size() == 1 ? starts[0] : 0;
  const std::optional<Scheme> scheme = parse_scheme_spec(spec, block);
  if (!scheme) {
    user_error("E1722").hint("spec=\"absmax/one\": a scale (absmax, pow2(m) with 1 ≤ m ≤ 24, unsigned) and words "
                             "(one, two_rest, two_code16, three); starts=[b], b ≥ 1")
        << "quantize: `" << text_excerpt(spec) << "` with blocks of " << block << " is no scheme";
  }
  return *scheme;
}

std::string keep_spec(const Keep& keep) { return std::string("keep/") + keep_name(keep); }

std::optional<Keep> parse_keep_name(std::string_view name) {
  for (Keep keep : {Keep{}, Keep{Keep::Kind::float_format, FloatFormat::f32}, Keep{Keep::Kind::float_format, FloatFormat::bf16},
                    Keep{Keep::Kind::float_format, FloatFormat::f16}, Keep{Keep::Kind::int8_rows, FloatFormat::f32},
                    Keep{Keep::Kind::int8_rows_rotated, FloatFormat::f32}}) {
    if (name == keep_name(keep)) return keep;
  }
  return std::nullopt;
}

std::optional<Keep> keep_of_spec(std::string_view spec) {
  if (!spec.starts_with("keep/")) return std::nullopt;
  const std::optional<Keep> keep = parse_keep_name(spec.substr(5));
  if (!keep) {
    user_error("E1722").hint("spec=\"keep/int8_rows\": a keep mode (as_computed, f32, bf16, f16, int8_rows, int8_rows_rotated)")
        << "quantize: `" << text_excerpt(spec) << "` is no keep mode";
  }
  return keep;
}

int64_t block_length(const Block& block, int64_t row, int64_t format_block) {
  int64_t length = row;
  if (block.kind == Block::Kind::fixed) length = block.count;
  if (block.kind == Block::Kind::format && format_block > 0) length = format_block;
  return length > 0 && row % length == 0 ? length : 0;
}

int word_count(Words words) {
  switch (words) {
    case Words::one: return 1;
    case Words::two_rest:
    case Words::two_code16: return 2;
    case Words::three: return 3;
  }
  return 1;
}

int64_t largest_code(const Scheme& scheme, int word) {
  internal_assert(word >= 0 && word < word_count(scheme.words));
  const bool is_unsigned = scheme.scale.kind == Scale::Kind::unsigned_pow2;
  if (word == 0) return is_unsigned ? 255 : 127;
  if (scheme.words == Words::two_code16) return 128;  // the low byte read signed: −128 … 127
  return 64;  // a rest at a 128th of the step before it: |rest| ≤ step/2
}

}  // namespace presk::numerics
