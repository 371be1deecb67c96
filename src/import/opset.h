// Bringing a model to the one opset the translators read (opset.cpp; docs/import.md, "Opsets").
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "import/onnx_reader.h"

namespace presk::onnx_import {

// The opset every translator reads: the newest that Debian's ONNX (1.12) knows.
inline constexpr int kCanonicalOpset = 17;
// The oldest opset the translators also read as written (when the converter cannot convert).
inline constexpr int kOldestTranslated = 9;

struct OpsetRead {
  int written;  // the model's opset of the default domain
  int read;     // the opset its nodes now have: kCanonicalOpset, or `written` when left as is
};

// Rewrites `model` in place to kCanonicalOpset and returns the opset it was written in:
// opsets kMinOpset … 16 through ONNX's version converter (E1333 when it cannot convert a
// model below 9, the oldest the translators read; from 9 a model it cannot convert is read as
// written), opsets 18 … kMaxOpset by rewriting the forms those opsets changed into their
// opset-17 forms (E1334 for a form with no opset-17 equivalent). E1306 outside kMinOpset …
// kMaxOpset. `external` reads the model's external data where a rewrite needs a constant, and
// copies it into the model before the converter (which keeps no external references) runs.
OpsetRead canonicalize_opset(onnx::ModelProto& model, const std::string& name, const ExternalData& external);

}  // namespace presk::onnx_import
