// The report's drawing helpers: escaping, number text, the type colours and log axes, all as
// strings of inline SVG and HTML (report.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace presk::report {

// `text` with & < > " ' escaped, for an HTML text node or attribute.
std::string escape(std::string_view text);

// A number with every digit (round-trips: the attribute values a test compares with the JSON),
// and one for people ("1.25e-06", "3.72e+06" → "3.72e6").
std::string exact_number(double value);
std::string short_number(double value);
std::string bytes_text(double bytes);  // "131 kB", "3.7 MB"

// The fill of a type ("f64", "f32", "bf16", "int8", "int4/pow2", …).
std::string type_colour(const std::string& type);

// A base-10 log scale from [lo, hi] (the decades around the positive finite values given, at
// most kMostDecades of them below the largest) onto pixels [left, right].
inline constexpr int kMostDecades = 14;
class LogScale {
 public:
  LogScale(const std::vector<double>& values, double left, double right);
  bool valid(double value) const;  // positive and finite
  double at(double value) const;   // the pixel of a value (clamped)
  int first_decade() const { return lo_; }
  int last_decade() const { return hi_; }
  double left() const { return left_; }
  double right() const { return right_; }

 private:
  int lo_ = 0, hi_ = 1;
  double left_ = 0, right_ = 1;
};

// Tick lines and "1e-3" labels of every decade of `scale`, horizontal axis at y = top … bottom
// (labels under bottom).
std::string horizontal_decades(const LogScale& scale, double top, double bottom);
// The same for a vertical log axis: scale maps decades to y pixels; ticks from left to right.
std::string vertical_decades(const LogScale& scale, double left, double right);

}  // namespace presk::report
