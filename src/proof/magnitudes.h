// The hypotheses of a Gappa statement (gappa_script.h): a ceiling on |exact value| at every
// site it states. `envelope`: the envelope's max_abs of each site (and the entry arguments'
// largest |x| over its samples) — what `presk check` propagates. `one row`: those of the stated
// row alone, measured on the exact reference (MPFR at the envelope's bits) on the first sample.
// `inputs`: the arguments' alone (nothing then keeps a variance from 0).
#pragma once

#include <vector>

#include "exec/reference/parameters.h"
#include "exec/reference/value.h"
#include "ir/ir.h"
#include "precision/envelope.h"
#include "proof/gappa_script.h"

namespace presk::proof {

// The envelope's magnitudes; `argument_max_abs` per entry argument, in order.
Magnitudes envelope_magnitudes(const precision::Envelope& envelope, const ir::Function& entry,
                               const std::vector<double>& argument_max_abs);

// The inputs' ranges alone: the arguments' magnitudes, no site's.
Magnitudes input_magnitudes(const ir::Function& entry, const std::vector<double>& argument_max_abs);

// The stated row's own magnitudes: max |exact| over the statement's needed scalars of each
// site, on `inputs` (one sample), every value rounded up to binary64.
Magnitudes row_magnitudes(const Statement& statement, const ir::Program& program,
                          const ir::Function& entry, const reference::ParameterStore& parameters,
                          const std::vector<reference::HostTensor>& inputs, long bits);

}  // namespace presk::proof
