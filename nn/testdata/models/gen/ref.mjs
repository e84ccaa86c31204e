// ref.mjs computes the reference outputs of amt's ONNX test fixtures with
// ONNX Runtime and completes nn/testdata/models/manifest.json.
//
// Provenance documentation only: nothing at build or test time runs this.
// Run it after gen.py (see ../README.md):
//
//   npm install --prefix /tmp/ort onnxruntime-node@1.30.0 --ignore-scripts
//   ORT_DIR=/tmp/ort node nn/testdata/models/gen/ref.mjs [--scratch DIR]
//
// For every manifest entry it runs the model on the stored inputs with the
// CPU execution provider (intraOpNumThreads 2, interOpNumThreads 1, default
// graph optimisation, as the shared golden/onnx outputs were made), writes
// each output as float32 little-endian C order, and fills in the output
// shapes and the tolerances. It also checks that
//   - a second run of the same session gives bit-identical outputs,
//   - ONNX Runtime with graph optimisation disabled agrees (max |diff|),
//   - for the architectures, PyTorch's outputs (from gen.py's --scratch)
//     agree (max |diff|),
// and records these differences per entry so that the tolerances can be
// judged against them.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(here); // nn/testdata/models
const ortDir = process.env.ORT_DIR || '/tmp/ort';
const ort = createRequire(path.resolve(ortDir, 'package.json'))('onnxruntime-node');

// Tolerances, checked as |got - want| <= atol + rtol*|want| element-wise.
// Single operators: 5e-5 + 5e-5*|want| <= 1e-4*max(1,|want|), the bound of
// issue #2's acceptance, and far above float32 rounding of one op.
const OP_TOL = { atol: 5e-5, rtol: 5e-5 };
// Whole networks: the same relative bound on elements near the largest
// output, 1e-4*max(1, max|want|) absolute, because the rounding error of a
// deep float32 network scales with the activations, not with each logit.
const ARCH_REL = 1e-4;

function readF32(file, shape) {
  const buf = fs.readFileSync(path.join(root, file));
  const n = shape.reduce((a, b) => a * b, 1);
  if (buf.length !== 4 * n) throw new Error(`${file}: ${buf.length} bytes, want ${4 * n} for shape [${shape}]`);
  const out = new Float32Array(n);
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.length);
  for (let i = 0; i < n; i++) out[i] = dv.getFloat32(4 * i, true);
  return out;
}

function writeF32(file, data) {
  const buf = Buffer.alloc(4 * data.length);
  for (let i = 0; i < data.length; i++) buf.writeFloatLE(data[i], 4 * i);
  fs.writeFileSync(path.join(root, file), buf);
}

function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

function maxAbs(a) {
  let m = 0;
  for (const v of a) m = Math.max(m, Math.abs(v));
  return m;
}

// Round up to 2 significant digits so that the manifest stays readable.
function roundUp(x) {
  if (x === 0) return 0;
  const e = Math.floor(Math.log10(x)) - 1;
  return Number((Math.ceil(x / 10 ** e) * 10 ** e).toPrecision(2));
}

async function run(file, feeds, level) {
  const s = await ort.InferenceSession.create(path.join(root, file), {
    executionProviders: ['cpu'], intraOpNumThreads: 2, interOpNumThreads: 1, graphOptimizationLevel: level,
  });
  const a = await s.run(feeds);
  const b = await s.run(feeds);
  const out = {};
  for (const k of s.outputNames) {
    out[k] = { dims: a[k].dims, data: toF32(a[k].data) };
    if (maxAbsDiff(out[k].data, toF32(b[k].data)) !== 0) throw new Error(`${file}: second run differs on ${k}`);
  }
  return [s.outputNames, out];
}

// toF32 returns a tensor's values as float32: integer outputs (ArgMax,
// TopK indices: BigInt64Array) are compared as floats, as amt returns them.
function toF32(data) {
  if (data instanceof Float32Array) return data;
  return Float32Array.from(data, (v) => Number(v));
}

// --only REGEXP: compute only the entries whose name matches (gen.py --only).
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt >= 0 ? new RegExp(process.argv[onlyAt + 1]) : null;

const manifestPath = path.join(root, 'manifest.json');
const entries = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
let worst = { op: 0, arch: 0 };
for (const e of entries) {
  if (only && !only.test(e.name)) continue;
  const feeds = {};
  for (const inp of e.inputs) feeds[inp.name] = new ort.Tensor('float32', readF32(inp.file, inp.shape), inp.shape);
  const [names, ys] = await run(e.file, feeds, 'all');
  const [, raw] = await run(e.file, feeds, 'disabled');
  if (names.length !== e.outputs.length) throw new Error(`${e.name}: ${names.length} outputs, manifest has ${e.outputs.length}`);
  let mx = 0;
  let dOpt = 0;
  let dTorch = null;
  e.outputs.forEach((o, i) => {
    if (names[i] !== o.name) throw new Error(`${e.name}: output ${i} is ${names[i]}, manifest says ${o.name}`);
    const y = ys[o.name];
    o.shape = y.dims.map(Number);
    writeF32(o.file, y.data);
    mx = Math.max(mx, maxAbs(y.data));
    dOpt = Math.max(dOpt, maxAbsDiff(y.data, raw[o.name].data));
    if (e._torch) {
      const t = readF32Abs(e._torch[o.name], y.data.length);
      dTorch = Math.max(dTorch ?? 0, maxAbsDiff(y.data, t));
    }
  });
  if (e.kind === 'op') {
    e.atol = OP_TOL.atol;
    e.rtol = OP_TOL.rtol;
  } else {
    e.atol = roundUp(ARCH_REL * Math.max(1, mx));
    e.rtol = 0;
  }
  e.max_abs_output = Number(mx.toPrecision(6));
  e.diff_ort_unoptimised = Number(dOpt.toPrecision(3));
  if (dTorch !== null) e.diff_pytorch = Number(dTorch.toPrecision(3));
  delete e._torch;
  const d = Math.max(dOpt, dTorch ?? 0);
  worst[e.kind] = Math.max(worst[e.kind], d / (e.atol + e.rtol * mx));
  console.log(`${e.name.padEnd(40)} out ${e.outputs.map((o) => `[${o.shape}]`).join(' ')} max|y| ${mx.toPrecision(4)} ` +
    `atol ${e.atol} | ORT-unopt ${dOpt.toPrecision(2)}${dTorch !== null ? ` torch ${dTorch.toPrecision(2)}` : ''}`);
}
// One field per line, but arrays of numbers or strings (shapes, ops) on one.
const json = JSON.stringify(entries, null, 1)
  .replace(/\[\s+([^[\]{}]*?)\s+\]/g, (_, inner) => `[${inner.split(/,\s+/).join(', ')}]`);
fs.writeFileSync(manifestPath, json + '\n');
console.log(`worst other-implementation difference / tolerance: ops ${worst.op.toPrecision(3)}, archs ${worst.arch.toPrecision(3)}`);

function readF32Abs(file, n) {
  const buf = fs.readFileSync(file);
  if (buf.length !== 4 * n) throw new Error(`${file}: ${buf.length} bytes, want ${4 * n}`);
  return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
}
