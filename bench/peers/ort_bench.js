#!/usr/bin/env node
/*
 * ort_bench.js - times an ONNX model with ONNX Runtime (npm
 * onnxruntime-node, installed by setup.sh into bench/peers/node_modules).
 *
 *   node bench/peers/ort_bench.js MODEL.onnx [--threads N] [--runs R]
 *        [--warmup W] [--input NAME=x.npy | x.npy]... [--json]
 *   node bench/peers/ort_bench.js --info
 *
 * Inputs come from .npy files (bench/run_bench.py passes the same files
 * to every runtime), bound by name or in order. Prints the median and
 * minimum latency of the timed runs; --json prints one JSON line. The
 * session uses the CPU execution provider, every graph optimization,
 * intra-op threads N and one inter-op thread (sequential execution).
 * --info prints, as one JSON line, what the harnesses print above their
 * tables: ONNX Runtime's version, the native library it loaded (a
 * native CPU build, not the WebAssembly one), the session options above
 * and the CPU's vector extensions (ONNX Runtime's MLAS picks its kernels
 * from them at run time).
 */
'use strict';
const fs = require('fs');
const path = require('path');

function usage(msg) {
  process.stderr.write('ort_bench.js: ' + msg + '\n');
  process.exit(2);
}

function parseArgs(argv) {
  const a = {model: null, threads: 1, runs: 20, warmup: 3, inputs: [], json: false, info: false};
  for (let i = 0; i < argv.length; i++) {
    const o = argv[i];
    const val = () => { if (i + 1 >= argv.length) usage(o + ' needs a value'); return argv[++i]; };
    if (o === '--threads') a.threads = parseInt(val(), 10);
    else if (o === '--runs') a.runs = parseInt(val(), 10);
    else if (o === '--warmup') a.warmup = parseInt(val(), 10);
    else if (o === '--input' || o === '-i') a.inputs.push(val());
    else if (o === '--json') a.json = true;
    else if (o === '--info') a.info = true;
    else if (o.startsWith('-')) usage('unknown option ' + o);
    else a.model = o;
  }
  if (!a.model && !a.info) usage('no MODEL.onnx given');
  if (!(a.runs >= 1) || !(a.warmup >= 0) || !(a.threads >= 0)) usage('bad count');
  return a;
}

/* A little-endian .npy file as [type, dims, typed array] for ort.Tensor. */
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(file + ': not an .npy file');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(file + ': Fortran order');
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1]
      .split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const off = hstart + hlen;
  const data = buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + buf.length);
  const kinds = {
    '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
    '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
    '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array],
    '<i2': ['int16', Int16Array], '|b1': ['bool', Uint8Array],
  };
  const k = kinds[descr];
  if (!k) throw new Error(file + ': dtype ' + descr + ' not supported here');
  const arr = new k[1](data.slice(0));
  return [k[0], shape, k[0] === 'bool' ? Uint8Array.from(arr) : arr];
}

/* The resident-set high-water mark in MiB: VmHWM from /proc/self/status
 * (this process's own; Linux carries maxRSS across exec, so node started
 * by a large harness would report the harness's peak), else maxRSS. */
function peakRssMiB() {
  try {
    const m = /^VmHWM:\s*(\d+)\s*kB/m.exec(fs.readFileSync('/proc/self/status', 'latin1'));
    if (m) return Number(m[1]) / 1024;
  } catch (e) { /* no /proc: fall back */ }
  return process.resourceUsage().maxRSS / 1024;
}

/* The session options every timed run uses (and --info reports). */
function sessionOptions(threads) {
  return {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
  };
}

/* What --info prints: the version, the native library that require()
 * mapped into this process (from /proc/self/maps: the CPU build, not the
 * WebAssembly one), the session options and the CPU's vector
 * extensions. */
function info(ort) {
  const maps = fs.readFileSync('/proc/self/maps', 'latin1').split('\n');
  const found = [...new Set(maps.map((l) => l.split(/\s+/).pop())
      .filter((p) => /libonnxruntime\.so|onnxruntime_binding\.node/.test(p)))];
  const cpu = fs.readFileSync('/proc/cpuinfo', 'latin1');
  const flags = (/^flags\s*:(.*)$/m.exec(cpu) || ['', ''])[1].split(/\s+/);
  const isa = ['avx2', 'fma', 'avx512f', 'avx512bw', 'avx512_vnni', 'avx512_bf16']
      .filter((f) => flags.includes(f));
  const o = sessionOptions(0);
  console.log(JSON.stringify({
    runtime: 'onnxruntime-node', version: ort.env.versions,
    native: found, native_cpu: found.some((p) => /libonnxruntime\.so/.test(p)),
    execution_provider: o.executionProviders[0],
    graph_optimization: o.graphOptimizationLevel,
    execution_mode: o.executionMode, inter_op_threads: o.interOpNumThreads,
    cpu_isa: isa,
  }));
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    process.stderr.write('ort_bench.js: onnxruntime-node is not installed ' +
                         '(run sh bench/peers/setup.sh): ' + e.message + '\n');
    process.exit(77);
  }
  if (a.info) return info(ort);
  const session = await ort.InferenceSession.create(a.model, sessionOptions(a.threads));
  const feeds = {};
  a.inputs.forEach((spec, i) => {
    const eq = spec.indexOf('=');
    const name = eq > 0 ? spec.slice(0, eq) : session.inputNames[i];
    const [type, dims, data] = readNpy(eq > 0 ? spec.slice(eq + 1) : spec);
    feeds[name] = new ort.Tensor(type, data, dims);
  });
  for (const n of session.inputNames)
    if (!feeds[n]) usage('no --input for ' + n);
  for (let i = 0; i < a.warmup; i++) await session.run(feeds);
  const lat = [];
  /* the process's CPU time per timed run (user + system, every thread):
   * at one thread a figure that other tenants' load does not inflate */
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < a.runs; i++) {
    const t = process.hrtime.bigint();
    await session.run(feeds);
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000 / a.runs;
  const s = lat.slice().sort((x, y) => x - y);
  const med = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  const rss = peakRssMiB();
  if (a.json) {
    console.log(JSON.stringify({model: a.model, median_ms: med, min_ms: s[0],
                                runs: a.runs, threads: a.threads,
                                peak_rss_mib: rss, cpu_ms: cpuMs,
                                ort: ort.env.versions}));
  } else {
    console.log('model:   ' + a.model);
    console.log('latency: median ' + med.toFixed(3) + ' ms, min ' + s[0].toFixed(3) +
                ' ms (' + a.runs + ' runs, ' + a.warmup + ' warmup, ' + a.threads + ' threads)');
    console.log('memory:  peak RSS ' + rss.toFixed(1) + ' MiB');
  }
}

main().catch((e) => { process.stderr.write('ort_bench.js: ' + e.message + '\n'); process.exit(1); });
