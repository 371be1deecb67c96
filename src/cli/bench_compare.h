// What `presk bench` does beside timing one realization: `--calibrate` (measure this machine,
// src/profile) and `--vs` (time several realizations in alternation, with the profile's
// predicted ratios beside the measured ones).
#pragma once

#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/pipeline.h"

namespace presk::cli {

// `presk bench --calibrate [--out PROFILE.json]`: fits and prints the profile; writes it when --out.
int run_calibrate(const std::string& out, int runs, const GlobalOptions& global);

struct CompareOptions {
  RunInputOptions input;
  std::vector<std::string> realizations;  // the first is the one ratios are taken to
  int runs = 10;                          // per realization per round; the round's median is kept
  int rounds = 5;
  bool scalar = false;
  std::string machine;    // --machine PROFILE.json: predict each one's time
  std::string precision;  // --precision ENVELOPE: the sites, elements and weights the prediction prices
};

// Times each realization for `runs` runs, in turn, `rounds` times; prints each one's median over
// the rounds' medians, their range, and its time over the first's, measured and predicted.
int run_compare(const CompareOptions& options, const GlobalOptions& global);

}  // namespace presk::cli
