// Before step 0, the token data must fit the program: every token an index of the tables it
// selects rows of (embed) and of the classes it names (cross_entropy), and the data's
// vocabulary the one the starting weights were trained on. Errors E1032, E1033.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/ir.h"
#include "train/token_windows.h"

namespace presk::train {

// The number of distinct tokens the entry can read, and what it is called in the program.
struct TokenBound {
  int64_t size = 0;
  std::string name;   // the const or dim of that axis ("V"), or "" when the axis is unnamed
  std::string where;  // "embed at GPT.apply/%2" or "cross_entropy at loss/%5"
};

// The smallest row count of an embed table and class count of a cross_entropy that the entry's
// token argument (or a Z value computed from it) indexes; nullopt when it indexes neither.
std::optional<TokenBound> token_bound(const ir::Program& program, const std::string& entry);

// E1032 when the file's `vocabulary_size` exceeds the bound, or a token lies outside
// [0, bound): the message names the file (`role`: --data, --val), the window, the position,
// the const and the value of it that would fit.
void check_tokens_fit(const TokenWindows& windows, const std::string& role, const TokenBound& bound);

// E1033 when the weights file at `path` (`role`: --init, --resume) records a `vocabulary` and
// the token file records another: the rows of the embedding would mean other characters.
void check_same_vocabulary(const std::string& path, const std::string& role, const TokenWindows& windows);

}  // namespace presk::train
