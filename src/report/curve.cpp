// The ε curve: reading the curve file scripts/experiment-curve writes, and its section of the
// report (report.h, sections.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/sections.h"
#include "report/svg.h"
#include "support/diagnostics.h"
#include "support/json_reader.h"

namespace presk::report {
namespace {

class CurveReader {
 public:
  explicit CurveReader(const std::string& origin) : origin_(origin) {}
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    user_error("E1173").hint("pass the curve.json that scripts/experiment-curve writes (format 1, docs/precision.md \"report\")")
        << origin_ << ": the curve's field `" << field << "` " << what;
    std::abort();
  }
  const nlohmann::json& field(const nlohmann::json& object, const char* name, const std::string& where) const {
    if (!object.is_object() || !object.contains(name)) fail(where + name, "is missing");
    return object[name];
  }
  std::optional<double> maybe_number(const nlohmann::json& object, const char* name, const std::string& where) const {
    const nlohmann::json& value = field(object, name, where);
    if (value.is_null()) return std::nullopt;
    if (value.is_number()) return value.get<double>();
    if (value == "inf") return INFINITY;
    if (value == "nan") return NAN;
    fail(where + name, "is not a number: " + json_excerpt(value));
  }
  double number(const nlohmann::json& object, const char* name, const std::string& where) const {
    const std::optional<double> value = maybe_number(object, name, where);
    if (!value) fail(where + name, "is null");
    return *value;
  }
  double positive(const nlohmann::json& object, const char* name, const std::string& where) const {
    const double value = number(object, name, where);
    if (!(value > 0 && std::isfinite(value))) fail(where + name, "is not a positive finite number (a log axis needs one)");
    return value;
  }
  std::string text(const nlohmann::json& object, const char* name, const std::string& where) const {
    const nlohmann::json& value = field(object, name, where);
    if (!value.is_string()) fail(where + name, "is not a string");
    return value.get<std::string>();
  }

 private:
  const std::string& origin_;
};

CurvePoint read_point(const CurveReader& r, const nlohmann::json& p, const std::string& where) {
  CurvePoint point;
  point.on = r.text(p, "on", where);
  if (point.on != "loss" && point.on != "logits") r.fail(where + "on", "is neither \"loss\" nor \"logits\"");
  point.label = r.text(p, "label", where);
  point.budget = r.positive(p, "budget", where);
  point.absolute = r.positive(p, "absolute", where);
  point.traffic_ratio = r.positive(p, "traffic_ratio", where);
  point.gap_in_sample = r.number(p, "gap_in_sample", where);
  point.gap_held_out = r.maybe_number(p, "gap_held_out", where);
  const nlohmann::json& inside = r.field(p, "inside", where);
  if (!inside.is_boolean()) r.fail(where + "inside", "is not true or false");
  point.inside = inside.get<bool>();
  point.quality = r.maybe_number(p, "quality", where);
  for (auto [name, out] : {std::pair{"flipped", &point.flipped}, std::pair{"allowed", &point.allowed}}) {
    if (!p.contains(name)) continue;
    if (const std::optional<double> v = r.maybe_number(p, name, where)) *out = static_cast<int64_t>(*v);
  }
  return point;
}

}  // namespace

Curve parse_curve(const nlohmann::json& file, const std::string& origin) {
  const CurveReader r(origin);
  if (!file.is_object() || file.value("kind", "") != "presk curve") r.fail("kind", "is not \"presk curve\"");
  if (r.number(file, "format", "") != 1) r.fail("format", "is not 1");
  Curve curve;
  curve.title = r.text(file, "title", "");
  const nlohmann::json& yardstick = r.field(file, "yardstick", "");
  const nlohmann::json& seeds = r.field(yardstick, "seeds", "yardstick.");
  const nlohmann::json& quality = r.field(yardstick, "quality", "yardstick.");
  if (!seeds.is_array() || !quality.is_array() || seeds.size() != quality.size()) {
    r.fail("yardstick", "does not hold two lists of one length, `seeds` and `quality`");
  }
  for (size_t i = 0; i < seeds.size(); ++i) {
    if (!seeds[i].is_number_integer()) r.fail("yardstick.seeds", "holds something other than an integer");
    curve.seeds.push_back(seeds[i].get<int64_t>());
    if (!quality[i].is_number()) r.fail("yardstick.quality", "holds something other than a number");
    curve.yardstick.push_back(quality[i].get<double>());
  }
  const nlohmann::json& points = r.field(file, "points", "");
  if (!points.is_array() || points.empty()) r.fail("points", "is not a list of at least one point");
  for (size_t i = 0; i < points.size(); ++i) {
    curve.points.push_back(read_point(r, points[i], "points[" + std::to_string(i) + "]."));
  }
  return curve;
}

