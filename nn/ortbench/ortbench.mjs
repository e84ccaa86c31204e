// ortbench.mjs times ONNX Runtime (onnxruntime-node, CPU) on the workloads
// of amt's Go benchmark `go test ./nn -run '^$' -bench BenchmarkModels`, so
// that the two can be compared side by side (compare.sh does that).
//
// Usage:
//   node nn/ortbench/ortbench.mjs [-models DIR] [-ort DIR] [-count N]
//                                 [-mintime S] [-warmup S] [-spin 0|1]
//                                 [-threads N] [-run REGEXP] [-list]
//
//   -models   folder of the ONNX models (default: $AMT_SHARED/assets/models,
//             else shared/assets/models beside the repository or one of
//             its parent folders, as amt's Go code finds it)
//   -ort      folder whose node_modules holds onnxruntime-node (default:
//             $ORT_DIR, else <repo>/.cache/ortbench)
//   -count    timed blocks per workload, one output line each, like
//             go test -count (default 5)
//   -mintime  seconds per timed block, at least 1 run (default 1), like
//             go test -benchtime
//   -warmup   seconds of untimed runs first, at least 2 runs (default 1)
//   -spin     1 (default, ONNX Runtime's default): idle intra-op threads
//             spin-wait; 0: they block (session config
//             session.intra_op.allow_spinning=0), which is faster on a
//             machine other processes keep busy
//   -threads  intraOpNumThreads (default 2)
//   -run      only workloads whose name (e.g. squeezenet/b60) matches
//   -list     print the workload names and exit
//
// Session options: CPU execution provider, intraOpNumThreads 2 (-threads),
// interOpNumThreads 1, default graph optimisation (all) and otherwise ONNX
// Runtime's defaults (but see -spin), as the goldens in
// ../shared/golden/onnx were made. One session per model, created before the
// timing; inputs are created once (deterministic values in [-2, 2)).
//
// Output: per workload -count lines in Go's benchmark format, e.g.
//   BenchmarkORT/squeezenet/b1   50   21234567 ns/op   21.23 ms/img   20.90 min-ms/img   21.10 med-ms/img
// where ns/op and ms/img are the block's mean (as `go test -bench` reports),
// min-ms/img and med-ms/img its fastest and median run.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Workloads: name (as the Go sub-benchmark), model file (in the models
// folder, or "testdata:" + a path in nn/testdata/models), input shape per
// image, batch. Keep in step with BenchmarkModels in ../*_test.go.
const WORKLOADS = [
  { name: 'squeezenet/b1', model: 'cifar10_squeezenet1_1.onnx', chw: [3, 224, 224], batch: 1 },
  // The exhaustive sweep: 60 follow-up images of one source image per call.
  { name: 'squeezenet/b60', model: 'cifar10_squeezenet1_1.onnx', chw: [3, 224, 224], batch: 60 },
  { name: 'resnet20/b1', model: 'cifar10_resnet20.onnx', chw: [3, 32, 32], batch: 1 },
  { name: 'resnet20/b60', model: 'cifar10_resnet20.onnx', chw: [3, 32, 32], batch: 60 },
  { name: 'features512/b1', model: 'features512_squeezenet1_1.onnx', chw: [3, 224, 224], batch: 1 },
  { name: 'yolov3tiny/b1', model: 'coco_yolov3-tiny.onnx', chw: [3, 416, 416], batch: 1 },
  // Issue #18's small ViT and ConvNeXt (random weights, in nn/testdata/models).
  { name: 'vit/b1', model: 'testdata:arch/vit_bench_o17.onnx', chw: [3, 224, 224], batch: 1 },
  { name: 'convnext/b1', model: 'testdata:arch/convnext_bench_o17.onnx', chw: [3, 224, 224], batch: 1 },
];

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');

// defaultModels returns $AMT_SHARED/assets/models, or the first
// shared/assets/models found beside the repository or a parent folder.
function defaultModels() {
  if (process.env.AMT_SHARED) return path.join(process.env.AMT_SHARED, 'assets', 'models');
  for (let dir = repo; ; dir = path.dirname(dir)) {
    const p = path.join(dir, 'shared', 'assets', 'models');
    if (fs.existsSync(p)) return p;
    if (path.dirname(dir) === dir) return path.resolve(repo, '..', 'shared', 'assets', 'models');
  }
}

