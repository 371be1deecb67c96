// The solver's menu (menu.h).
#include "solve/menu.h"

#include <algorithm>

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

void add_integer(Menu& menu, int bits, const std::string& name) {
  if (menu.rungs.empty() || (menu.rungs.back().integer() && menu.rungs.back().bits <= bits)) {
    refuse("lists `" + name + "` out of order", "integers come after the floats, int8 before int4: --menu f64,f32,bf16,int8,int4");
  }
  for (auto scheme : {exec::native::QuantScheme::absmax, exec::native::QuantScheme::pow2}) {
    const bool pow2 = scheme == exec::native::QuantScheme::pow2;
    menu.rungs.push_back({name + (pow2 ? "/pow2" : ""), RealType::f32, bits / 8.0, bits, scheme});
  }
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
    } else if (name == "int8" || name == "int4") {
      add_integer(menu, name == "int8" ? 8 : 4, name);
    } else {
      refuse("names `" + name.substr(0, 40) + "`, which is not a rung presk has",
             "the menu's rungs: f64, f32, bf16, int8, int4 (each integer under absmax and pow2 scales)");
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