namespace {

constexpr double kPanelWidth = 520, kPanelHeight = 300, kMarginLeft = 60, kMarginTop = 26, kMarginBottom = 40;

std::string colour_of(const CurvePoint& p) { return p.on == "loss" ? "#3b82c4" : "#e8893a"; }

struct Frame {
  double left, right, top, bottom;
};

Frame frame(double x0) { return {x0 + kMarginLeft, x0 + kPanelWidth - 14, kMarginTop, kPanelHeight - kMarginBottom}; }

std::string dot(double x, double y, const std::string& colour, bool filled, const std::string& title) {
  return fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="4.5" fill="{}" stroke="{}" stroke-width="1.5"><title>{}</title></circle>)", x, y,
                     filled ? colour : "white", colour, escape(title));
}

// The line through the points of one kind, in budget order.
std::string polyline(const std::vector<std::pair<double, double>>& xy, const std::string& colour, bool dashed) {
  if (xy.size() < 2) return "";
  std::string points;
  for (const auto& [x, y] : xy) points += fmt::format("{:.1f},{:.1f} ", x, y);
  return fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="1.2"{}/>)", points, colour,
                     dashed ? R"( stroke-dasharray="4 3")" : "");
}

std::string axis_titles(const Frame& f, const std::string& title, const std::string& y_label) {
  return fmt::format(R"(<text x="{:.0f}" y="16" class="panel-title">{}</text>)", f.left, escape(title)) +
         fmt::format(R"(<text x="{:.0f}" y="{:.0f}" class="tick" text-anchor="middle">absolute budget on max |native − exact| (log)</text>)",
                     (f.left + f.right) / 2, f.bottom + 30) +
         fmt::format(R"svg(<text x="{0:.0f}" y="{1:.0f}" class="tick" text-anchor="middle" transform="rotate(-90 {0:.0f} {1:.0f})">{2}</text>)svg",
                     f.left - 44, (f.top + f.bottom) / 2, escape(y_label)) +
         fmt::format(R"(<rect x="{:.0f}" y="{:.0f}" width="{:.0f}" height="{:.0f}" class="frame"/>)", f.left, f.top,
                     f.right - f.left, f.bottom - f.top);
}

std::vector<const CurvePoint*> of_kind(const Curve& curve, const std::string& on) {
  std::vector<const CurvePoint*> out;
  for (const CurvePoint& p : curve.points) {
    if (p.on == on) out.push_back(&p);
  }
  std::sort(out.begin(), out.end(), [](const CurvePoint* a, const CurvePoint* b) { return a->absolute < b->absolute; });
  return out;
}

std::string gap_panel(const Curve& curve, const LogScale& x_of, double x0) {
  const Frame f = frame(x0);
  std::vector<double> ys;
  for (const CurvePoint& p : curve.points) {
    ys.insert(ys.end(), {p.absolute, p.gap_in_sample, p.gap_held_out.value_or(0)});
  }
  const LogScale y_of(ys, f.bottom, f.top);
  std::string out = horizontal_decades(x_of, f.top, f.bottom) + vertical_decades(y_of, f.left, f.right);
  // The budget itself: gap = budget; a point below the line is inside.
  const double lo = std::pow(10.0, std::max(x_of.first_decade(), y_of.first_decade()));
  const double hi = std::pow(10.0, std::min(x_of.last_decade(), y_of.last_decade()));
  out += fmt::format(R"(<line class="budget-line" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", x_of.at(lo), y_of.at(lo),
                     x_of.at(hi), y_of.at(hi));
  for (const char* on : {"loss", "logits"}) {
    std::vector<std::pair<double, double>> in, held;
    for (const CurvePoint* p : of_kind(curve, on)) {
      const double x = x_of.at(p->absolute);
      in.emplace_back(x, y_of.at(p->gap_in_sample));
      out += dot(x, y_of.at(p->gap_in_sample), colour_of(*p), true, p->label + ": in sample " + short_number(p->gap_in_sample));
      if (p->gap_held_out) {
        held.emplace_back(x, y_of.at(*p->gap_held_out));
        out += dot(x, y_of.at(*p->gap_held_out), colour_of(*p), false, p->label + ": held out " + short_number(*p->gap_held_out));
      }
    }
    const std::string colour = std::string(on) == "loss" ? "#3b82c4" : "#e8893a";
    out += polyline(in, colour, false) + polyline(held, colour, true);
  }
  return out + axis_titles(f, "measured gap (● in sample, ○ held out; dashed: gap = budget)",
                           "measured gap (log)");
}

