# Decodes a safetensors file with json + struct only; compares each tensor to metadata "expected".
import json, struct, sys
raw = open(sys.argv[1], 'rb').read()
(length,) = struct.unpack('<Q', raw[:8])
header, data = json.loads(raw[8:8 + length]), raw[8 + length:]
meta = header.pop('__metadata__', {})
expected = json.loads(meta['expected'])
codes = {'F64': 'd', 'F32': 'f', 'BF16': 'H', 'I8': 'b', 'I32': 'i', 'I64': 'q', 'U8': 'B', 'BOOL': '?'}
failures = int(set(expected) != set(header))
for name, entry in sorted(header.items()):
    (begin, end), code = entry['data_offsets'], codes[entry['dtype']]
    values = list(struct.unpack('<%d%s' % ((end - begin) // struct.calcsize(code), code), data[begin:end]))
    if entry['dtype'] == 'BF16':  # bf16 is the top half of an f32
        values = [struct.unpack('<f', struct.pack('<I', v << 16))[0] for v in values]
    if 'presk:i4:' + name in meta:  # signed nibbles, two per U8 byte, low nibble first
        values = [(b >> s & 15) - 16 * (b >> s & 8 > 0) for b in values for s in (0, 4)][:len(expected[name])]
    same = len(values) == len(expected[name]) and all(a == b or (a != a and b != b) for a, b in zip(values, expected[name]))
    print(name, entry['dtype'], values, 'ok' if same else 'MISMATCH, expected %s' % expected[name])
    failures += not same
sys.exit(1 if failures else 0)
