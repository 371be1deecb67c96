// The report's drawing helpers (svg.h).
#include "report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace presk::report {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string exact_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{}", value);
}

std::string short_number(double value) {
  if (!std::isfinite(value)) return exact_number(value);
  if (value == 0) return "0";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e-2 && magnitude < 1e4) return fmt::format("{:.4g}", value);
  std::string text = fmt::format("{:.3g}", value);  // 1.25e-06 → 1.25e-6
  const size_t e = text.find('e');
  if (e == std::string::npos) return text;
  std::string exponent = text.substr(e + 1);
  const bool negative = exponent[0] == '-';
  if (exponent[0] == '+' || exponent[0] == '-') exponent.erase(0, 1);
  exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
  return text.substr(0, e) + "e" + (negative ? "-" : "") + exponent;
}

std::string bytes_text(double bytes) {
  if (bytes < 1e3) return fmt::format("{:.0f} B", bytes);
  if (bytes < 1e6) return fmt::format("{:.3g} kB", bytes / 1e3);
  if (bytes < 1e9) return fmt::format("{:.3g} MB", bytes / 1e6);
  return fmt::format("{:.3g} GB", bytes / 1e9);
}

std::string type_colour(const std::string& type) {
  static const std::map<std::string, std::string> fixed = {
      {"f64", "#9aa5b1"}, {"f32", "#3b82c4"}, {"bf16", "#e8893a"}, {"int8", "#3f9e55"}, {"int4", "#9b59b6"}};
  const std::string family = type.substr(0, type.find('/'));
  const auto it = fixed.find(family);
  if (it == fixed.end()) return "#c9b458";
  if (family == type) return it->second;
  return family == "int8" ? "#7cc48c" : "#c39bd3";  // a scaled variant (pow2) of the family
}

LogScale::LogScale(const std::vector<double>& values, double left, double right) : left_(left), right_(right) {
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values) {
    if (!valid(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo <= hi) {
    lo_ = static_cast<int>(std::floor(std::log10(lo)));
    hi_ = static_cast<int>(std::ceil(std::log10(hi)));
  }
  if (hi_ <= lo_) hi_ = lo_ + 1;
  lo_ = std::max(lo_, hi_ - kMostDecades);  // smaller values sit at the left edge, their number beside
}

bool LogScale::valid(double value) const { return value > 0 && std::isfinite(value); }

double LogScale::at(double value) const {
  if (!valid(value)) return left_;
  const double t = (std::log10(value) - lo_) / (hi_ - lo_);
  return left_ + std::clamp(t, 0.0, 1.0) * (right_ - left_);
}

namespace {

int decade_step(int decades) { return decades <= 8 ? 1 : decades <= 16 ? 2 : decades <= 40 ? 5 : 10; }

}  // namespace

std::string horizontal_decades(const LogScale& scale, double top, double bottom) {
  std::string out;
  const int step = decade_step(scale.last_decade() - scale.first_decade());
  for (int d = scale.first_decade(); d <= scale.last_decade(); d += step) {
    const double x = scale.at(std::pow(10.0, d));
    out += fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)", x, top, bottom);
    out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">1e{}</text>)", x, bottom + 13, d);
  }
  return out;
}

std::string vertical_decades(const LogScale& scale, double left, double right) {
  std::string out;
  const int step = decade_step(scale.last_decade() - scale.first_decade());
  for (int d = scale.first_decade(); d <= scale.last_decade(); d += step) {
    const double y = scale.at(std::pow(10.0, d));
    out += fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}"/>)", left, y, right);
    out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">1e{}</text>)", left - 4, y + 4, d);
  }
  return out;
}

}  // namespace presk::report