std::string traffic_panel(const Curve& curve, const LogScale& x_of, double x0) {
  const Frame f = frame(x0);
  std::vector<double> ys;
  for (const CurvePoint& p : curve.points) ys.push_back(p.traffic_ratio);
  const double lo = *std::min_element(ys.begin(), ys.end()), hi = *std::max_element(ys.begin(), ys.end());
  // Traffic ratios span less than a decade: a log axis over [lo/1.1, hi·1.1], ticks at round ratios.
  const double y_lo = std::log10(std::min(lo, 1.0) / 1.05), y_hi = std::log10(hi * 1.1);
  auto y_of = [&](double r) { return f.bottom - (std::log10(r) - y_lo) / (y_hi - y_lo) * (f.bottom - f.top); };
  std::string out = horizontal_decades(x_of, f.top, f.bottom);
  for (double r : {1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0}) {
    if (std::log10(r) < y_lo || std::log10(r) > y_hi) continue;
    out += fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}"/>)", f.left, y_of(r), f.right);
    out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{:g}×</text>)", f.left - 4, y_of(r) + 4, r);
  }
  for (const char* on : {"loss", "logits"}) {
    std::vector<std::pair<double, double>> xy;
    for (const CurvePoint* p : of_kind(curve, on)) {
      xy.emplace_back(x_of.at(p->absolute), y_of(p->traffic_ratio));
      out += dot(xy.back().first, xy.back().second, colour_of(*p), true, fmt::format("{}: {:.3f}× less traffic", p->label, p->traffic_ratio));
    }
    out += polyline(xy, std::string(on) == "loss" ? "#3b82c4" : "#e8893a", false);
  }
  return out + axis_titles(f, "traffic ratio, all-f64 ÷ realization (weights counted)", "traffic ratio (log)");
}

std::string quality_panel(const Curve& curve, const LogScale& x_of, double x0) {
  const Frame f = frame(x0);
  std::string out = horizontal_decades(x_of, f.top, f.bottom);
  if (curve.yardstick.empty()) {
    return out + fmt::format(R"(<text x="{:.0f}" y="{:.0f}" class="note">no all-f64 trainings in the curve file</text>)", f.left + 10,
                             f.top + 30) + axis_titles(f, "quality axis", "held-out loss");
  }
  const double base = curve.yardstick.front();
  double lo = *std::min_element(curve.yardstick.begin(), curve.yardstick.end()) - base;
  double hi = *std::max_element(curve.yardstick.begin(), curve.yardstick.end()) - base;
  const double band_lo = lo, band_hi = hi;
  for (const CurvePoint& p : curve.points) {
    if (p.quality) lo = std::min(lo, *p.quality - base), hi = std::max(hi, *p.quality - base);
  }
  const double pad = std::max((hi - lo) * 0.08, 1e-9);
  lo -= pad, hi += pad;
  auto y_of = [&](double d) { return f.bottom - (d - lo) / (hi - lo) * (f.bottom - f.top); };
  out += fmt::format(R"(<rect x="{:.0f}" y="{:.1f}" width="{:.0f}" height="{:.1f}" class="spread"/>)", f.left, y_of(band_hi),
                     f.right - f.left, std::max(y_of(band_lo) - y_of(band_hi), 1.0));
  // Ticks at the multiples of a round step (1, 2 or 5 × 10ⁿ, about four in the range): 0 among them.
  const double raw = (hi - lo) / 4, decade = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = decade * (raw <= decade ? 1 : raw <= 2 * decade ? 2 : raw <= 5 * decade ? 5 : 10);
  for (double d = std::ceil(lo / step) * step; d <= hi; d += step) {
    const double at = std::fabs(d) < step * 1e-9 ? 0.0 : d;
    out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", f.left - 4, y_of(at) + 4,
                       at == 0 ? std::string("0") : fmt::format("{:+.2g}", at));
  }
  out += fmt::format(R"(<line class="budget-line" x1="{0:.0f}" y1="{1:.1f}" x2="{2:.0f}" y2="{1:.1f}"/>)", f.left, y_of(0), f.right);
  for (const char* on : {"loss", "logits"}) {
    std::vector<std::pair<double, double>> xy;
    for (const CurvePoint* p : of_kind(curve, on)) {
      if (!p->quality) continue;
      xy.emplace_back(x_of.at(p->absolute), y_of(*p->quality - base));
      out += dot(xy.back().first, xy.back().second, colour_of(*p), true,
                 fmt::format("{}: held-out loss {:.6f}", p->label, *p->quality));
    }
    out += polyline(xy, std::string(on) == "loss" ? "#3b82c4" : "#e8893a", false);
  }
  return out + axis_titles(f, fmt::format("quality: held-out loss − all-f64 seed {}'s (band: seeds' spread)", curve.seeds.front()),
                           "Δ held-out loss");
}

