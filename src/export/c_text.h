// The fixed C99 text of an exported entry (the runtime every generated file starts with) and
// the literal helpers the emitter writes numbers with.
#pragma once

#include <string>

#include "export/c_code.h"

namespace presk::export_c {

// `value` as a C literal that reads back to the same bits: a hexadecimal float ("0x1.8p+1",
// with an `f` suffix when `as_float`, for a value that is a float), INFINITY or NAN forms.
std::string c_real_literal(double value, bool as_float);

// Includes, the FLT_EVAL_METHOD check, the run context (allocations freed together on an
// error), bf16 and integer conversions, Z arithmetic with overflow checks.
std::string c_runtime_prelude();
// The transcendentals, maxNum/minNum, the ordered sums (c_math.cpp), for double and float.
std::string c_math_functions();
// A safetensors reader: a tensor's elements by name, checked against a shape, as doubles or
// int64 (what a parameter or an input is converted from).
std::string c_safetensors_reader();
// The command-line driver's helpers (under PRESK_MAIN): a safetensors writer.
std::string c_safetensors_writer();

// generate.c for a decode entry's API presk_<name>_step: `generate WEIGHTS PROMPT TOKENS` prints
// the prompt and the tokens chosen greedily, as `presk generate` does; it includes <name>.c.
std::string c_generate_text(const std::string& name, Store logits, const std::string& origin);

}  // namespace presk::export_c