function parseArgs(argv) {
  const o = {
    models: defaultModels(),
    ort: process.env.ORT_DIR || path.join(repo, '.cache', 'ortbench'),
    count: 5, mintime: 1, warmup: 1, spin: true, threads: 2, run: null, list: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i].replace(/^--?/, '');
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`flag -${a} needs a value`);
      return argv[++i];
    };
    const num = (v) => {
      const x = Number(v);
      if (!Number.isFinite(x) || x < 0) throw new Error(`flag -${a}: ${JSON.stringify(v)} is not a non-negative number of seconds`);
      return x;
    };
    switch (a) {
      case 'models': o.models = val(); break;
      case 'ort': o.ort = val(); break;
      case 'count': {
        const v = val();
        o.count = Number(v);
        if (!Number.isInteger(o.count) || o.count < 1) throw new Error(`flag -count: ${JSON.stringify(v)} is not a positive integer`);
        break;
      }
      case 'mintime': o.mintime = num(val()); break;
      case 'warmup': o.warmup = num(val()); break;
      case 'spin': {
        const v = val();
        if (v !== '0' && v !== '1') throw new Error(`flag -spin: ${JSON.stringify(v)} is not 0 or 1`);
        o.spin = v === '1';
        break;
      }
      case 'threads': {
        const v = val();
        o.threads = Number(v);
        if (!Number.isInteger(o.threads) || o.threads < 1) throw new Error(`flag -threads: ${JSON.stringify(v)} is not a positive integer`);
        break;
      }
      case 'run': o.run = new RegExp(val()); break;
      case 'list': o.list = true; break;
      case 'h': case 'help':
        process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n\n')[0].replace(/^\/\/ ?/gm, '') + '\n');
        process.exit(0);
      default: throw new Error(`unknown flag ${argv[i]} (see -help)`);
    }
  }
  return o;
}

function loadOrt(dir) {
  try {
    return createRequire(path.resolve(dir, 'package.json'))('onnxruntime-node');
  } catch (err) {
    throw new Error(`cannot load onnxruntime-node from ${dir}/node_modules (install it with ` +
      `npm install --prefix ${dir} onnxruntime-node@1.30.0 --ignore-scripts, or set -ort/$ORT_DIR): ${err.message}`);
  }
}

function input(n) {
  // A fixed xorshift sequence: the same bytes on every run and machine.
  const x = new Float32Array(n);
  let s = 0x9e3779b9 >>> 0;
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    x[i] = (s / 2 ** 32) * 4 - 2;
  }
  return x;
}

// modelPath resolves a workload's model: in the models folder, or, with the
// prefix "testdata:", in nn/testdata/models of the repository.
function modelPath(o, model) {
  if (model.startsWith('testdata:')) return path.join(repo, 'nn', 'testdata', 'models', model.slice('testdata:'.length));
  return path.join(o.models, model);
}

async function bench(ort, sessions, w, o) {
  const file = modelPath(o, w.model);
  if (!sessions.has(file)) {
    if (!fs.existsSync(file)) throw new Error(`${w.name}: model ${file} not found (set -models or $AMT_SHARED)`);
    const opts = { executionProviders: ['cpu'], intraOpNumThreads: o.threads, interOpNumThreads: 1 };
    if (!o.spin) opts.extra = { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } };
    sessions.set(file, await ort.InferenceSession.create(file, opts));
  }
  const s = sessions.get(file);
  const shape = [w.batch, ...w.chw];
  const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', input(shape.reduce((a, b) => a * b, 1)), shape) };
  const once = async () => {
    const t = process.hrtime.bigint();
    const out = await s.run(feeds);
    const dt = Number(process.hrtime.bigint() - t);
    for (const k of Object.keys(out)) out[k].dispose?.();
    return dt;
  };
  const warmEnd = performance.now() + o.warmup * 1000;
  for (let i = 0; i < 2 || performance.now() < warmEnd; i++) await once();
  const perImg = (ns) => (ns / 1e6 / w.batch).toFixed(3);
  const lines = [];
  for (let c = 0; c < o.count; c++) {
    const times = [];
    const end = performance.now() + o.mintime * 1000;
    while (times.length < 1 || performance.now() < end) times.push(await once());
    times.sort((a, b) => a - b);
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    lines.push(`BenchmarkORT/${w.name}\t${times.length}\t${Math.round(mean)} ns/op\t${perImg(mean)} ms/img\t` +
      `${perImg(times[0])} min-ms/img\t${perImg(times[times.length >> 1])} med-ms/img`);
  }
  return lines.join('\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const ws = WORKLOADS.filter((w) => !o.run || o.run.test(w.name));
  if (o.list) {
    for (const w of ws) console.log(w.name);
    return;
  }
  if (ws.length === 0) throw new Error(`no workload matches -run ${o.run}`);
  const ort = loadOrt(o.ort);
  console.log(`# onnxruntime-node ${ort.env.versions?.node ?? '?'}, CPU, intraOpNumThreads ${o.threads}, interOpNumThreads 1, ` +
    `spinning ${o.spin ? 'on' : 'off'}; ` +
    `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const sessions = new Map();
  for (const w of ws) console.log(await bench(ort, sessions, w, o));
}

main().catch((err) => {
  console.error(`ortbench: ${err.message}`);
  process.exit(1);
});
