// Running Debian's `gappa` on a script (gappa_script.h) and reading back what it proved: the
// largest upper end of the goals' enclosures, rounded up to binary64 — or why there is none.
#pragma once

#include <string>

namespace presk::proof {

enum class Outcome { proved, not_proved, contradictory, timed_out };
const char* outcome_name(Outcome outcome);  // "proved", "not proved", …

struct GappaResult {
  Outcome outcome = Outcome::not_proved;
  double bound = 0;        // proved: the largest proved |rounded − exact| over the goals
  int goals = 0;           // enclosures read back
  double seconds = 0;      // Gappa's wall time
  double cpu_seconds = 0;  // Gappa's CPU time (user and system)
  std::string message;     // not proved: Gappa's own words (its first lines)
};

// Runs `gappa FILE` with a limit of `timeout_seconds` of Gappa's CPU time (SIGXCPU past it:
// timed_out; a run still unfinished after 20× that on the wall clock is killed, timed_out too). No
// `gappa` on the PATH is E1602. `goals` is how many enclosures the script asks for: fewer read back
// is not proved.
GappaResult run_gappa(const std::string& script_path, int goals, double timeout_seconds);

// Reads Gappa's output: "anything can be proved" (contradictory hypotheses) and "Error:" lines
// are not a bound; otherwise each `|…| in [lo, hi]` line's hi, exact ("5b-3", "7"), rounded up.
GappaResult read_gappa_output(const std::string& output, int exit_status, int goals);

}  // namespace presk::proof
