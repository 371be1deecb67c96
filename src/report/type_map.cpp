// The type map and the value scales of the report (sections.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report/sections.h"
#include "report/svg.h"

namespace presk::report {
namespace {

constexpr double kWidth = 1100, kLabelWidth = 200, kCellHeight = 34, kRowGap = 6;

// The row of a value: its function ("GPT.apply"), or its parameter's first path component
// ("parameters: blocks"; the top-level tensors share "parameters").
std::string row_of(const solve::RecordValue& v) {
  if (v.kind == "site") return v.key.substr(0, v.key.find('/'));
  const size_t dot = v.key.find('.');
  return dot == std::string::npos ? "parameters" : "parameters: " + v.key.substr(0, dot);
}

// The cell's own name: "%4", or the parameter's path below its row ("attn.wq.w").
std::string short_name(const solve::RecordValue& v) {
  const size_t cut = v.kind == "site" ? v.key.find('/') : v.key.find('.');
  return cut == std::string::npos ? v.key : v.key.substr(cut + 1);
}

// Wider cells for more bytes: 44 px for a byte, +12 px a decade; never narrower than the name.
double cell_width(const solve::RecordValue& v) {
  const double by_bytes = std::round(44 + 12 * std::log10(std::max(v.bytes, 1.0)));
  return std::max(by_bytes, std::round(10 + 7.0 * static_cast<double>(short_name(v).size())));
}

std::string cell(const solve::RecordValue& v, double x, double y, bool link_line) {
  const double w = cell_width(v) - 3;
  const bool offered = v.offered == "offered";
  const bool linked = link_line && v.line > 0;
  std::string out = linked ? fmt::format(R"(<a href="#line-{}">)", v.line) : "";
  out += fmt::format(
      R"(<g class="cell" data-key="{}" data-kind="{}" data-final="{}" data-bytes="{}" data-offered="{}">)",
      escape(v.key), v.kind, escape(v.final_type), exact_number(v.bytes), escape(v.offered));
  out += fmt::format(R"(<rect x="{:.0f}" y="{:.0f}" width="{:.0f}" height="{:.0f}" rx="3" fill="{}"{}/>)", x, y, w,
                     kCellHeight, type_colour(v.final_type), offered ? "" : R"( class="not-offered")");
  out += fmt::format(R"(<text x="{:.0f}" y="{:.0f}" class="cell-name">{}</text>)", x + 4, y + 14,
                     escape(short_name(v)));
  out += fmt::format(R"(<text x="{:.0f}" y="{:.0f}" class="cell-bytes">{}</text>)", x + 4, y + 27,
                     escape(bytes_text(v.bytes)));
  out += fmt::format("<title>{} ({}, {}): {}, {} elements, {}; {}</title></g>", escape(v.key), escape(v.op),
                     escape(v.type), escape(v.final_type), v.elements, escape(bytes_text(v.bytes)),
                     escape(v.offered));
  return linked ? out + "</a>" : out;
}

std::string legend(const solve::Record& record) {
  std::set<std::string> types;
  for (const solve::RecordValue& v : record.values) types.insert(v.final_type);
  std::string out = R"(<p class="legend">)";
  for (const std::string& t : types) {
    out += fmt::format(R"(<span class="swatch" style="background:{}"></span>{} )", type_colour(t), escape(t));
  }
  return out + R"(<span class="swatch not-offered-swatch"></span>not offered (rules 1 and 2, or an unknown sensitivity); a cell's width grows with its bytes</p>)";
}

}  // namespace

std::string type_map_section(const solve::Record& record, bool link_lines) {
  std::vector<std::string> rows;  // in the record's order of first appearance
  std::map<std::string, std::vector<const solve::RecordValue*>> members;
  for (const solve::RecordValue& v : record.values) {
    const std::string row = row_of(v);
    if (!members.count(row)) rows.push_back(row);
    members[row].push_back(&v);
  }
  std::stable_partition(rows.begin(), rows.end(), [](const std::string& r) { return r.rfind("parameters", 0) != 0; });
  std::string body;
  double y = 4;
  for (const std::string& row : rows) {
    body += fmt::format(R"(<text x="0" y="{:.0f}" class="row-label">{}</text>)", y + 21, escape(row));
    double x = kLabelWidth;
    for (const solve::RecordValue* v : members[row]) {
      if (x + cell_width(*v) > kWidth && x > kLabelWidth) {
        x = kLabelWidth;
        y += kCellHeight + 3;
      }
      body += cell(*v, x, y, link_lines);
      x += cell_width(*v);
    }
    y += kCellHeight + kRowGap;
  }
  return "<section><h2>The realization, a type map of the program</h2>" + legend(record) +
         fmt::format(R"(<svg class="type-map" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}">)", kWidth, y) +
         body + "</svg></section>\n";
}

namespace {

constexpr double kRow = 15, kNameWidth = 250, kPanel = 400, kPanelGap = 30, kTop = 22;

std::string bar(const LogScale& scale, std::optional<double> value, double y, const std::string& colour) {
  if (!value) return fmt::format(R"(<text x="{:.0f}" y="{:.0f}" class="note">unknown</text>)", scale.left() + 2, y + 11);
  if (!scale.valid(*value)) {
    return fmt::format(R"(<text x="{:.0f}" y="{:.0f}" class="note">{}</text>)", scale.left() + 2, y + 11,
                       exact_number(*value));
  }
  const double x = scale.at(*value);
  const bool inside = x + 52 > scale.right();  // no room right of the bar: the number inside its end
  return fmt::format(R"(<rect x="{:.1f}" y="{:.0f}" width="{:.1f}" height="{:.0f}" fill="{}"/>)", scale.left(), y + 2,
                     std::max(x - scale.left(), 1.0), kRow - 4, colour) +
         fmt::format(R"(<text x="{:.1f}" y="{:.0f}" class="value-text{}"{}>{}</text>)", inside ? x - 3 : x + 3, y + 11,
                     inside ? " on-bar" : "", inside ? R"( text-anchor="end")" : "", short_number(*value));
}

}  // namespace

std::string value_scales_section(const solve::Record& record) {
  std::vector<double> sensitivities, terms = {record.target};
  for (const solve::RecordValue& v : record.values) {
    if (v.sensitivity) sensitivities.push_back(*v.sensitivity);
    terms.push_back(v.term);
  }
  const double left1 = kNameWidth, left2 = kNameWidth + kPanel + kPanelGap;
  const LogScale sensitivity(sensitivities, left1, left1 + kPanel), term(terms, left2, left2 + kPanel);
  const double bottom = kTop + kRow * static_cast<double>(record.values.size());
  std::string body = fmt::format(R"(<text x="{:.0f}" y="12" class="panel-title">sensitivity ‖∂L/∂v‖₁</text>)", left1) +
                     fmt::format(R"(<text x="{:.0f}" y="12" class="panel-title">term in the estimate (target dashed)</text>)", left2) +
                     horizontal_decades(sensitivity, kTop, bottom) + horizontal_decades(term, kTop, bottom);
  double y = kTop;
  for (const solve::RecordValue& v : record.values) {
    body += fmt::format(R"(<g class="value-row" data-key="{}" data-sensitivity="{}" data-term="{}">)", escape(v.key),
                        v.sensitivity ? exact_number(*v.sensitivity) : "unknown", exact_number(v.term));
    body += fmt::format(R"(<text x="{:.0f}" y="{:.0f}" class="value-name" text-anchor="end">{} · {}</text>)", left1 - 6,
                        y + 11, escape(v.key), escape(v.final_type));
    body += bar(sensitivity, v.sensitivity, y, "#5b7fa6") + bar(term, v.term, y, type_colour(v.final_type)) + "</g>";
    y += kRow;
  }
  const double x = term.at(record.target);
  body += fmt::format(R"(<line class="target" x1="{0:.1f}" y1="{1:.0f}" x2="{0:.1f}" y2="{2:.0f}"/>)", x, kTop - 4, bottom);
  const double width = left2 + kPanel + 10, height = bottom + 20;
  return "<section><h2>Each value's sensitivity and term (log scales)</h2>" +
         fmt::format(R"(<svg class="value-scales" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}">)", width,
                     height) +
         body + "</svg></section>\n";
}

}  // namespace presk::report
