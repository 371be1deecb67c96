// The imported weights written as safetensors, streaming (docs/import.md, "Large models"): the
// header first, then each parameter's bytes in blocks, so that writing holds one block, never a
// tensor's doubles. A float initializer whose ONNX type presk's safetensors reader takes (FLOAT,
// DOUBLE, BFLOAT16) is copied in its own type, byte for byte; FLOAT16, the 8-bit codes and the
// masks are widened to F32 (exact), and the constants computed at import are F32 (F64 from a
// DOUBLE source), as they always were.
#include <algorithm>

#include "import/builder.h"
#include "import/onnx_reader.h"
#include "import/writer.h"
#include "support/atomic_file.h"
#include "support/safetensors.h"

namespace presk::onnx_import {
namespace {

constexpr size_t kBlockBytes = size_t{16} << 20;  // the bytes written at a time

// True when the raw bytes are already the stored type's.
bool copied_as_is(const Constant& constant, ElementType type) {
  if (!constant.raw) return false;
  switch (constant.raw->data_type) {
    case onnx::TensorProto::FLOAT:
      return type == ElementType::f32;
    case onnx::TensorProto::DOUBLE:
      return type == ElementType::f64;
    case onnx::TensorProto::BFLOAT16:
      return type == ElementType::bf16;
    default:
      return false;
  }
}

// Raw bytes in the file's own type: copied a block at a time, each block's pages of a mapped
// external file handed back once written (the import's resident memory stays one block).
void write_copied(AtomicFileWriter& out, const RawBytes& raw) {
  std::vector<std::byte> block(std::min(kBlockBytes, raw.bytes.size()));
  for (size_t done = 0; done < raw.bytes.size(); done += block.size()) {
    const size_t size = std::min(block.size(), raw.bytes.size() - done);
    copy_raw(raw, done, size, block.data());
    out.write(block.data(), size);
    release_pages(raw.bytes.subspan(done, size), raw);
  }
}

// Values converted into `type` a block at a time: decoded from raw bytes, or the doubles of a
// constant computed at import.
void write_converted(AtomicFileWriter& out, const Constant& constant, ElementType type,
                     uint64_t count) {
  const size_t width = storage_bytes(type, 1);
  const size_t per_block = kBlockBytes / 8;
  std::vector<std::byte> block(std::min<uint64_t>(per_block, count) * width);
  std::vector<std::byte> source;
  const size_t source_width = constant.raw ? element_bytes(constant.raw->data_type) : 0;
  const std::vector<double>* values = constant.raw ? nullptr : &constant.values();
  internal_assert(values == nullptr || values->size() == count);
  for (uint64_t done = 0; done < count; done += per_block) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(per_block, count - done));
    std::vector<double> decoded;
    if (values == nullptr) {
      source.resize(n * source_width);
      copy_raw(*constant.raw, done * source_width, source.size(), source.data());
      decoded = decode_raw(constant.raw->data_type, source);
      release_pages(constant.raw->bytes.subspan(done * source_width, source.size()), *constant.raw);
    }
    for (size_t i = 0; i < n; ++i) {
      store_element(type, block.data(), i, values == nullptr ? decoded[i] : (*values)[done + i]);
    }
    out.write(block.data(), n * width);
  }
}

uint64_t element_count_of(const std::vector<int64_t>& shape) {
  uint64_t count = 1;
  for (int64_t extent : shape) count *= static_cast<uint64_t>(extent);
  return count;
}

}  // namespace

ElementType weight_type(const Constant& constant) {
  // A float initializer keeps its stored type, also behind a Cast to a wider float (folded at
  // import: the values are the stored ones, exactly).
  if (constant.raw && constant.is_float()) {
    switch (constant.raw->data_type) {
      case onnx::TensorProto::FLOAT:
        return ElementType::f32;
      case onnx::TensorProto::BFLOAT16:
        return ElementType::bf16;
      case onnx::TensorProto::DOUBLE:
        return ElementType::f64;
      default:
        break;
    }
  }
  return constant.data_type == onnx::TensorProto::DOUBLE ? ElementType::f64 : ElementType::f32;
}

void write_weights(const ImportedModel& model, const std::string& path) {
  std::vector<SafetensorsLayout> layouts;
  for (const ImportedWeight& weight : model.weights) {
    layouts.push_back({weight.name,
                       weight.type,
                       weight.shape,
                       {},
                       storage_bytes(weight.type, element_count_of(weight.shape))});
  }
  AtomicFileWriter out(path);
  out.write(safetensors_prefix(layouts, model.metadata));
  for (const ImportedWeight& weight : model.weights) {
    const Constant& constant = *weight.constant;
    const uint64_t count = element_count_of(weight.shape);
    if (copied_as_is(constant, weight.type)) {
      internal_assert(constant.raw->bytes.size() == storage_bytes(weight.type, count));
      write_copied(out, *constant.raw);
    } else {
      write_converted(out, constant, weight.type, count);
    }
  }
  out.commit();
}

}  // namespace presk::onnx_import
