// The realization's type menu: names, unit roundoffs, storage types.
#include "exec/native/numeric.h"

namespace presk::exec::native {

const char* real_type_name(RealType type) {
  switch (type) {
    case RealType::f64: return "f64";
    case RealType::f32: return "f32";
    case RealType::bf16: return "bf16";
  }
  return "?";
}

std::optional<RealType> real_type_from_name(std::string_view name) {
  if (name == "f64") return RealType::f64;
  if (name == "f32") return RealType::f32;
  if (name == "bf16") return RealType::bf16;
  return std::nullopt;
}

double real_unit_roundoff(RealType type) { return unit_roundoff(element_type_of(type)); }

ElementType element_type_of(RealType type) {
  switch (type) {
    case RealType::f64: return ElementType::f64;
    case RealType::f32: return ElementType::f32;
    case RealType::bf16: return ElementType::bf16;
  }
  return ElementType::f32;
}

}  // namespace presk::exec::native
