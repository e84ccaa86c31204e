#!/usr/bin/python3
"""Makes the input-convention fixtures of amt's classifier SUT (issue #35).

One tiny CNN with random but fixed weights (numpy's default_rng(SEED)) is
written once per input convention. Every model but the twin starts with
an adapter of ONNX operators that maps its convention's input back to the
twin's (NCHW, RGB, pixels/255 normalised with ImageNet's mean and std), so
on the same image every model computes the twin's logits up to float32
rounding:

  twin_nchw_rgb.onnx   [N,3,32,32] RGB, unit scale, ImageNet mean/std (amt's default)
  nhwc.onnx            [N,32,32,3] RGB, unit scale, ImageNet mean/std (Keras/tf2onnx layout)
  bgr_pixel.onnx       [N,3,32,32] BGR, 0-255, minus mean [123.675, 116.28, 103.53] (R, G, B; Caffe/OpenCV)
  nhwc_bgr_pixel.onnx  [N,32,32,3] BGR, 0-255, minus the same mean (Keras's "caffe" mode)
  symmetric.onnx       [N,3,32,32] RGB, v/127.5 - 1 in [-1, 1] (Inception-style)
  gray.onnx            [N,1,32,32] luma, unit scale, mean 0.5, std 0.25 (the twin on the
                       luma repeated in R, G and B)

The network: Conv 3->8 (3x3, stride 2, pad 1), Relu, Conv 8->16 (3x3,
stride 2, pad 1), Relu, GlobalAveragePool, Flatten, Gemm 16->10. Weights
are He-normal draws scaled by GAIN, the logits' bias has a standard
deviation of FC_BIAS: with them the random network's top-1 classes spread
over the classes on CIFAR-10 images (the most frequent gets under half),
and collapse onto one class when the input convention is wrong (0-255
fed [0, 1], or [0, 1] fed 0-255), as a trained network's do. The script
prints the spread.

The models are written as ONNX protobuf by hand (no torch or onnx package
is needed; opset 13). Run offline with Debian's Python and numpy:
/usr/bin/python3 make.py [cifar10/test_batch_first1017.bin]. Nothing reads
Python at test time; the .onnx files are committed.
"""
import os
import struct
import sys

import numpy as np

SEED = 4  # of seeds 1-29, one whose classes spread (see main) and collapse when the convention is wrong
GAIN = 2.0
FC_BIAS = 0.5  # the logits' bias: what a near-constant (wrongly scaled) input gets
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
PIXEL_MEAN = np.array([123.675, 116.28, 103.53], np.float32)  # R, G, B: ImageNet's mean x 255
GRAY_MEAN, GRAY_STD = 0.5, 0.25
HERE = os.path.dirname(os.path.abspath(__file__))


# --- protobuf wire format -------------------------------------------------

def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(num, wt):
    return varint(num << 3 | wt)


def f_varint(num, v):
    return key(num, 0) + varint(v)


def f_bytes(num, b):
    if isinstance(b, str):
        b = b.encode()
    return key(num, 2) + varint(len(b)) + b


def f_float(num, v):
    return key(num, 5) + struct.pack("<f", v)


# --- ONNX messages ---------------------------------------------------------

FLOAT, INT64 = 1, 7


def tensor(name, arr):
    """TensorProto: dims=1, data_type=2, name=8, raw_data=9."""
    arr = np.ascontiguousarray(arr)
    b = b"".join(f_varint(1, d) for d in arr.shape)
    dt = INT64 if arr.dtype == np.int64 else FLOAT
    b += f_varint(2, dt) + f_bytes(8, name) + f_bytes(9, arr.astype("<i8" if dt == INT64 else "<f4").tobytes())
    return b


def attr(name, v):
    """AttributeProto: name=1, f=2, i=3, ints=8, type=20."""
    if isinstance(v, float):
        return f_bytes(1, name) + f_float(2, v) + f_varint(20, 1)
    if isinstance(v, int):
        return f_bytes(1, name) + f_varint(3, v) + f_varint(20, 2)
    return f_bytes(1, name) + b"".join(f_varint(8, x) for x in v) + f_varint(20, 7)


def node(op, ins, outs, **attrs):
    """NodeProto: input=1, output=2, name=3, op_type=4, attribute=5."""
    b = b"".join(f_bytes(1, i) for i in ins) + b"".join(f_bytes(2, o) for o in outs)
    b += f_bytes(3, outs[0] + "_node") + f_bytes(4, op)
    return b + b"".join(f_bytes(5, attr(k, v)) for k, v in attrs.items())


def value(name, dims):
    """ValueInfoProto name=1 type=2 {tensor_type=1 {elem_type=1, shape=2 {dim=1 {dim_value=1 | dim_param=2}}}}."""
    shape = b"".join(f_bytes(1, f_bytes(2, d) if isinstance(d, str) else f_varint(1, d)) for d in dims)
    return f_bytes(1, name) + f_bytes(2, f_bytes(1, f_varint(1, FLOAT) + f_bytes(2, shape)))


def model(nodes, inits, inp, out):
    """ModelProto: ir_version=1, producer_name=2, graph=7, opset_import=8."""
    g = b"".join(f_bytes(1, n) for n in nodes) + f_bytes(2, "amt-conventions")
    g += b"".join(f_bytes(5, tensor(n, a)) for n, a in inits)
    g += f_bytes(11, value(*inp)) + f_bytes(12, value(*out))
    return f_varint(1, 7) + f_bytes(2, "amt sut/testdata/conventions/make.py") + f_bytes(7, g) + f_bytes(8, f_varint(2, 13))


