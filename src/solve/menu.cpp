// The solver's menu (menu.h).
#include "solve/menu.h"

#include <algorithm>

#include "support/diagnostics.h"
#include "support/tensor.h"

namespace presk::solve {

std::string Menu::text() const {
  std::string out;
  for (const Rung& rung : rungs) out += (out.empty() ? "" : ",") + std::string(real_type_name(rung.type));
  return out;
}

Menu parse_menu(const std::string& text) {
  Menu menu;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    const std::optional<RealType> type = exec::native::real_type_from_name(name);
    if (!type) {
      user_error("E1101").hint("the menu's types: f64, f32, bf16 (integer rungs are to come)")
          << "--menu names `" << name.substr(0, 40) << "`, which is not a type presk has";
    }
    if (!menu.rungs.empty() &&
        (menu.rungs.back().type == *type || !exec::native::is_wider_or_same(menu.rungs.back().type, *type))) {
      user_error("E1101").hint("list each type once, widest first: --menu f64,f32,bf16")
          << "--menu lists `" << name << "` after a type as narrow or narrower";
    }
    menu.rungs.push_back({*type, facts(exec::native::element_type_of(*type)).bits / 8.0});
    start = comma + 1;
  }
  if (menu.rungs.front().type != RealType::f64) {
    user_error("E1101").hint("begin the menu with f64: --menu f64,f32,bf16")
        << "--menu must begin with f64, the type of every value the solver leaves alone";
  }
  return menu;
}

Menu default_menu() { return parse_menu("f64,f32,bf16"); }

}  // namespace presk::solve
