// `presk report R.json [--curve curve.json] --out F.html`: one self-contained HTML page of a
// solve (src/report, docs/precision.md "report"), written atomically.
#include <iostream>

#include "cli/command.h"
#include "report/report.h"
#include "support/atomic_file.h"

namespace presk::cli {
namespace {

struct ReportOptions {
  std::string realization, curve, out;
};

int run_report(const ReportOptions& options) {
  std::vector<CommandFile> inputs = {{"the realization", options.realization}};
  if (!options.curve.empty()) inputs.push_back({"--curve", options.curve});
  check_output_files({{"--out", options.out}}, inputs);
  report::write_report(options.realization, options.curve, options.out);
  std::cout << "presk report: wrote " << options.out << '\n';
  return 0;
}

Registration registration("report", 39, [](CLI::App& app, GlobalOptions&) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* command = app.add_subcommand("report", "One self-contained HTML page of a solve (and of the ε curve)");
  command->add_option("realization", options->realization, "A realization written by presk solve --out R.json")->required();
  command->add_option("--curve", options->curve, "The ε curve's JSON (scripts/experiment-curve writes docs/experiments/curve.json)");
  command->add_option("--out", options->out, "The HTML file to write")->required();
  command->footer(
      "The page: the estimate against the budget and the measured gaps, the realization as a type map of the program "
      "(one row per function or module path, one cell per value, colour = type, width and label = bytes), each value's "
      "sensitivity and term on log scales, and explain's decisions and moves; with --curve, the ε curve. Inline CSS and "
      "SVG only: no network, no script. docs/precision.md, \"report\".");
  return [options] { return run_report(*options); };
});

}  // namespace
}  // namespace presk::cli
