// The program the solve typed, each line with the values it writes and their types (sections.h):
// the type map's cells link here, so a reader goes from a decision to the code it types.
#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "report/sections.h"
#include "report/svg.h"
#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/sha256.h"

namespace presk::report {
namespace {

std::string annotation(const solve::RecordValue& v) {
  return fmt::format(R"(<span class="let-type" data-key="{0}"><span class="swatch" style="background:{1}"></span>{0} : {2} → {3}</span>)",
                     escape(v.key), type_colour(v.final_type), escape(v.type), escape(v.final_type));
}

}  // namespace

ProgramText find_program_text(const solve::Record& record, const std::string& origin) {
  ProgramText out;
  const nlohmann::json& s = record.raw;
  const std::string want = s.contains("program_sha256") && s["program_sha256"].is_string() ? s["program_sha256"].get<std::string>() : "";
  if (want.empty()) {
    out.note = "the solve's record names no program_sha256 (an older presk wrote it): solve again to see its text here";
    return out;
  }
  // The program's path as the solve was given it: from where presk report runs, then beside
  // the realization file.
  std::vector<std::filesystem::path> candidates = {record.program};
  const std::filesystem::path beside = std::filesystem::path(origin).parent_path() / record.program;
  if (std::filesystem::path(record.program).is_relative() && !std::filesystem::path(origin).parent_path().empty()) {
    candidates.push_back(beside);
  }
  for (const std::filesystem::path& path : candidates) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) continue;
    std::string text;
    try {
      text = read_input_file(path.string(), {"source file", "E0003", "check the path and that the file is readable", kProgramFileLimit});
    } catch (const UserError&) {
      continue;
    }
    if (sha256_hex(text) != want) {
      out.note = fmt::format("{} has changed since the solve (its SHA-256 is not the record's {}…): solve again to see its text here",
                             path.string(), want.substr(0, 12));
      continue;
    }
    out.path = path.string();
    out.text = std::move(text);
    out.shown = true;
    return out;
  }
  if (out.note.empty()) out.note = "the program " + record.program + " is not found from here nor beside the realization";
  return out;
}

std::string program_section(const solve::Record& record, const ProgramText& program) {
  std::string out = "<section><h2>The program, each line with the values it writes and their types</h2>\n";
  if (!program.shown) return out + "<p class=\"note missing-program\">Not shown: " + escape(program.note) + ".</p></section>\n";
  std::map<int, std::vector<const solve::RecordValue*>> on_line;
  for (const solve::RecordValue& v : record.values) {
    if (v.line > 0) on_line[v.line].push_back(&v);
  }
  out += fmt::format("<p class=\"note\">{} as solved (SHA-256 checked); a cell of the type map links to its line. A parameter "
                     "is shown where it is first read.</p>\n<pre class=\"program\">",
                     escape(program.path));
  int line = 1;
  size_t begin = 0;
  while (begin <= program.text.size()) {
    size_t end = program.text.find('\n', begin);
    if (end == std::string::npos) end = program.text.size();
    if (begin == end && end == program.text.size()) break;  // no empty line after a final newline
    out += fmt::format(R"(<span class="line" id="line-{0}"><span class="ln">{0}</span>{1})", line,
                       escape(std::string_view(program.text).substr(begin, end - begin)));
    if (const auto found = on_line.find(line); found != on_line.end()) {
      out += "<span class=\"types\">";
      for (const solve::RecordValue* v : found->second) out += annotation(*v);
      out += "</span>";
    }
    out += "</span>";  // each line a block: no newline between them (pre would show it)
    begin = end + 1;
    ++line;
  }
  return out + "</pre></section>\n";
}

}  // namespace presk::report
