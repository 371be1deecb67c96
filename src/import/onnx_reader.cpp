// Reading an ONNX model: the protobuf bytes (E1301 when corrupt or truncated), the opsets,
// and TensorProto data (initializers, Constant attributes) decoded into import constants.
#include <cmath>
#include <cstring>
#include <map>

#include "import/builder.h"
#include "import/onnx_reader.h"
#include "support/input_file.h"

namespace presk::onnx_import {
namespace {

constexpr int64_t kMaxConstantElements = int64_t{1} << 31;

// binary16 and bfloat16 bit patterns as the exact double they denote.
double half_to_double(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f;
  int fraction = bits & 0x3ff;
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0) return sign * std::ldexp(fraction, -24);
  if (exponent == 31) return fraction == 0 ? sign * INFINITY : NAN;
  return sign * std::ldexp(fraction + 1024, exponent - 25);
}

double bfloat_to_double(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

double raw_element(int data_type, const char* bytes) {
  switch (data_type) {
    case onnx::TensorProto::DOUBLE: { double v; std::memcpy(&v, bytes, 8); return v; }
    case onnx::TensorProto::INT64: { int64_t v; std::memcpy(&v, bytes, 8); return static_cast<double>(v); }
    case onnx::TensorProto::FLOAT: { float v; std::memcpy(&v, bytes, 4); return v; }
    case onnx::TensorProto::INT32: { int32_t v; std::memcpy(&v, bytes, 4); return v; }
    case onnx::TensorProto::FLOAT16: { uint16_t v; std::memcpy(&v, bytes, 2); return half_to_double(v); }
    case onnx::TensorProto::BFLOAT16: { uint16_t v; std::memcpy(&v, bytes, 2); return bfloat_to_double(v); }
    case onnx::TensorProto::UINT64: { uint64_t v; std::memcpy(&v, bytes, 8); return static_cast<double>(v); }
    case onnx::TensorProto::UINT32: { uint32_t v; std::memcpy(&v, bytes, 4); return v; }
    case onnx::TensorProto::INT16: { int16_t v; std::memcpy(&v, bytes, 2); return v; }
    case onnx::TensorProto::UINT16: { uint16_t v; std::memcpy(&v, bytes, 2); return v; }
    case onnx::TensorProto::INT8: return static_cast<int8_t>(bytes[0]);
    default: return static_cast<uint8_t>(bytes[0]);  // BOOL, UINT8
  }
}

// The typed repeated field a type's values live in when not in raw_data.
std::vector<double> typed_values(const onnx::TensorProto& tensor) {
  std::vector<double> values;
  switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT: values.assign(tensor.float_data().begin(), tensor.float_data().end()); break;
    case onnx::TensorProto::DOUBLE: values.assign(tensor.double_data().begin(), tensor.double_data().end()); break;
    case onnx::TensorProto::INT64:
      for (int64_t v : tensor.int64_data()) values.push_back(static_cast<double>(v));
      break;
    case onnx::TensorProto::FLOAT16:
      for (int32_t v : tensor.int32_data()) values.push_back(half_to_double(static_cast<uint16_t>(v)));
      break;
    case onnx::TensorProto::BFLOAT16:
      for (int32_t v : tensor.int32_data()) values.push_back(bfloat_to_double(static_cast<uint16_t>(v)));
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      for (uint64_t v : tensor.uint64_data()) values.push_back(static_cast<double>(v));
      break;
    default:  // INT32, INT16, UINT16, INT8, UINT8, BOOL: int32_data
      for (int32_t v : tensor.int32_data()) values.push_back(v);
  }
  return values;
}

}  // namespace

size_t element_bytes(int data_type) {
  switch (data_type) {
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64: return 8;
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32: return 4;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16: return 2;
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8: return 1;
    default: return 0;
  }
}

const char* data_type_name(int data_type) {
  if (!onnx::TensorProto::DataType_IsValid(data_type)) return "unknown";
  // protobuf's own name, a reference to a string it keeps for the life of the process (no lazy
  // table of ours, which two threads could fill at once)
  return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(data_type)).c_str();
}

std::vector<double> decode_raw(int data_type, std::span<const std::byte> bytes) {
  const size_t size = element_bytes(data_type);
  std::vector<double> values(size == 0 ? 0 : bytes.size() / size);
  const char* data = reinterpret_cast<const char*>(bytes.data());
  for (size_t i = 0; i < values.size(); ++i) values[i] = raw_element(data_type, data + i * size);
  return values;
}

