// A contract file (docs/chip.md, "The file"): JSON, `"format": 1`, every field checked on read
// with a coded error that names the field (E1700–E1709); what needs the program (a site, a
// block against a row, a keep on a cache) is checked by bind_contract (bind.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "numerics/scheme/contract.h"

namespace presk::numerics {

// The contract a JSON object states; `origin` names it in messages.
Contract parse_contract(const nlohmann::json& json, const std::string& origin);

// The contract a file's bytes hold: strict JSON (E1700 when it is not JSON), then parse_contract.
Contract parse_contract_text(std::string_view text, const std::string& origin);

// The contract in file `path` (E1700 when it cannot be read).
Contract read_contract_file(const std::string& path);

// The JSON form (format 1); parse_contract(contract_to_json(c)) == c.
nlohmann::json contract_to_json(const Contract& contract);

}  // namespace presk::numerics
