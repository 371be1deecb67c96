// Runs ONNX models on ONNX Runtime's CPU provider (npm onnxruntime-node) for the import tests:
//   node ort_run.js MANIFEST.json OUT.json
// MANIFEST: [{name, model, inputs: {NAME: {type: "float32"|"int64"|"bool"|"uint8"|"int8"|"int32", dims, data}}}]
// (int64 data as decimal strings or numbers: BigInt reads either, strings exactly beyond 2^53)
// OUT: {name: {OUTPUT: {dims, data}}}, every value as a JSON number.
const fs = require('fs');
const ort = require('onnxruntime-node');

function tensorOf(input) {
  if (input.type === 'int64') return new ort.Tensor('int64', BigInt64Array.from(input.data.map(BigInt)), input.dims);
  if (input.type === 'bool') return new ort.Tensor('bool', Uint8Array.from(input.data), input.dims);
  if (input.type === 'uint8') return new ort.Tensor('uint8', Uint8Array.from(input.data), input.dims);
  if (input.type === 'int8') return new ort.Tensor('int8', Int8Array.from(input.data), input.dims);
  if (input.type === 'int32') return new ort.Tensor('int32', Int32Array.from(input.data), input.dims);
  return new ort.Tensor('float32', Float32Array.from(input.data), input.dims);
}

async function main() {
  const [manifestPath, outPath] = process.argv.slice(2);
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const results = {};
  for (const item of manifest) {
    const session = await ort.InferenceSession.create(item.model, {executionProviders: ['cpu'], intraOpNumThreads: 1});
    const feeds = {};
    for (const [name, input] of Object.entries(item.inputs)) feeds[name] = tensorOf(input);
    const outputs = await session.run(feeds);
    results[item.name] = {};
    for (const [name, tensor] of Object.entries(outputs)) {
      results[item.name][name] = {dims: tensor.dims, data: Array.from(tensor.data, Number)};
    }
  }
  fs.writeFileSync(outPath, JSON.stringify(results));
}

main().catch((error) => { console.error(error); process.exit(1); });
