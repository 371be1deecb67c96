// Symbolic integers (symbolic.h): polynomials over the dims with int64 coefficients,
// overflow-checked (E1308, as an extent past 2^40 is).
#include "import/symbolic.h"

#include <algorithm>

#include "import/builder.h"

namespace presk::onnx_import {
namespace {

void refuse_overflow(bool overflow) {
  if (overflow) user_error("E1308") << "a shape computation of the model overflows 64-bit integers";
}

// The product of two sorted dim lists, sorted.
std::vector<std::string> merged(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> result;
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(result));
  return result;
}

// a / b as dim lists when b's dims are among a's (as a multiset), else nullopt.
std::optional<std::vector<std::string>> divided_dims(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> rest = a;
  for (const std::string& dim : b) {
    auto it = std::find(rest.begin(), rest.end(), dim);
    if (it == rest.end()) return std::nullopt;
    rest.erase(it);
  }
  return rest;
}

}  // namespace

void SymInt::add_term(const std::vector<std::string>& dims, int64_t coefficient) {
  int64_t& slot = terms_[dims];
  refuse_overflow(__builtin_add_overflow(slot, coefficient, &slot));
  if (slot == 0) terms_.erase(dims);
}

SymInt SymInt::of(int64_t value) {
  SymInt result;
  if (value != 0) result.terms_[{}] = value;
  return result;
}

SymInt SymInt::of(const Extent& extent) {
  SymInt result;
  if (extent.factor != 0) result.terms_[extent.dims] = extent.factor;
  return result;
}

SymInt SymInt::dim(const std::string& name) {
  SymInt result;
  result.terms_[{name}] = 1;
  return result;
}

bool SymInt::is_known() const { return terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty()); }

int64_t SymInt::value() const { return terms_.empty() ? 0 : terms_.begin()->second; }

std::optional<Extent> SymInt::extent() const {
  if (terms_.size() != 1 || terms_.begin()->second <= 0) return std::nullopt;
  return Extent{terms_.begin()->second, terms_.begin()->first};
}

std::string SymInt::text() const {
  if (terms_.empty()) return "0";
  std::string text;
  auto write = [&](const std::vector<std::string>& dims, int64_t coefficient) {
    bool negative = coefficient < 0;
    uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(coefficient) : static_cast<uint64_t>(coefficient);
    std::string term = magnitude != 1 || dims.empty() ? std::to_string(magnitude) : "";
    for (const std::string& dim : dims) term += (term.empty() ? "" : " * ") + dim;
    if (text.empty()) text = negative ? "0 - " + term : term;
    else text += (negative ? " - " : " + ") + term;
  };
  // The dims' terms first (in reverse order of their dim lists), the constant last: `B * T - 1`.
  for (auto it = terms_.rbegin(); it != terms_.rend(); ++it) {
    if (!it->first.empty()) write(it->first, it->second);
  }
  auto constant = terms_.find({});
  if (constant != terms_.end()) write({}, constant->second);
  return text;
}

SymInt operator+(const SymInt& a, const SymInt& b) {
  SymInt result = a;
  for (const auto& [dims, coefficient] : b.terms_) result.add_term(dims, coefficient);
  return result;
}

SymInt operator-(const SymInt& a, const SymInt& b) {
  SymInt result = a;
  for (const auto& [dims, coefficient] : b.terms_) {
    refuse_overflow(coefficient == INT64_MIN);
    result.add_term(dims, -coefficient);
  }
  return result;
}

SymInt operator*(const SymInt& a, const SymInt& b) {
  SymInt result;
  for (const auto& [dims_a, ca] : a.terms_) {
    for (const auto& [dims_b, cb] : b.terms_) {
      int64_t product = 0;
      refuse_overflow(__builtin_mul_overflow(ca, cb, &product));
      result.add_term(merged(dims_a, dims_b), product);
    }
  }
  return result;
}

std::optional<SymInt> exact_quotient(const SymInt& a, const SymInt& b) {
  if (b.terms_.empty()) return std::nullopt;
  if (a.is_known() && b.is_known()) {
    if (a.value() == INT64_MIN && b.value() == -1) return std::nullopt;
    return SymInt::of(a.value() / b.value());
  }
  if (b.terms_.size() != 1) return std::nullopt;  // only a monomial divides term by term
  const auto& [divisor_dims, divisor] = *b.terms_.begin();
  SymInt result;
  for (const auto& [dims, coefficient] : a.terms_) {
    std::optional<std::vector<std::string>> rest = divided_dims(dims, divisor_dims);
    if (!rest || (divisor == -1 && coefficient == INT64_MIN) || coefficient % divisor != 0) return std::nullopt;
    result.add_term(*rest, coefficient / divisor);
  }
  return result;
}

bool at_least(const SymInt& a, const SymInt& b) {
  SymInt difference = a - b;
  if (difference.is_known()) return difference.value() >= 0;
  // With every dim ≥ 1, a polynomial whose dim terms are all positive grows with each dim: its
  // least value is at all dims = 1, the sum of the coefficients.
  int64_t at_one = 0;
  for (const auto& [dims, coefficient] : difference.terms_) {
    if (!dims.empty() && coefficient < 0) return false;
    if (__builtin_add_overflow(at_one, coefficient, &at_one)) return false;
  }
  return at_one >= 0;
}

std::optional<int> compare(const SymInt& a, const SymInt& b) {
  if (a == b) return 0;
  if (at_least(a, b + SymInt::of(1))) return 1;
  if (at_least(b, a + SymInt::of(1))) return -1;
  return std::nullopt;
}

}  // namespace presk::onnx_import