std::shared_ptr<Constant> decode_tensor(const onnx::TensorProto& tensor, const std::string& context,
                                        const TensorSource& source) {
  auto constant = std::make_shared<Constant>();
  constant->data_type = tensor.data_type();
  constant->onnx_name = tensor.name();
  if (element_bytes(tensor.data_type()) == 0) {
    user_error("E1304").hint("supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8, BOOL")
        << context << ": tensor `" << tensor.name() << "` has the unsupported data type "
        << data_type_name(tensor.data_type());
  }
  const bool external = tensor.data_location() == onnx::TensorProto::EXTERNAL;
  if (external && source.external == nullptr) {  // inside a subgraph, or a tensor read alone
    user_error("E1309").hint("save the model with its data inside (onnx.save(model, path, save_as_external_data=False))")
        << context << ": tensor `" << tensor.name() << "` keeps its data in an external file, which presk reads for "
        << "initializers and Constant nodes only";
  }
  int64_t count = 1;
  for (int64_t extent : tensor.dims()) {
    if (extent < 0 || extent > kMaxConstantElements || count * std::max<int64_t>(extent, 1) > kMaxConstantElements) {
      user_error("E1309") << context << ": tensor `" << tensor.name() << "` has a negative or too large extent";
    }
    count *= extent;
    constant->shape.push_back(extent);
  }
  if (external) {
    constant->raw = source.external->bytes_of(tensor);  // its length checked against the shape there
  } else if (tensor.has_raw_data()) {
    size_t size = element_bytes(tensor.data_type());
    if (tensor.raw_data().size() != static_cast<uint64_t>(count) * size) {
      user_error("E1309") << context << ": tensor `" << tensor.name() << "` holds " << tensor.raw_data().size()
                          << " bytes of data for " << count << " elements of " << size << " bytes";
    }
    auto raw = std::make_shared<RawBytes>();
    raw->bytes = std::as_bytes(std::span(tensor.raw_data().data(), tensor.raw_data().size()));
    raw->data_type = tensor.data_type();
    raw->keep = source.model;
    constant->raw = std::move(raw);
    if (!source.model) constant->mutable_values();  // the tensor may not outlive this call
  } else {
    constant->mutable_values() = typed_values(tensor);
    if (static_cast<int64_t>(constant->element_count()) != count) {
      user_error("E1309") << context << ": tensor `" << tensor.name() << "` holds " << constant->element_count()
                          << " values for its shape of " << count << " elements";
    }
  }
  return constant;
}

namespace {

// E1301 unless `parsed` (the model was read whole) and it has a graph.
void check_parsed(const onnx::ModelProto& model, bool parsed, uint64_t bytes, const std::string& name) {
  if (!parsed) {
    user_error("E1301").hint("re-export the model; check that the file was copied whole")
        << "`" << name << "` is not a valid ONNX model: its protobuf is corrupt or truncated (" << bytes << " bytes)";
  }
  if (!model.has_graph()) {
    user_error("E1301") << "`" << name << "` holds no graph: it is not an ONNX model";
  }
}

}  // namespace

onnx::ModelProto parse_model(std::span<const uint8_t> bytes, const std::string& name) {
  onnx::ModelProto model;
  check_parsed(model,
               bytes.size() <= static_cast<size_t>(INT32_MAX) &&
                   model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())),
               bytes.size(), name);
  return model;
}

onnx::ModelProto parse_model_file(const std::string& path, const std::string& name) {
  const InputFile file(path, InputFileKind{"ONNX model", "E1300", "check the path and its permissions", uint64_t{2} << 30});
  onnx::ModelProto model;
  check_parsed(model, model.ParseFromFileDescriptor(file.fd()), file.size(), name);
  return model;
}

int default_opset(const onnx::ModelProto& model, const std::string& name) {
  int opset = -1;
  for (const onnx::OperatorSetIdProto& entry : model.opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") opset = static_cast<int>(entry.version());
  }
  if (opset < kMinOpset || opset > kMaxOpset) {
    user_error("E1306").hint("export with opset_version between 1 and 21")
        << "`" << name << "` uses opset " << opset << " of the default ONNX domain; presk imports opsets "
        << kMinOpset << " to " << kMaxOpset;
  }
  return opset;
}


}  // namespace presk::onnx_import

