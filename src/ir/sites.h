// The site table: every let of every function, by its stable name `<Module.fn>/%<n>`, with
// its shape, element count and primitive; and every parameter with its path, shape and
// initializer. What `presk dump --stage sites` prints and what realizations and envelopes key on.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace presk::ir {

struct Site {
  std::string name;       // "LayerNorm.apply/%4"
  std::string function;   // "LayerNorm.apply"
  uint32_t let_index = 0;
  Op op;
  Type type;
  int64_t element_count = 0;
};

std::vector<Site> site_table(const Program& program);
std::string print_site_table(const Program& program);            // a human table
nlohmann::json site_table_json(const Program& program);          // the same as JSON

}  // namespace presk::ir
