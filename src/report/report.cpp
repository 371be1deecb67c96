// The report's page (report.h): the sections in order, the style inline, the files read and
// the page written atomically.
#include "report/report.h"

#include <fmt/format.h>

#include "report/sections.h"
#include "report/svg.h"
#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/json_reader.h"

namespace presk::report {
namespace {

constexpr const char* kStyle = R"(
body { font: 13px/1.4 "DejaVu Sans", sans-serif; color: #222; margin: 16px 24px; max-width: 1180px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 22px 0 6px; border-bottom: 1px solid #ccc; }
h3 { font-size: 14px; margin: 14px 0 4px; }
table { border-collapse: collapse; } th, td { padding: 2px 8px; text-align: left; vertical-align: top; }
table.summary th { font-weight: normal; color: #555; } table.moves { font-size: 12px; }
table.moves tr:nth-child(even) { background: #f4f6f8; } td.key { font-family: "DejaVu Sans Mono", monospace; }
.side { display: flex; gap: 24px; align-items: flex-start; flex-wrap: wrap; }
.swatch { display: inline-block; width: 11px; height: 11px; margin: 0 3px 0 10px; vertical-align: -1px; border-radius: 2px; }
.not-offered-swatch { border: 1.5px dashed #333; background: #fff; }
svg text { font-family: "DejaVu Sans", sans-serif; }
.row-label { font-size: 12px; font-weight: bold; fill: #333; }
.cell-name { font-size: 11px; fill: #fff; font-weight: bold; } .cell-bytes { font-size: 10px; fill: #fff; }
rect.not-offered { stroke: #222; stroke-width: 1.5; stroke-dasharray: 3 2; }
.value-name { font-size: 10.5px; fill: #333; } .value-text { font-size: 10px; fill: #333; } .on-bar { fill: #fff; }
.tick { font-size: 10px; fill: #555; } .panel-title { font-size: 12px; font-weight: bold; fill: #333; }
.note { font-size: 10.5px; fill: #777; color: #777; } line.grid { stroke: #e3e3e3; }
line.target, line.budget-line { stroke: #c0392b; stroke-width: 1.3; stroke-dasharray: 5 3; }
rect.frame { fill: none; stroke: #999; } rect.spread { fill: #f3d9a8; opacity: 0.7; }
pre.program { font: 12px/1.45 "DejaVu Sans Mono", monospace; background: #fafbfc; border: 1px solid #ddd; padding: 6px 0; overflow-x: auto; }
pre.program .line { display: block; padding: 0 8px; } pre.program .line:target { background: #fff3c4; }
pre.program .ln { display: inline-block; width: 3.5em; color: #999; user-select: none; }
pre.program .types { display: block; margin-left: 4.5em; color: #555; font-size: 11px; white-space: normal; } .let-type { margin-right: 10px; white-space: nowrap; }
)";

double number_of(const nlohmann::json& value, const std::string& origin, const std::string& field) {
  if (value.is_number()) return value.get<double>();
  if (value == "inf") return INFINITY;
  if (value == "nan") return NAN;
  user_error("E1174").hint("solve again: presk solve … --out R.json writes the fields the report reads")
      << origin << ": the solve record's field `" << field << "` is missing or not a number";
  std::abort();
}

const nlohmann::json& at(const nlohmann::json& object, const std::vector<std::string>& path, const std::string& origin) {
  const nlohmann::json* node = &object;
  std::string field = "solve";
  for (const std::string& name : path) {
    field += "." + name;
    if (!node->is_object() || !node->contains(name)) {
      user_error("E1174").hint("solve again: presk solve … --out R.json writes the fields the report reads")
          << origin << ": the solve record has no field `" << field << "`";
    }
    node = &(*node)[name];
  }
  return *node;
}

Summary read_summary(const nlohmann::json& s, const std::string& origin) {
  auto number = [&](const std::vector<std::string>& path) {
    std::string field = "solve";
    for (const std::string& p : path) field += "." + p;
    return number_of(at(s, path, origin), origin, field);
  };
  Summary out;
  out.all_f64_bytes = number({"traffic", "all_f64"});
  out.bytes = number({"traffic", "realization"});
  out.ratio = number({"traffic", "ratio"});
  out.gap_in_sample = number({"gap", "in_sample", "absolute"});
  if (!at(s, {"gap", "held_out"}, origin).is_null()) out.gap_held_out = number({"gap", "held_out", "absolute"});
  out.held_out_samples = static_cast<int64_t>(number({"gap", "held_out_samples"}));
  out.rounds = static_cast<int64_t>(number({"rounds"}));
  out.measurements = static_cast<int64_t>(number({"measurements"}));
  out.inside = at(s, {"inside"}, origin) == true;
  const nlohmann::json& menu = at(s, {"options", "menu"}, origin);
  out.menu = menu.is_string() ? menu.get<std::string>() : json_excerpt(menu);
  const nlohmann::json& source = at(s, {"budget", "source"}, origin);
  out.budget_source = source.is_string() ? source.get<std::string>() : json_excerpt(source);
  return out;
}

nlohmann::json read_json(const std::string& path, const char* what, const char* code, const char* hint) {
  const std::string text = read_input_file(path, {what, code, hint, kJsonFileLimit});
  return parse_user_json(text, {path, code, hint});
}

std::string header(const solve::Record& record, const std::string& origin) {
  const nlohmann::json& s = record.raw;
  return fmt::format("<h1>presk report: {}</h1><p class=\"note\"><code>{}</code> of {} (program hash {}), envelope {} — the solve's "
                     "record as presk solve wrote it; every number below is read from it.</p>\n",
                     escape(origin), escape(record.entry), escape(record.program),
                     escape(s.value("program_hash", std::string("?")).substr(0, 16)),
                     escape(s.contains("envelope") && s["envelope"].is_object() ? s["envelope"].value("path", std::string("?")) : "?"));
}

}  // namespace

std::string report_html(const solve::Record& record, const std::string& origin, const Curve* curve) {
  const Summary summary = read_summary(record.raw, origin);
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>presk report: " + escape(origin) +
                     "</title><style>" + kStyle + "</style></head><body>\n";
  page += header(record, origin);
  page += budget_section(record, summary);
  if (curve) page += curve_section(*curve);
  const ProgramText program = find_program_text(record, origin);
  page += type_map_section(record, program.shown);
  page += value_scales_section(record);
  page += moves_section(record);
  page += program_section(record, program);
  return page + "</body></html>\n";
}

void write_report(const nlohmann::json& file, const std::string& origin, const std::string& curve_path,
                  const std::string& out) {
  if (!file.is_object() || !file.contains("solve")) {
    user_error("E1170").hint("presk report reads the realization presk solve --out R.json wrote (it keeps the `solve` record)")
        << origin << " has no `solve` record: it is not a solve's realization";
  }
  const solve::Record record = solve::parse_record(file, origin);
  std::optional<Curve> curve;
  if (!curve_path.empty()) {
    curve = parse_curve(read_json(curve_path, "curve file", "E1172", "pass the curve.json scripts/experiment-curve writes"),
                        curve_path);
  }
  const std::string page = report_html(record, origin, curve ? &*curve : nullptr);
  write_file_atomically(out, page);
}

void write_report(const std::string& realization, const std::string& curve, const std::string& out) {
  write_report(read_json(realization, "realization file", "E1171", "check the path: presk solve --out R.json writes one"),
               realization, curve, out);
}

}  // namespace presk::report
