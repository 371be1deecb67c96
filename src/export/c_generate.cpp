// generate.c: `presk generate`'s greedy loop in C over an exported decode entry's step API, the
// vocabulary read from the weights file (the `vocabulary` presk train --weights-out records).
#include "export/c_text.h"

#include <sstream>

namespace presk::export_c {

namespace {

// The C after `#include "<name>.c"`: a JSON string decoder (the metadata value is the JSON text
// of a string, itself a JSON string: decoded twice), the vocabulary, main.
constexpr const char* kGenerate = R"C(
/* The JSON string at `at` (its opening quote) as UTF-8 into out (NUL-terminated); its length, or -1. */
static long pk_json_text(const char* at, char* out, size_t size) {
  size_t n = 0;
  if (*at++ != '"') return -1;
  while (*at && *at != '"') {
    unsigned long c = (unsigned char)*at++;
    if (c == '\\') {
      const char e = *at++;
      if (e == 'u') {
        int k;
        c = 0;
        for (k = 0; k < 4; ++k, ++at) {
          const char h = *at;
          if (h >= '0' && h <= '9') c = c * 16 + (unsigned long)(h - '0');
          else if (h >= 'a' && h <= 'f') c = c * 16 + (unsigned long)(h - 'a' + 10);
          else if (h >= 'A' && h <= 'F') c = c * 16 + (unsigned long)(h - 'A' + 10);
          else return -1;
        }
        if (c >= 0x800) return -1; /* beyond the vocabulary's Latin-1 */
        if (c >= 0x80) {
          if (n + 2 >= size) return -1;
          out[n++] = (char)(0xC0 | (c >> 6));
          c = 0x80 | (c & 0x3F);
        }
      } else {
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : (unsigned char)e;
        if (e != 'n' && e != 't' && e != 'r' && e != 'b' && e != 'f' && e != '"' && e != '\\' && e != '/') return -1;
      }
    }
    if (n + 1 >= size) return -1;
    out[n++] = (char)c;
  }
  if (*at != '"') return -1;
  out[n] = 0;
  return (long)n;
}

/* The weights file's vocabulary: `characters` (Latin-1 bytes) and its size, or -1. */
static int pk_vocabulary(const char* header, unsigned char* characters) {
  static char text[4096], utf8[2048];
  const char* at = strstr(header, "\"__metadata__\"");
  long n, i;
  int count = 0;
  at = at ? strstr(at, "\"vocabulary\"") : NULL;
  if (!at) return -1;
  at += strlen("\"vocabulary\"");
  while (*at == ' ' || *at == ':') ++at;
  if (pk_json_text(at, text, sizeof text) < 0) return -1;
  n = pk_json_text(text, utf8, sizeof utf8);
  for (i = 0; i < n && count < 256; ++i) {
    const unsigned char b = (unsigned char)utf8[i];
    if (b < 0x80) characters[count++] = b;
    else if ((b == 0xC2 || b == 0xC3) && i + 1 < n) characters[count++] = (unsigned char)(((b & 0x1F) << 6) | ((unsigned char)utf8[++i] & 0x3F));
    else return -1;
  }
  return n < 0 ? -1 : count;
}

/* presk generate's greedy choice: the largest logit, the lowest token on a tie, NaN last. */
static long pk_argmax(const double* x, long n) {
  long best = 0, i;
  for (i = 1; i < n; ++i) {
    const int a = isnan(x[i]), b = isnan(x[best]);
    if (a != b ? b : x[i] > x[best]) best = i;
  }
  return best;
}

int main(int argc, char** argv) {
  char message[512] = "";
  pk_file file;
  unsigned char characters[256];
  int token_of[256], vocabulary, k;
  long count, prompt, s, at = 0, i;
  PK_LOGIT logits[PK_V];
  double values[PK_V];
  PK_WEIGHTS* w;
  PK_STATE* state;
  if (argc != 4) { fprintf(stderr, "usage: %s WEIGHTS.safetensors PROMPT TOKENS\n", argv[0]); return 2; }
  count = atol(argv[3]);
  prompt = (long)strlen(argv[2]);
  w = PK_LOAD(argv[1], message, sizeof message);
  if (!w) { fprintf(stderr, "%s: %s\n", argv[1], message); return 1; }
  if (!pk_open(&file, argv[1], message, sizeof message)) { fprintf(stderr, "%s\n", message); return 1; }
  vocabulary = pk_vocabulary(file.header, characters);
  pk_close(&file);
  if (vocabulary != PK_V) { fprintf(stderr, "%s records no vocabulary of %d characters\n", argv[1], PK_V); return 1; }
  for (k = 0; k < 256; ++k) token_of[k] = -1;
  for (k = 0; k < vocabulary; ++k) token_of[characters[k]] = k;
  for (i = 0; i < prompt; ++i) {
    if (token_of[(unsigned char)argv[2][i]] < 0) { fprintf(stderr, "the prompt's byte %ld is not in the vocabulary\n", i); return 1; }
  }
  if (prompt == 0 || count < 0 || prompt + count - 1 > PK_T) {
    fprintf(stderr, "a prompt of %ld tokens and %ld more do not fit the context of %d\n", prompt, count, PK_T);
    return 1;
  }
  state = PK_STATE_NEW();
  if (!state) { fprintf(stderr, "out of memory\n"); return 1; }
  fputs(argv[2], stdout);
  fflush(stdout);
  for (i = 0; i < prompt; ++i) {
    if (PK_STEP(w, state, at++, token_of[(unsigned char)argv[2][i]], logits, message, sizeof message)) { fprintf(stderr, "%s\n", message); return 1; }
  }
  for (s = 0; s < count; ++s) {
    long token;
    for (k = 0; k < PK_V; ++k) values[k] = PK_DOUBLE(logits[k]);
    token = pk_argmax(values, PK_V);
    putchar(characters[token]);
    fflush(stdout);
    if (s + 1 < count && PK_STEP(w, state, at++, token, logits, message, sizeof message)) { fprintf(stderr, "%s\n", message); return 1; }
  }
  putchar('\n');
  PK_STATE_FREE(state);
  PK_FREE(w);
  return 0;
}
)C";

}  // namespace

std::string c_generate_text(const std::string& name, Store logits, const std::string& origin) {
  const std::string N = "presk_" + name;
  std::ostringstream out;
  out << "/* " << origin << ": generate.c, presk generate's greedy loop\n"
      << "   cc -std=c99 -O2 -ffp-contract=off generate.c -lm -o generate   (beside " << name << ".c and " << name << ".h)\n"
      << "   ./generate WEIGHTS.safetensors PROMPT TOKENS */\n"
      << "#include \"" << name << ".c\"\n\n"
      << "#define PK_V PRESK_" << name << "_VOCABULARY\n#define PK_T PRESK_" << name << "_CONTEXT\n"
      << "#define PK_LOGIT " << c_type(logits) << "\n"
      << "#define PK_DOUBLE(x) " << (logits == Store::bf16 ? "(double)pk_f32_from_bf16(x)" : "(double)(x)") << "\n"
      << "#define PK_WEIGHTS " << N << "_weights\n#define PK_STATE " << N << "_state\n"
      << "#define PK_LOAD " << N << "_load\n#define PK_FREE " << N << "_free\n#define PK_STEP " << N << "_step\n"
      << "#define PK_STATE_NEW " << N << "_state_new\n#define PK_STATE_FREE " << N << "_state_free\n"
      << kGenerate;
  return out.str();
}

}  // namespace presk::export_c
