// An attention's operands in their forms as the IR's `quantize` carries them (attention_spec.h).
#include "numerics/scheme/attention_spec.h"

#include <cmath>

#include "support/diagnostics.h"
#include "support/json_reader.h"

namespace presk::numerics {
namespace {

constexpr std::string_view kCodes = "codes/";
constexpr std::string_view kWeights = "weights|";

[[noreturn]] void malformed(std::string_view spec, const char* what) {
  user_error("E1722").hint("a spec as `presk dump --stage chip` prints it")
      << "quantize: `" << text_excerpt(spec) << "` is no " << what;
  internal_failure(__FILE__, __LINE__, "user_error returns");
}

std::optional<FloatFormat> float_named(std::string_view name) {
  for (FloatFormat f : {FloatFormat::f32, FloatFormat::bf16, FloatFormat::f16}) {
    if (name == float_format_name(f)) return f;
  }
  return std::nullopt;
}

// The spec's fields between '|'.
std::vector<std::string_view> fields_of(std::string_view spec) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  for (size_t bar = spec.find('|'); bar != std::string_view::npos; bar = spec.find('|', start)) {
    fields.push_back(spec.substr(start, bar - start));
    start = bar + 1;
  }
  fields.push_back(spec.substr(start));
  return fields;
}

}  // namespace

std::string taken_spec(const Taken& taken) {
  if (taken.float_format) return keep_spec(Keep{Keep::Kind::float_format, *taken.float_format});
  return scheme_spec(*taken.scheme);
}

std::string codes_spec(const Scheme& values) { return std::string(kCodes) + scheme_spec(values); }

std::optional<Scheme> codes_of_spec(std::string_view spec, const std::vector<int64_t>& starts) {
  if (!spec.starts_with(kCodes)) return std::nullopt;
  return scheme_of_spec(spec.substr(kCodes.size()), starts);
}

double codes_value(const std::vector<std::vector<int32_t>>& words, size_t i, Words kind) {
  const double first = words[0][i];
  switch (kind) {
    case Words::one: return first;
    case Words::two_rest: return first + words[1][i] / 128.0;
    case Words::two_code16: return first + words[1][i] / 256.0;
    case Words::three: return first + words[1][i] / 128.0 + words[2][i] / 16384.0;
  }
  return first;
}

std::string weights_spec(const WeightsForm& form) {
  const std::string weights =
      form.weights.float_format ? float_format_name(*form.weights.float_format) : scheme_spec(*form.weights.scheme);
  return std::string(kWeights) + weights + "|" + scheme_spec(form.values) + "|" + form.weight_letters + "," +
         form.value_letters;
}

std::optional<WeightsForm> weights_of_spec(std::string_view spec, const std::vector<int64_t>& starts) {
  if (!spec.starts_with(kWeights)) return std::nullopt;
  const std::vector<std::string_view> fields = fields_of(spec.substr(kWeights.size()));
  if (fields.size() != 3) malformed(spec, "weights spec (weights|form|values|letters)");
  WeightsForm form;
  if (const std::optional<FloatFormat> f = float_named(fields[0])) {
    form.weights.float_format = f;
  } else {
    form.weights.scheme = scheme_of_spec(fields[0], starts);
  }
  const std::optional<Scheme> values = parse_scheme_spec(fields[1], 1);
  if (!values) malformed(spec, "weights spec: its values' scheme");
  form.values = *values;
  form.values.block = Block::of_row();
  const size_t comma = fields[2].find(',');
  if (comma == std::string_view::npos) malformed(spec, "weights spec: its letters");
  form.weight_letters = std::string(fields[2].substr(0, comma));
  form.value_letters = std::string(fields[2].substr(comma + 1));
  const std::string& v = form.value_letters;
  if (v.empty() || form.weight_letters.find(v.back()) != std::string::npos) malformed(spec, "weights spec: its letters");
  for (size_t a = 0; a + 1 < v.size(); ++a) {
    if (form.weight_letters.find(v[a]) == std::string::npos) malformed(spec, "weights spec: its letters");
  }
  return form;
}

std::vector<size_t> value_row_of_weights(const WeightsForm& form, const std::vector<int64_t>& p_shape,
                                         const std::vector<int64_t>& v_shape) {
  const std::string& p = form.weight_letters;
  const std::string& v = form.value_letters;
  internal_assert(p.size() == p_shape.size() && v.size() == v_shape.size());
  // The stride in v's rows of each of p's axes (0 for an axis v has not).
  std::vector<size_t> stride(p.size(), 0);
  size_t row_stride = 1;
  for (size_t a = v.size() - 1; a-- > 0;) {
    stride[p.find(v[a])] = row_stride;
    row_stride *= static_cast<size_t>(v_shape[a]);
  }
  size_t count = 1;
  for (int64_t e : p_shape) count *= static_cast<size_t>(e);
  std::vector<size_t> rows(count);
  std::vector<int64_t> index(p.size(), 0);
  for (size_t i = 0; i < count; ++i) {
    size_t row = 0;
    for (size_t a = 0; a < p.size(); ++a) row += static_cast<size_t>(index[a]) * stride[a];
    rows[i] = row;
    for (size_t a = p.size(); a-- > 0;) {  // the next index, row-major
      if (++index[a] < p_shape[a]) break;
      index[a] = 0;
    }
  }
  return rows;
}

}  // namespace presk::numerics
