// Symbolic integers: the values of an exporter's shape arithmetic (Shape, Gather, Concat, Add,
// Div, …) evaluated at import as expressions of the program's dims (docs/import.md, "Shape
// arithmetic"). A value is a sum of monomials c · d1 · d2 · … with integer coefficients; every
// dim is at least 1, which decides the comparisons exporters make (T > 0, B == -1).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace presk::onnx_import {

struct Extent;

class SymInt {
 public:
  SymInt() = default;
  static SymInt of(int64_t value);
  static SymInt of(const Extent& extent);
  static SymInt dim(const std::string& name);

  bool is_known() const;                 // no dims: a plain integer
  int64_t value() const;                 // the integer (is_known() only)
  std::optional<Extent> extent() const;  // a single monomial with a positive factor: an extent
  // The expression as the language writes shape arithmetic: `2 * B * T - 1`, `T`, `4`.
  std::string text() const;
  bool operator==(const SymInt& other) const = default;

  friend SymInt operator+(const SymInt& a, const SymInt& b);
  friend SymInt operator-(const SymInt& a, const SymInt& b);
  friend SymInt operator*(const SymInt& a, const SymInt& b);
  // a / b when it is exact for every value of the dims (each term divisible), else nullopt;
  // known operands divide as C++ does (toward zero), as ONNX Runtime's integer Div.
  friend std::optional<SymInt> exact_quotient(const SymInt& a, const SymInt& b);
  // Whether a ≥ b for every value of the dims (each ≥ 1) — false also when it cannot tell.
  friend bool at_least(const SymInt& a, const SymInt& b);
  // The sign of a − b when every value of the dims (each ≥ 1) gives the same one, else nullopt.
  friend std::optional<int> compare(const SymInt& a, const SymInt& b);

 private:
  std::map<std::vector<std::string>, int64_t> terms_;  // sorted dims → nonzero coefficient
  void add_term(const std::vector<std::string>& dims, int64_t coefficient);
};

}  // namespace presk::onnx_import
