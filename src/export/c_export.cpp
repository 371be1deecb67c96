// The exported files: the header (the API), and the source: the runtime, the weights loader,
// the entry's functions, presk_<name>_run, and a command-line driver under PRESK_MAIN.
#include "export/c_export.h"

#include "export/c_functions.h"
#include "export/c_text.h"
#include "support/diagnostics.h"

namespace presk::export_c {
namespace {

using exec::native::Realization;

// The loader's code for parameter k: its elements read as doubles (Z: int64) and stored once,
// rounded (RNE) into the parameter's realized type, as prepare_parameters does.
std::string load_parameter(const ir::Param& param, size_t k, Store store,
                           const exec::native::QuantSpec* quant) {
  std::ostringstream out;
  const int64_t count = element_count(param.type.shape);
  out << "  {\n    static const int64_t shape[] = {";
  for (size_t a = 0; a < param.type.shape.size(); ++a)
    out << (a ? ", " : "") << param.type.shape[a];
  if (param.type.shape.empty()) out << "0";
  const bool integer = store == Store::i64 || store == Store::b8;
  out << "};\n    " << c_type(store) << "* into = (" << c_type(store) << "*)malloc("
      << std::max<int64_t>(count, 1) << " * sizeof(" << c_type(store) << "));\n    "
      << (integer ? "int64_t" : "double") << "* values = (" << (integer ? "int64_t" : "double")
      << "*)malloc(" << std::max<int64_t>(count, 1) << " * 8);\n    pk_index i;\n"
      << "    w->p[" << k << "] = into;\n"
      << "    if (!into || !values || !pk_read_tensor(&file, \"" << param.path << "\", shape, "
      << param.type.shape.size() << ", 0, " << (integer ? "NULL, values" : "values, NULL")
      << ", message, message_size)) { free(values); goto fail; }\n";
  if (quant) {  // integer weights: their meanings f32(q·s), as the native kernels read them
    const int64_t rank = static_cast<int64_t>(param.type.shape.size()),
                  over = quant->over < 0 ? quant->over + rank : quant->over;
    out << "    if (!pk_dequantize(values, " << count << ", shape, " << rank << ", " << quant->bits
        << ", " << over << ", " << (quant->scheme == exec::native::QuantScheme::pow2) << ", "
        << quant->group
        << ", (float*)into)) { free(values); goto fail; }\n    (void)i;\n    free(values);\n  }\n";
    return out.str();
  }
  out << "    for (i = 0; i < " << count << "; ++i) into[i] = ";
  switch (store) {
    case Store::f64:
    case Store::i64:
      out << "values[i]";
      break;
    case Store::f32:
      out << "(float)values[i]";
      break;
    case Store::bf16:
      out << "pk_bf16_from_f64(values[i])";
      break;
    case Store::b8:
      out << "(uint8_t)(values[i] != 0)";
      break;
  }
  out << ";\n    free(values);\n  }\n";
  return out.str();
}

std::string input_type(const ir::Type& type) {
  return type.kind == ir::ElemKind::Real  ? "double"
         : type.kind == ir::ElemKind::Int ? "int64_t"
                                          : "uint8_t";
}

struct Parts {
  const ir::Program& program;
  const ir::Function& entry;
  const Realization& realization;
  std::string name;  // the API's prefix, presk_<name>
  Specialization main;
  Store result = Store::f32;
  std::vector<int64_t> result_shape;
};

std::string signature(const Parts& p) {
  std::string text = "int presk_" + p.name + "_run(const presk_" + p.name + "_weights* weights";
  for (size_t k = 0; k < p.entry.argument_types.size(); ++k) {
    text += ", const " + input_type(p.entry.argument_types[k]) + "* " + p.entry.argument_names[k];
  }
  return text + ", " + c_type(p.result) + "* result, char* message, size_t message_size)";
}

std::string header_text(const Parts& p, const std::string& origin) {
  std::ostringstream out;
  const std::string guard = "PRESK_EXPORT_" + p.name + "_H";
  out << "/* " << origin << " */\n#ifndef " << guard << "\n#define " << guard
      << "\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
      << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      << "/* The parameters, each in its realized type, read from a safetensors file. */\n"
      << "typedef struct presk_" << p.name << "_weights presk_" << p.name << "_weights;\n\n"
      << "/* Reads the parameters (named by their paths) from `path`; NULL with a message on "
         "failure.\n"
      << "   An entry without parameters takes path NULL. */\n"
      << "presk_" << p.name << "_weights* presk_" << p.name
      << "_load(const char* path, char* message, size_t message_size);\n"
      << "void presk_" << p.name << "_free(presk_" << p.name << "_weights* weights);\n\n"
      << "/* Runs `" << p.entry.name
      << "`: real inputs as doubles (rounded once into the realization's default type),\n"
      << "   Z as int64, B as bytes; row-major. The result: " << store_name(p.result)
      << ir::shape_text(p.result_shape) << (p.result == Store::bf16 ? " (bf16 bit patterns)" : "")
      << ".\n   Returns 0, or 1 with a message. */\n";
  for (size_t k = 0; k < p.entry.argument_types.size(); ++k) {
    out << "/*   " << p.entry.argument_names[k] << " : "
        << ir::type_to_string(p.entry.argument_types[k]) << " */\n";
  }
  out << signature(p) << ";\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return out.str();
}

std::string loader_text(const Parts& p, const Functions& functions) {
  std::ostringstream out;
  out << "struct presk_" << p.name << "_weights { void* p["
      << std::max<size_t>(p.program.params.size(), 1) << "]; };\n"
      << "typedef struct presk_" << p.name << "_weights pk_weights;\n\n"
      << "void presk_" << p.name << "_free(presk_" << p.name
      << "_weights* w) {\n  size_t k;\n  if (!w) return;\n"
      << "  for (k = 0; k < sizeof w->p / sizeof w->p[0]; ++k) free(w->p[k]);\n  free(w);\n}\n\n"
      << "presk_" << p.name << "_weights* presk_" << p.name
      << "_load(const char* path, char* message, size_t message_size) {\n"
      << "  pk_file file;\n  presk_" << p.name << "_weights* w = (presk_" << p.name
      << "_weights*)calloc(1, sizeof *w);\n"
      << "  memset(&file, 0, sizeof file);\n"
      << "  if (!w) { snprintf(message, message_size, \"out of memory\"); return NULL; }\n";
  if (functions.used_parameters().empty()) {
    out << "  (void)path;\n  return w;\n";
  } else {
    out << "  if (!path) snprintf(message, message_size, \"no weights file\");\n"
        << "  if (!path || !pk_open(&file, path, message, message_size)) goto fail;\n";
    for (size_t k : functions.used_parameters()) {
      const ir::Param& param = p.program.params[k];
      out << load_parameter(param, k, functions.parameter_store(param),
                            p.realization.param_quant(param.path));
    }
    out << "  pk_close(&file);\n  return w;\nfail:\n  pk_close(&file);\n  presk_" << p.name
        << "_free(w);\n  return NULL;\n";
  }
  out << "}\n\n";
  return out.str();
}

// Each argument rounded once into the realization's default type (executor.cpp's input_value).
std::string run_text(const Parts& p) {
  std::ostringstream out;
  const RealType default_type = p.realization.default_type;
  out << signature(p) << " {\n  static const pk_index no_layers[1] = {0};\n"
      << "  pk_context* cx = (pk_context*)calloc(1, sizeof(pk_context));\n  pk_index i;\n";
  for (size_t k = 0; k < p.entry.argument_types.size(); ++k) {
    const ir::Type& type = p.entry.argument_types[k];
    const Store store = type.kind == ir::ElemKind::Real  ? store_of(default_type)
                        : type.kind == ir::ElemKind::Int ? Store::i64
                                                         : Store::b8;
    out << "  " << c_type(store) << "* a" << k << ";\n";
  }
  out << "  " << c_type(p.result) << "* r;\n"
      << "  if (!cx) { snprintf(message, message_size, \"out of memory\"); return 1; }\n"
      << "  cx->message = message;\n  cx->message_size = message_size;\n"
      << "  if (setjmp(cx->on_error)) {\n    pk_free_all(cx);\n    free(cx);\n    return 1;\n  }\n";
  std::string arguments;
  for (size_t k = 0; k < p.entry.argument_types.size(); ++k) {
    const ir::Type& type = p.entry.argument_types[k];
    const Store store = type.kind == ir::ElemKind::Real  ? store_of(default_type)
                        : type.kind == ir::ElemKind::Int ? Store::i64
                                                         : Store::b8;
    const std::string x = p.entry.argument_names[k] + "[i]";
    const std::string value = store == Store::f32    ? "(float)" + x
                              : store == Store::bf16 ? "pk_bf16_from_f64(" + x + ")"
                              : store == Store::b8   ? "(uint8_t)(" + x + " != 0)"
                                                     : x;
    const int64_t count = element_count(type.shape);
    out << "  a" << k << " = (" << c_type(store) << "*)pk_alloc(cx, " << std::max<int64_t>(count, 1)
        << " * sizeof(" << c_type(store) << "));\n  for (i = 0; i < " << count << "; ++i) a" << k
        << "[i] = " << value << ";\n";
    arguments += ", a" + std::to_string(k);
  }
  out << "  r = " << p.main.c_name << "(cx, weights, no_layers" << arguments << ");\n"
      << "  memcpy(result, r, " << std::max<int64_t>(element_count(p.result_shape), 1)
      << " * sizeof(" << c_type(p.result) << "));\n"
      << "  pk_free_all(cx);\n  free(cx);\n  return 0;\n}\n\n";
  return out.str();
}

// `prog WEIGHTS DATA OUT`: the inputs by argument name from a safetensors file (`-`: none),
// the result written to OUT as presk run --out writes it (one tensor named after the entry).
std::string driver_text(const Parts& p) {
  std::ostringstream out;
  out << "#ifdef PRESK_MAIN\n"
      << c_safetensors_writer() << "\nint main(int argc, char** argv) {\n"
      << "  char message[512] = \"\";\n  pk_file data;\n  presk_" << p.name << "_weights* w;\n"
      << "  static const int64_t result_shape[] = {";
  for (size_t a = 0; a < p.result_shape.size(); ++a) out << (a ? ", " : "") << p.result_shape[a];
  if (p.result_shape.empty()) out << "0";
  out << "};\n  " << c_type(p.result) << "* result = (" << c_type(p.result) << "*)malloc("
      << std::max<int64_t>(element_count(p.result_shape), 1) << " * sizeof(" << c_type(p.result)
      << "));\n"
      << "  pk_output output;\n  int ok;\n";
  std::string arguments;
  for (size_t k = 0; k < p.entry.argument_types.size(); ++k) {
    const ir::Type& type = p.entry.argument_types[k];
    const std::string c = input_type(type),
                      read = type.kind == ir::ElemKind::Int ? "int64_t" : "double";
    out << "  static const int64_t shape" << k << "[] = {";
    for (size_t a = 0; a < type.shape.size(); ++a) out << (a ? ", " : "") << type.shape[a];
    if (type.shape.empty()) out << "0";
    out << "};\n  " << read << "* read" << k << " = (" << read << "*)malloc("
        << std::max<int64_t>(element_count(type.shape), 1) << " * 8);\n";
    arguments += type.kind == ir::ElemKind::Bool ? ", bytes" + std::to_string(k)
                                                 : ", read" + std::to_string(k);
    if (type.kind == ir::ElemKind::Bool) {
      out << "  uint8_t* bytes" << k << " = (uint8_t*)malloc("
          << std::max<int64_t>(element_count(type.shape), 1) << ");\n";
    }
  }
  out << "  if (argc != 4) { fprintf(stderr, \"usage: %s WEIGHTS.safetensors|- DATA.safetensors|- "
         "OUT.safetensors\\n\", argv[0]); return 2; }\n"
      << "  w = presk_" << p.name
      << "_load(strcmp(argv[1], \"-\") ? argv[1] : NULL, message, sizeof message);\n"
      << "  if (!w) { fprintf(stderr, \"%s: %s\\n\", argv[1], message); return 1; }\n";
  if (!p.entry.argument_types.empty()) {
    out << "  if (!pk_open(&data, argv[2], message, sizeof message)) { fprintf(stderr, \"%s\\n\", "
           "message); return 1; }\n";
  } else {
    out << "  memset(&data, 0, sizeof data);\n";
  }
  for (size_t k = 0; k < p.entry.argument_types.size(); ++k) {
    const ir::Type& type = p.entry.argument_types[k];
    const bool integer = type.kind == ir::ElemKind::Int;
    out << "  if (!pk_read_tensor(&data, \"" << p.entry.argument_names[k] << "\", shape" << k
        << ", " << type.shape.size() << ", 1, " << (integer ? "NULL, read" : "read") << k
        << (integer ? "" : ", NULL") << ", message, sizeof message)) {\n"
        << "    fprintf(stderr, \"%s: %s\\n\", argv[2], message);\n    return 1;\n  }\n";
    if (type.kind == ir::ElemKind::Bool) {
      out << "  { pk_index i; for (i = 0; i < " << element_count(type.shape) << "; ++i) bytes" << k
          << "[i] = read" << k << "[i] != 0; }\n";
    }
  }
  out << "  pk_close(&data);\n"
      << "  if (presk_" << p.name << "_run(w" << arguments
      << ", result, message, sizeof message)) {\n"
      << "    fprintf(stderr, \"%s\\n\", message);\n    return 1;\n  }\n"
      << "  output.name = \"" << p.entry.name << "\";\n  output.dtype = \""
      << safetensors_dtype(p.result) << "\";\n"
      << "  output.bytes = (int)sizeof(" << c_type(p.result)
      << ");\n  output.shape = result_shape;\n  output.rank = " << p.result_shape.size()
      << ";\n  output.data = result;\n  output.count = " << element_count(p.result_shape) << ";\n"
      << "  ok = pk_write_outputs(argv[3], &output, 1);\n  presk_" << p.name << "_free(w);\n"
      << "  if (!ok) { fprintf(stderr, \"cannot write %s\\n\", argv[3]); return 1; }\n  return "
         "0;\n}\n#endif\n";
  return out.str();
}

}  // namespace

bool is_c_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

CExport export_c(const ir::Program& program, const std::string& entry,
                 const Realization& realization, const std::string& name,
                 const std::string& origin) {
  const ir::Function* function = program.find_function(entry);
  if (!function || !function->is_entry) {
    user_error("E1540").hint("`presk dump --stage ir PROGRAM` lists the entries")
        << "the program has no entry `" << entry << "`";
  }
  if (function->results.size() != 1) {
    user_error("E1543").hint("export an entry with one result")
        << "`presk export c` does not cover entries with " << function->results.size()
        << " results yet (`" << entry << "`)";
  }
  Functions functions(program, realization);
  std::vector<Store> arguments;
  for (const ir::Type& type : function->argument_types) {
    arguments.push_back(type.kind == ir::ElemKind::Real  ? store_of(realization.default_type)
                        : type.kind == ir::ElemKind::Int ? Store::i64
                                                         : Store::b8);
  }
  Parts parts{
      program,    *function, realization, name, functions.specialize(*function, "", 0, arguments),
      Store::f32, {}};
  parts.result = parts.main.result;
  parts.result_shape = function->type_of(function->results[0]).shape;
  CExport out;
  out.header = header_text(parts, origin);
  out.source = "/* " + origin + " */\n" + c_runtime_prelude() + c_math_functions() +
               c_safetensors_reader() + "\n#include \"" + name + ".h\"\n\n" +
               loader_text(parts, functions) + functions.definitions() + run_text(parts) +
               driver_text(parts);
  return out;
}

}  // namespace presk::export_c
