// The budget section and explain's moves (sections.h).
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "report/sections.h"
#include "report/svg.h"
#include "solve/explain.h"

namespace presk::report {
namespace {

// A summary row whose value a test reads back: the exact number in data-value.
std::string row(const std::string& field, const std::string& label, double value, const std::string& text) {
  return fmt::format(R"(<tr><th>{}</th><td data-field="{}" data-value="{}">{}</td></tr>)", label, field,
                     exact_number(value), text);
}

// A --profile solve's predicted times (the record's `predicted`), in ms per sample: a prediction
// for the machine the profile measured, not a measurement.
std::string predicted_rows(const solve::Record& r) {
  if (!r.raw.contains("predicted") || !r.raw["predicted"].is_object()) return "";
  const nlohmann::json& p = r.raw["predicted"];
  std::string out;
  const double all_f64 = p.value("all_f64_seconds", 0.0);
  for (const auto& [field, label] : {std::pair<const char*, const char*>{"all_f64_seconds", "predicted all-f64"},
                                     {"realization_seconds", "predicted, this realization"},
                                     {"all_f32_seconds", "predicted all-f32"},
                                     {"floor_seconds", "predicted floor (every offered value narrowest)"}}) {
    if (!p.contains(field) || !p[field].is_number()) continue;
    const double seconds = p[field].get<double>();
    out += row(std::string("predicted_") + field, label, seconds,
               fmt::format("{:.3f} ms per sample ({:.2f}× all-f64; profile of {}, a prediction, not a measurement)",
                           1e3 * seconds, seconds > 0 ? all_f64 / seconds : 0.0, escape(p.value("cpu", std::string("?")))));
  }
  return out;
}

// --certify's record (the record's `reference`): the exact reference's own distance to the
// denotation, proven by Arb balls on some of the samples.
std::string reference_row(const solve::Record& r) {
  if (!r.raw.contains("reference") || !r.raw["reference"].is_object()) {
    return R"(<tr><th>reference's own gap (δ_p)</th><td data-field="reference_radius" data-value="none">not certified</td></tr>)";
  }
  const nlohmann::json& c = r.raw["reference"];
  const double radius = c.contains("radius") && c["radius"].is_number() ? c["radius"].get<double>()
                                                                        : std::numeric_limits<double>::infinity();
  return row("reference_radius", "reference's own gap (δ_p)", radius,
             fmt::format("≤ {}, proven (Arb balls at {} bits on {} of {} samples){}", short_number(radius),
                         c.value("bits", 0), c.value("samples_certified", 0), c.value("samples", 0),
                         c.value("certified", false) ? "" : ": the gap is not 1000× it, so it is not read as a value"));
}

std::string summary_table(const solve::Record& r, const Summary& s) {
  std::string out = R"(<table class="summary">)";
  out += row("budget", "budget", r.budget,
             fmt::format("{} ({} {}, {}): on max |native − exact|", short_number(r.budget), short_number(r.epsilon),
                         escape(r.budget_kind), escape(s.budget_source)));
  out += row("target", "target of the estimate", r.target, short_number(r.target));
  out += row("estimate", "estimate (first order)", r.estimate,
             fmt::format("{} ({:.0f} % of the target)", short_number(r.estimate), r.target > 0 ? 100 * r.estimate / r.target : 0.0));
  out += row("gap_in_sample", "measured gap, in sample", s.gap_in_sample,
             fmt::format("{}: {}", short_number(s.gap_in_sample), s.inside ? "inside the budget" : "OUTSIDE the budget"));
  if (s.gap_held_out) {
    out += row("gap_held_out", "measured gap, held out", *s.gap_held_out,
               fmt::format("{} ({} samples after the envelope's){}", short_number(*s.gap_held_out), s.held_out_samples,
                           *s.gap_held_out > r.budget ? ": ABOVE the budget" : ""));
  } else {
    out += R"(<tr><th>measured gap, held out</th><td data-field="gap_held_out" data-value="none">nothing held out</td></tr>)";
  }
  out += reference_row(r);
  out += row("traffic_ratio", "traffic", s.ratio,
             fmt::format("{:.3f}× less than all-f64: {} against {}", s.ratio, bytes_text(s.bytes), bytes_text(s.all_f64_bytes)));
  out += row("traffic_all_f64", "traffic all-f64 (bytes)", s.all_f64_bytes, short_number(s.all_f64_bytes));
  out += row("traffic_realization", "traffic of the realization (bytes)", s.bytes, short_number(s.bytes));
  out += row("rounds", "widening rounds", static_cast<double>(s.rounds), std::to_string(s.rounds));
  out += row("measurements", "measurements in sample", static_cast<double>(s.measurements), std::to_string(s.measurements));
  out += predicted_rows(r);
  out += fmt::format("<tr><th>menu</th><td>{}</td></tr></table>", escape(s.menu));
  return out;
}

}  // namespace

std::string budget_section(const solve::Record& r, const Summary& s) {
  struct Bar {
    std::string label;
    std::optional<double> value;
    std::string colour;
  };
  const std::vector<Bar> bars = {{"budget", r.budget, "#444"},
                                 {"target", r.target, "#777"},
                                 {"estimate", r.estimate, "#b58900"},
                                 {"gap in sample", s.gap_in_sample, "#2a9d8f"},
                                 {"gap held out", s.gap_held_out, "#7fb8b0"}};
  std::vector<double> values;
  for (const Bar& b : bars) {
    if (b.value) values.push_back(*b.value);
  }
  const double left = 120, right = 760, top = 6;
  const LogScale scale(values, left, right);
  std::string body = horizontal_decades(scale, top, top + 22.0 * bars.size());
  double y = top;
  for (const Bar& b : bars) {
    body += fmt::format(R"(<text x="{:.0f}" y="{:.0f}" class="value-name" text-anchor="end">{}</text>)", left - 6, y + 14, b.label);
    if (b.value && scale.valid(*b.value)) {
      const double x = scale.at(*b.value);
      body += fmt::format(R"(<rect x="{:.0f}" y="{:.0f}" width="{:.1f}" height="14" fill="{}"/>)", left, y + 3,
                          std::max(x - left, 1.0), b.colour);
      body += fmt::format(R"(<text x="{:.1f}" y="{:.0f}" class="value-text">{}</text>)", x + 4, y + 14, short_number(*b.value));
    } else {
      body += fmt::format(R"(<text x="{:.0f}" y="{:.0f}" class="note">{}</text>)", left + 2, y + 14,
                          b.value ? exact_number(*b.value) : "nothing held out");
    }
    y += 22;
  }
  return "<section><h2>The estimate against the budget, and the measured gaps</h2><div class=\"side\">" +
         summary_table(r, s) +
         fmt::format(R"(<svg class="budget" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}">)", right + 60, y + 20) +
         body + "</svg></div></section>\n";
}

std::string moves_section(const solve::Record& record) {
  std::string out = "<section><h2>explain: each value's decision and its reasons</h2><table class=\"moves\">"
                    "<tr><th>value</th><th>op</th><th>type</th><th>decision</th><th>reasons (moves)</th></tr>";
  for (const solve::Explanation& e : solve::explain(record)) {
    std::string reasons;
    for (size_t i = 0; i < e.reasons.size(); ++i) reasons += (i ? "<br>" : "") + escape(e.reasons[i]);
    out += fmt::format(R"(<tr><td class="key">{}</td><td>{}</td><td><span class="swatch" style="background:{}"></span>{}</td><td>{}</td><td>{}</td></tr>)",
                       escape(e.key), escape(e.op), type_colour(e.final_type), escape(e.final_type), escape(e.decision),
                       reasons);
  }
  out += "</table><h3>The moves, in order</h3><table class=\"moves\"><tr><th>#</th><th>move</th><th>value</th>"
         "<th>from → to</th><th>saves (B)</th><th>term</th><th>estimate</th><th>gap</th></tr>";
  int n = 0;
  for (const solve::RecordMove& m : record.moves) {
    ++n;
    const std::string key = m.value >= 0 ? record.values[m.value].key : "";
    out += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"key\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                       n, escape(m.kind), escape(key), m.value >= 0 ? escape(m.from + " → " + m.to) : "",
                       m.saves ? short_number(m.saves) : "", m.term ? short_number(m.term) : "",
                       m.estimate ? short_number(m.estimate) : "", m.gap ? short_number(m.gap) : "");
  }
  return out + "</table></section>\n";
}

}  // namespace presk::report
