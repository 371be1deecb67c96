// `presk explain R.json` (or `presk explain PROGRAM --precision ENV --budget ε …`, which solves
// first): every value of a solve its decision and its reasons, from the moves its record keeps
// (src/solve/explain.h). `--value KEY` (repeatable) explains those alone.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "cli/solve_setup.h"
#include "solve/explain.h"
#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "support/input_file.h"
#include "step/solve_step.h"
#include "support/json_reader.h"

namespace presk::cli {
namespace {

struct ExplainOptions {
  SolveCommandOptions solve;  // solve.run.program: R.json, or a program to solve
  std::vector<std::string> values;
};

nlohmann::json read_realization_file(const std::string& path) {
  const std::string text =
      read_input_file(path, {"realization file", "E1112", "check the path: presk solve --out R.json writes one", kJsonFileLimit});
  return parse_user_json(text, {path, "E1112", "the file is truncated or not a realization; solve again"});
}

bool selected(const ExplainOptions& options, const solve::Explanation& e) {
  if (options.values.empty()) return true;
  for (const std::string& value : options.values) {
    if (value == e.key) return true;
  }
  return false;
}

void print_text(const solve::Record& record, const std::vector<solve::Explanation>& explanations,
                const ExplainOptions& options, const std::string& origin) {
  std::cout << fmt::format("presk explain: {} — `{}` of {}, budget {:g} {} ({:.3e}); estimate {:.3e} against {:.3e}\n",
                           origin, record.entry, record.program, record.epsilon, record.budget_kind, record.budget,
                           record.estimate, record.target);
  for (const solve::Explanation& e : explanations) {
    if (!selected(options, e)) continue;
    std::cout << fmt::format("{} {} ({}): {}\n", e.kind, e.key, e.op, e.decision);
    for (const std::string& reason : e.reasons) std::cout << "    " << reason << '\n';
  }
}

void print_json(const std::vector<solve::Explanation>& explanations, const ExplainOptions& options) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const solve::Explanation& e : explanations) {
    if (!selected(options, e)) continue;
    out.push_back({{"kind", e.kind}, {"key", e.key}, {"op", e.op}, {"type", e.final_type},
                   {"decision", e.decision}, {"reasons", e.reasons}, {"moves", e.moves}});
  }
  std::cout << out.dump(2) << '\n';
}

int run_explain(ExplainOptions& options, GlobalOptions& global) {
  nlohmann::json file;
  std::string origin = options.solve.run.program;
  if (!options.solve.run.envelope.empty()) {  // a program: solve first
    check_solve_outputs(options.solve);
    const bool json = global.json;
    SolveRun run = run_solve(options.solve, global);
    global.json = json;
    file = nlohmann::json::parse(run.file.dump());
    if (!options.solve.out.empty()) write_file_atomically(options.solve.out, run.file.dump(1) + "\n");
    origin = "the solve of " + origin;
  } else {
    file = read_realization_file(origin);
  }
  if (file.is_object() && file.contains("solve") && file["solve"].is_object() && file["solve"].value("mode", "") == "step") {
    const std::vector<std::string> lines = step::explain_step_solution(file, origin);  // a training step's solve
    if (global.json) std::cout << nlohmann::json(lines).dump(2) << "\n";
    else for (const std::string& line : lines) std::cout << line << "\n";
    return 0;
  }
  for (const std::string& value : options.values) {
    bool known = false;
    for (const auto& v : file["solve"]["values"]) known |= v.value("key", "") == value;
    if (!known && file.contains("solve")) {
      user_error("E1114").hint("the record's values are the sites and parameter paths `presk explain R.json` lists")
          << "--value `" << text_excerpt(value) << "` names no value of the solve";
    }
  }
  const solve::Record record = solve::parse_record(file, origin);
  const std::vector<solve::Explanation> explanations = solve::explain(record);
  if (global.json) print_json(explanations, options);
  else print_text(record, explanations, options, origin);
  return 0;
}

Registration registration("explain", 37, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<ExplainOptions>();
  CLI::App* command = app.add_subcommand("explain", "Each decision of a solve and its reason (R.json, or a program to solve)");
  command->add_option("input", options->solve.run.program,
                      "A realization written by presk solve, or a program (with --precision and a budget: solves first)")
      ->required();
  command->add_option("--value", options->values, "Explain these sites or parameter paths alone (repeatable)");
  command->add_option("--precision", options->solve.run.envelope, "With a program: the envelope to solve on");
  command->add_option("--entry", options->solve.run.entry, "With a program: the entry (default: the envelope's)");
  add_binding_options(*command, options->solve.run.bindings);
  command->add_option("--weights", options->solve.run.weights, "With a program: the parameters (default: the envelope's)");
  command->add_option("--data", options->solve.run.data, "With a program: the data file (default: the envelope's)");
  command->add_option("--budget", options->solve.budget, "With a program: the relative budget");
  command->add_option("--budget-abs", options->solve.budget_abs, "With a program: the absolute budget");
  command->add_option("--out", options->solve.out, "With a program: also write the realization here");
  command->add_flag("--no-exact-cache", options->solve.no_exact_cache,
                    "With a program: run the exact reference even when the envelope's cache holds its outputs");
  command->add_flag("--quiet", options->solve.quiet, "No progress on stderr");
  add_threads_option(*command, global);
  add_json_option(*command, global);
  return [options, &global] { return run_explain(*options, global); };
});

}  // namespace
}  // namespace presk::cli
