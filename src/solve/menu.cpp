// The solver's menu (menu.h).
#include "solve/menu.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "support/diagnostics.h"
#include "support/tensor.h"

namespace presk::solve {
namespace {

[[noreturn]] void refuse(const std::string& what, const char* hint) {
  user_error("E1101").hint(hint) << "--menu " << what;
  internal_assert(false);
  std::abort();
}

void add_float(Menu& menu, RealType type, const std::string& name) {
  if (!menu.rungs.empty() && (menu.rungs.back().integer() || menu.rungs.back().type == type ||
                              !exec::native::is_wider_or_same(menu.rungs.back().type, type))) {
    refuse("lists `" + name + "` after a type as narrow or narrower", "list each type once, widest first: --menu f64,f32,bf16,int8,int4");
  }
  menu.rungs.push_back({name, type, facts(exec::native::element_type_of(type)).bits / 8.0, 0, {}});
}

void add_integer(Menu& menu, int bits, int64_t group, const std::string& name) {
  const bool out_of_order = menu.rungs.empty() || (menu.rungs.back().integer() && menu.rungs.back().bits < bits);
  const bool twice = std::any_of(menu.rungs.begin(), menu.rungs.end(), [&](const Rung& r) { return r.name == name; });
  if (out_of_order || twice) {
    refuse("lists `" + name + "` " + (twice ? "twice" : "out of order"),
           "integers come after the floats, int8's before int4's, each once: --menu f64,f32,bf16,int8,int8/g32,int4,int4/g32");
  }
  if (group != 0) {
    menu.rungs.push_back({name, RealType::f32, bits / 8.0, bits, exec::native::QuantScheme::absmax, group});
    return;
  }
  for (auto scheme : {exec::native::QuantScheme::absmax, exec::native::QuantScheme::pow2}) {
    const bool pow2 = scheme == exec::native::QuantScheme::pow2;
    menu.rungs.push_back({name + (pow2 ? "/pow2" : ""), RealType::f32, bits / 8.0, bits, scheme, 0});
  }
}

// "int8" → (8, 0), "int4/g32" → (4, 32); nullopt for any other name.
std::optional<std::pair<int, int64_t>> integer_rung(const std::string& name) {
  if (name == "int8" || name == "int4") return std::pair<int, int64_t>{name == "int8" ? 8 : 4, 0};
  if (name.size() < 7 || (name.rfind("int8/g", 0) != 0 && name.rfind("int4/g", 0) != 0)) return std::nullopt;
  const std::string digits = name.substr(6);
  if (digits.size() > 9 || digits.front() == '0' || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return std::nullopt;
  const int64_t group = std::stoll(digits);
  if (group < 2) return std::nullopt;
  return std::pair<int, int64_t>{name[3] == '8' ? 8 : 4, group};
}

}  // namespace

std::string Menu::text() const {
  std::string out;
  for (const Rung& rung : rungs) {
    if (rung.integer() && rung.scheme == exec::native::QuantScheme::pow2) continue;  // named with its absmax twin
    out += (out.empty() ? "" : ",") + rung.name;
  }
  return out;
}

bool Menu::has_integers() const {
  return std::any_of(rungs.begin(), rungs.end(), [](const Rung& rung) { return rung.integer(); });
}

Menu parse_menu(const std::string& text) {
  Menu menu;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    if (const std::optional<RealType> type = exec::native::real_type_from_name(name)) {
      add_float(menu, *type, name);
    } else if (const auto integer = integer_rung(name)) {
      add_integer(menu, integer->first, integer->second, name);
    } else {
      refuse("names `" + name.substr(0, 40) + "`, which is not a rung presk has",
             "the menu's rungs: f64, f32, bf16, int8, int4 (each integer under absmax and pow2 scales), "
             "int8/gG and int4/gG (one scale per G elements, G >= 2: int4/g32)");
    }
    start = comma + 1;
  }
  if (menu.rungs.front().type != RealType::f64 || menu.rungs.front().integer()) {
    refuse("must begin with f64, the type of every value the solver leaves alone", "begin the menu with f64: --menu f64,f32,bf16");
  }
  return menu;
}

Menu default_menu() { return parse_menu("f64,f32,bf16"); }

}  // namespace presk::solve