std::string optional_text(const std::optional<double>& v) { return v ? short_number(*v) : "—"; }

std::string curve_table(const Curve& curve) {
  std::string out = "<table class=\"moves\"><tr><th>budget</th><th>on</th><th>absolute</th><th>traffic vs all-f64</th>"
                    "<th>gap in sample</th><th>gap held out</th><th>inside</th><th>held-out loss</th><th>vs all-f64</th>"
                    "<th>flipped / allowed</th></tr>";
  for (const CurvePoint& p : curve.points) {
    const std::string versus = p.quality && !curve.yardstick.empty() ? fmt::format("{:+.2g}", *p.quality - curve.yardstick.front()) : "—";
    const std::string flips = p.flipped && p.allowed ? fmt::format("{} / {}", *p.flipped, *p.allowed) : "—";
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}×</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                       escape(p.label), p.on, short_number(p.absolute), p.traffic_ratio, short_number(p.gap_in_sample),
                       optional_text(p.gap_held_out), p.inside ? "yes" : "NO", p.quality ? fmt::format("{:.6f}", *p.quality) : "—",
                       versus, flips);
  }
  std::string seeds;
  for (size_t i = 0; i < curve.seeds.size(); ++i) {
    seeds += fmt::format("{}seed {}: {:.6f}", i ? ", " : "", curve.seeds[i], curve.yardstick[i]);
  }
  return out + "</table><p class=\"note\">all-f64 trained from scratch: " + (seeds.empty() ? "none" : seeds) + "</p>";
}

}  // namespace

std::string curve_section(const Curve& curve) {
  std::vector<double> xs;
  for (const CurvePoint& p : curve.points) xs.push_back(p.absolute);
  const LogScale x_first(xs, kMarginLeft, kPanelWidth - 14), x_second(xs, kPanelWidth + kMarginLeft, 2 * kPanelWidth - 14);
  const std::string open = fmt::format(R"(<svg class="curve" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}">)",
                                       2 * kPanelWidth, kPanelHeight);
  return "<section><h2>The ε curve: " + escape(curve.title) + "</h2>" +
         R"(<p class="legend"><span class="swatch" style="background:#3b82c4"></span>budget on the loss <span class="swatch" style="background:#e8893a"></span>budget on the logits (ε* from the margins)</p>)" +
         open + gap_panel(curve, x_first, 0) + traffic_panel(curve, x_second, kPanelWidth) + "</svg>" +
         fmt::format(R"(<div class="side"><svg class="curve" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}">)",
                     kPanelWidth, kPanelHeight) +
         quality_panel(curve, x_first, 0) + "</svg>" + curve_table(curve) + "</div>" + "</section>\n";
}

}  // namespace presk::report
