// ort_accuracy.js MODEL X.npy Y.npy: ONNX Runtime's accuracy of a
// classifier (input "x", output "logits") on f32 images and int64 labels,
// printed as "onnxruntime accuracy R of N". Reads only C-order .npy files
// of those two dtypes, which is what gen_train_digits.py writes.
const path = require('path');
const fs = require('fs');
const ort = require(path.join(process.env.ORT_MODULES, 'onnxruntime-node'));

function npy(file) {
    const b = fs.readFileSync(file);
    const hl = b.readUInt16LE(8);
    const h = b.subarray(10, 10 + hl).toString();
    const shape = h.match(/'shape': \((.*?)\)/)[1].split(',')
                      .filter(s => s.trim()).map(Number);
    const body = b.buffer.slice(b.byteOffset + 10 + hl, b.byteOffset + b.length);
    const f32 = h.includes("'<f4'");
    return {shape, data: f32 ? new Float32Array(body) : new BigInt64Array(body)};
}

(async () => {
    const [model, xf, yf] = process.argv.slice(2);
    const s = await ort.InferenceSession.create(model);
    const x = npy(xf), y = npy(yf);
    const r = await s.run({x: new ort.Tensor('float32', x.data, x.shape)});
    const l = r.logits.data, n = x.shape[0], c = l.length / n;
    let right = 0;
    for (let i = 0; i < n; i++) {
        let best = 0;
        for (let k = 1; k < c; k++)
            if (l[i * c + k] > l[i * c + best]) best = k;
        if (BigInt(best) === y.data[i]) right++;
    }
    console.log(`onnxruntime accuracy ${right / n} of ${n}`);
})().catch(e => { console.error(e.message); process.exit(1); });
