// `presk solve --contract C` (docs/chip.md, "Solved"): which products read their activation
// quantized, which caches are kept narrow and which forms each attention takes its operands in,
// decided by the float solve's one proposal loop and one widening loop (greedy.h, verify.h) on the
// chip's own values (chip_offer.h). The proposal ranks by each value's term at each rung: on an
// entry, the first-order s·max|y|·r; on the decode entry, whose envelope has no sensitivities (it
// returns a tuple: no reverse sweep), the measured gap of the decode runs with that value alone
// at that rung. It saves bytes, or with a chip's time profile (numerics/chip_profile.h) predicted
// seconds: each value's rung priced by its work and bytes, the trajectory's least predicted time
// kept and any narrowing predicted slower undone, as the float solve's --profile. The measurement
// runs the chip's program (numerics::chip_program: its quantizes, its caches' keeps and its
// attentions' forms) natively against the exact meaning — on the entry's samples, or on decode
// runs (chip_decode.h) — and the widening steps the value of the largest term back one rung at a
// time until the gap is inside the budget.
#pragma once

#include <nlohmann/json.hpp>

#include "exec/native/realization.h"
#include "numerics/bind.h"
#include "numerics/chip_profile.h"
#include "numerics/scheme/contract.h"
#include "precision/envelope.h"
#include "solve/chip_offer.h"
#include "solve/measurer.h"
#include "solve/record.h"
#include "solve/verify.h"

namespace presk::solve {

// What measures a chip's program against the exact meaning: the entry's samples, or decode runs.
class ChipRuns {
 public:
  virtual ~ChipRuns() = default;
  virtual precision::MeasuredGap measure(const ir::Program& chip, bool held_out) = 0;
  virtual bool has_held_out() const = 0;
};

// The entry's samples: the native run of the chip's program under `realization` against the
// exact meaning's outputs (the plain program's, which `exact` ran once).
class EntryRuns : public ChipRuns {
 public:
  EntryRuns(const ir::Function& entry, const exec::native::Realization& realization,
            const reference::ParameterStore& parameters, Measurer& exact, SampleSet in_sample, SampleSet held_out,
            int threads);
  precision::MeasuredGap measure(const ir::Program& chip, bool held_out) override;
  bool has_held_out() const override { return held_out_.count > 0; }

 private:
  const ir::Function& entry_;
  const exec::native::Realization& realization_;
  const reference::ParameterStore& parameters_;
  Measurer& exact_;
  SampleSet in_sample_, held_out_;
  int threads_;
};

// The chip's measurements: the chip's program of each assignment measured by `runs`, cached by
// assignment.
class ChipMeasurer : public Measurements {
 public:
  ChipMeasurer(const ir::Program& program, const numerics::Contract& contract,
               const exec::native::Realization& realization, ChipRuns& runs);
  precision::MeasuredGap in_sample(const Offer& offer, const Assignment& assignment) override;
  std::optional<precision::MeasuredGap> held_out(const Offer& offer, const Assignment& assignment) override;

 private:
  precision::MeasuredGap measure(const Offer& offer, const Assignment& assignment, bool held_out);

  const ir::Program& program_;
  const numerics::Contract& contract_;
  const exec::native::Realization& realization_;
  ChipRuns& runs_;
  std::map<std::pair<bool, Assignment>, precision::MeasuredGap> cache_;
};

// The in-sample gap with value v alone at step s (every other at its widest), measured.
ChipTerms measured_terms(const Offer& offer, Measurements& measurer, const Progress& progress);

// A chip's time profile on an offer: the predicted seconds per sample of each value at each step
// of its ladder — its int8 and float multiply-accumulates, the values it quantizes, and its bytes
// moved, each at the profile's rate — and of an assignment, their sum.
class ChipPricer {
 public:
  ChipPricer(const ChipOffer& offer, numerics::ChipProfile profile, std::string path)
      : offer_(offer), profile_(std::move(profile)), path_(std::move(path)) {}
  double seconds(int value, int step) const;
  double seconds(const Assignment& assignment) const;
  const numerics::ChipProfile& profile() const { return profile_; }
  const std::string& path() const { return path_; }

 private:
  const ChipOffer& offer_;
  numerics::ChipProfile profile_;
  std::string path_;
};

// The solve: propose by bytes saved per unit of term (with `pricer`, predicted seconds), measure
// and widen, measure held out.
Solution solve_chip(const Offer& offer, const ChipTerms& terms, const Budget& budget, ChipMeasurer& measurer,
                    const Progress& progress, const ChipPricer* pricer = nullptr);

// The solved contract's file: the contract of the final assignment and its `solve` record (the
// fields explain reads, record.h; with `pricer`, each value's predicted seconds).
nlohmann::ordered_json chip_contract_file(const Offer& offer, const ChipTerms& terms, const Solution& solution,
                                          const Budget& budget, const numerics::Contract& contract,
                                          const RecordContext& context, const ChipPricer* pricer = nullptr);

}  // namespace presk::solve