namespace presk::onnx_import {
namespace {

// The ONNX element type of a .npy `descr` (little-endian or byte-sized), or 0.
int npy_data_type(const std::string& descr) {
  static const std::map<std::string, int> types = {
      {"f8", onnx::TensorProto::DOUBLE}, {"f4", onnx::TensorProto::FLOAT}, {"f2", onnx::TensorProto::FLOAT16},
      {"i8", onnx::TensorProto::INT64},  {"i4", onnx::TensorProto::INT32}, {"i2", onnx::TensorProto::INT16},
      {"i1", onnx::TensorProto::INT8},   {"u8", onnx::TensorProto::UINT64}, {"u4", onnx::TensorProto::UINT32},
      {"u2", onnx::TensorProto::UINT16}, {"u1", onnx::TensorProto::UINT8}, {"b1", onnx::TensorProto::BOOL}};
  if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '=')) return 0;
  auto it = types.find(descr.substr(1));
  return it == types.end() ? 0 : it->second;
}

// The value of `key` in a .npy header dict (`{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`).
std::string npy_field(const std::string& header, const std::string& key) {
  size_t at = header.find("'" + key + "':");
  if (at == std::string::npos) return "";
  size_t begin = header.find_first_not_of(' ', at + key.size() + 3);
  if (begin == std::string::npos) return "";
  size_t end = header[begin] == '(' ? header.find(')', begin) + 1 : header.find_first_of(",}", begin);
  return end == std::string::npos || end <= begin ? "" : header.substr(begin, end - begin);
}

onnx::TensorProto npy_tensor(const std::string& bytes, const std::string& path) {
  auto bad = [&](const std::string& why) {
    user_error("E1337").hint("write it with numpy.save (little-endian, C order) or onnx.numpy_helper.from_array")
        << "`" << path << "` is not a tensor presk reads: " << why;
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) bad("no .npy magic");
  const bool wide = static_cast<uint8_t>(bytes[6]) >= 2;
  size_t length = static_cast<uint8_t>(bytes[8]) | static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8;
  size_t start = 10;
  if (wide) {
    if (bytes.size() < 12) bad("a truncated header");
    length |= static_cast<size_t>(static_cast<uint8_t>(bytes[10])) << 16 | static_cast<size_t>(static_cast<uint8_t>(bytes[11])) << 24;
    start = 12;
  }
  if (bytes.size() < start + length) bad("a truncated header");
  const std::string header = bytes.substr(start, length);
  std::string descr = npy_field(header, "descr");
  if (descr.size() >= 2) descr = descr.substr(1, descr.size() - 2);
  onnx::TensorProto tensor;
  tensor.set_data_type(npy_data_type(descr));
  if (tensor.data_type() == 0) bad("the element type `" + printable(descr) + "` (supported: little-endian floats, integers, bool)");
  if (npy_field(header, "fortran_order") != "False") bad("Fortran order");
  std::string shape = npy_field(header, "shape");
  if (shape.size() < 2 || shape.front() != '(') bad("no shape");
  for (size_t i = 1; i + 1 < shape.size();) {
    size_t j = shape.find_first_of(",)", i);
    std::string part = shape.substr(i, j - i);
    part.erase(0, part.find_first_not_of(' '));
    if (!part.empty()) {
      if (part.find_first_not_of("0123456789") != std::string::npos || part.size() > 12) bad("the shape " + printable(shape));
      tensor.add_dims(std::stoll(part));
    }
    i = j + 1;
  }
  tensor.set_raw_data(bytes.substr(start + length));
  return tensor;
}

}  // namespace

onnx::TensorProto read_tensor_file(const std::string& path) {
  InputFileKind kind{"tensor", "E1300", "check the path and its permissions", uint64_t{2} << 30};
  return parse_tensor(read_input_file(path, kind), path);
}

onnx::TensorProto parse_tensor(const std::string& bytes, const std::string& path) {
  if (bytes.size() >= 6 && bytes.compare(0, 6, "\x93NUMPY") == 0) return npy_tensor(bytes, path);
  onnx::TensorProto tensor;
  if (!tensor.ParseFromString(bytes) || !onnx::TensorProto::DataType_IsValid(tensor.data_type()) ||
      tensor.data_type() == onnx::TensorProto::UNDEFINED) {
    user_error("E1337").hint("give a serialized onnx.TensorProto (the backend tests' input_N.pb) or a .npy file")
        << "`" << path << "` is neither a serialized ONNX TensorProto nor a .npy file";
  }
  return tensor;
}

}  // namespace presk::onnx_import