# --- the network -------------------------------------------------------------

def weights():
    rng = np.random.default_rng(SEED)

    def he(shape, fan_in):
        return (rng.standard_normal(shape) * GAIN * np.sqrt(2.0 / fan_in)).astype(np.float32)

    return {
        "c1.w": he((8, 3, 3, 3), 27), "c1.b": (rng.standard_normal(8) * 0.1).astype(np.float32),
        "c2.w": he((16, 8, 3, 3), 72), "c2.b": (rng.standard_normal(16) * 0.1).astype(np.float32),
        "fc.w": he((10, 16), 16), "fc.b": (rng.standard_normal(10) * FC_BIAS).astype(np.float32),
    }


def net_nodes(x):
    """The twin's nodes from tensor x (NCHW RGB, normalised) to logits."""
    conv = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    return [
        node("Conv", [x, "c1.w", "c1.b"], ["h1"], **conv),
        node("Relu", ["h1"], ["r1"]),
        node("Conv", ["r1", "c2.w", "c2.b"], ["h2"], **conv),
        node("Relu", ["h2"], ["r2"]),
        node("GlobalAveragePool", ["r2"], ["p"]),
        node("Flatten", ["p"], ["f"], axis=1),
        node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], transB=1),
    ]


def normalise(u):
    """Nodes from u (NCHW RGB in [0, 1]) to the twin's input "x"."""
    return [node("Sub", [u, "mean"], ["centred"]), node("Div", ["centred", "std"], ["x"])]


C = lambda a: np.array(a, np.float32).reshape(1, 3, 1, 1)
NORM = [("mean", C(MEAN)), ("std", C(STD))]

MODELS = {
    "twin_nchw_rgb.onnx": ([], [], ["N", 3, 32, 32], "input"),
    "nhwc.onnx": ([node("Transpose", ["input"], ["x"], perm=[0, 3, 1, 2])], [], ["N", 32, 32, 3], None),
    "bgr_pixel.onnx": ([node("Gather", ["input", "bgr"], ["rgbx"], axis=1), node("Add", ["rgbx", "pmean"], ["v"]),
                        node("Div", ["v", "c255"], ["u"])] + normalise("u"),
                       [("bgr", np.array([2, 1, 0], np.int64)), ("pmean", C(PIXEL_MEAN)), ("c255", np.array(255, np.float32))] + NORM,
                       ["N", 3, 32, 32], None),
    "nhwc_bgr_pixel.onnx": ([node("Transpose", ["input"], ["nchw"], perm=[0, 3, 1, 2]), node("Gather", ["nchw", "bgr"], ["rgbx"], axis=1),
                             node("Add", ["rgbx", "pmean"], ["v"]), node("Div", ["v", "c255"], ["u"])] + normalise("u"),
                            [("bgr", np.array([2, 1, 0], np.int64)), ("pmean", C(PIXEL_MEAN)), ("c255", np.array(255, np.float32))] + NORM,
                            ["N", 32, 32, 3], None),
    "symmetric.onnx": ([node("Add", ["input", "one"], ["s"]), node("Div", ["s", "two"], ["u"])] + normalise("u"),
                       [("one", np.array(1, np.float32)), ("two", np.array(2, np.float32))] + NORM, ["N", 3, 32, 32], None),
    "gray.onnx": ([node("Mul", ["input", "gstd"], ["gs"]), node("Add", ["gs", "gmean"], ["l"]),
                   node("Concat", ["l", "l", "l"], ["u"], axis=1)] + normalise("u"),
                  [("gstd", np.array(GRAY_STD, np.float32)), ("gmean", np.array(GRAY_MEAN, np.float32))] + NORM, ["N", 1, 32, 32], None),
}


def forward(w, x):
    """The twin in numpy (float64), for the spread of its classes."""
    def conv(x, wt, b):
        n, c, h, wd = x.shape
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        oh, ow = (h + 1) // 2, (wd + 1) // 2
        out = np.zeros((n, wt.shape[0], oh, ow))
        for dy in range(3):
            for dx in range(3):
                patch = xp[:, :, dy:dy + 2 * oh:2, dx:dx + 2 * ow:2]
                out += np.einsum("nchw,oc->nohw", patch, wt[:, :, dy, dx])
        return out + b.reshape(1, -1, 1, 1)
    h = np.maximum(conv(x, w["c1.w"], w["c1.b"]), 0)
    h = np.maximum(conv(h, w["c2.w"], w["c2.b"]), 0)
    return h.mean(axis=(2, 3)) @ w["fc.w"].T + w["fc.b"]


def main():
    w = weights()
    for name, (adapter, consts, dims, x) in MODELS.items():
        nodes = adapter + net_nodes(x or "x")
        b = model(nodes, list(w.items()) + consts, ("input", dims), ("logits", ["N", 10]))
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(b)
        print(name, len(b), "bytes")
    if len(sys.argv) > 1:
        raw = np.fromfile(sys.argv[1], np.uint8).reshape(-1, 3073)
        img = raw[:, 1:].reshape(-1, 3, 32, 32).astype(np.float64) / 255
        x = (img - MEAN.reshape(1, 3, 1, 1)) / STD.reshape(1, 3, 1, 1)
        pred = forward(w, x).argmax(1)
        print("twin's top-1 classes on", len(pred), "images:", np.bincount(pred, minlength=10).tolist())
        print("accuracy", (pred == raw[:, 0]).mean())


if __name__ == "__main__":
    main()
