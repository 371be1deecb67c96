// One op's predicted seconds (op_cost.h).
#include "profile/op_cost.h"

#include <algorithm>

namespace presk::profile {

double type_bytes(const std::string& type) {
  if (type == "f64") return 8;
  if (type == "f32") return 4;
  if (type == "bf16") return 2;
  if (type == "int8") return 1;
  return 0.5;  // int4
}

OpCost op_cost(const Profile& profile, const Roofline& roofline, double elements, double work, const std::string& own,
               RealType own_real, const std::vector<OperandRead>& operands) {
  double bytes = elements * type_bytes(own);
  OpCost out;
  for (const OperandRead& operand : operands) {
    bytes += operand.elements * type_bytes(operand.type);
    out.conversions += operand.elements * (operand.parameter ? profile.load_cost(operand.type, own_real)
                                                             : profile.edge_cost(operand.real, own_real));
  }
  out.throughput = std::max(work / roofline.rate, bytes / roofline.bandwidth);
  return out;
}

}  // namespace presk::profile
