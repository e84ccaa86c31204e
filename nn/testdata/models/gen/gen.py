#!/usr/bin/python3
"""Generate amt's ONNX test fixtures (models and inputs) in nn/testdata/models.

Provenance documentation only: nothing at build or test time runs this.
See ../README.md for how to regenerate, and ref.mjs for the reference
outputs (computed with ONNX Runtime, not with this script).

Needs Debian's python3-torch (1.13), python3-torchvision (0.14),
python3-onnx (1.12) and python3-numpy:

    /usr/bin/python3 nn/testdata/models/gen/gen.py [--scratch DIR]

It writes, relative to nn/testdata/models:
  arch/<name>.onnx, op/<name>.onnx   the models
  <dir>/<name>.in.<k>.f32            the inputs (float32 LE, C order)
  manifest.json                      entries without reference outputs yet
and, in --scratch (default /tmp/amt-fixtures-torch), PyTorch's own outputs
for the architectures, which ref.mjs compares with ONNX Runtime's to
justify the tolerances.

Everything is seeded: running it twice gives byte-identical files.
"""

import argparse
import json
import os
import re
import zlib

import numpy as np
import onnx
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper
from torch import nn
from torchvision.models import densenet, mobilenetv2, resnet, shufflenetv2, squeezenet, vgg

import zoo

SEED = 20260521
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)  # nn/testdata/models


def rng_for(name):
    """A numpy generator seeded from the global seed and the fixture name."""
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def write_f32(path, arr):
    arr = np.ascontiguousarray(arr, dtype="<f4")
    with open(path, "wb") as f:
        f.write(arr.tobytes())


# ---------------------------------------------------------------------------
# Architectures exported from torchvision.


def randomize(model, name, calib_shape):
    """Seeded random weights, non-trivial eval-mode BatchNorm statistics."""
    g = torch.Generator().manual_seed(zlib.crc32(name.encode()) ^ SEED)
    done = set()  # parameters set by their module's rule
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                fan_in = m.weight[0].numel()
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * (2.0 / fan_in) ** 0.5)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.copy_(0.5 + torch.rand(m.weight.shape, generator=g))
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.2)
                m.reset_running_stats()
                m.momentum = None  # cumulative average over the calibration batches
            elif isinstance(m, nn.ConvTranspose2d):  # issue #18 zoo from here on
                fan_in = m.weight.shape[0] * m.weight[0, 0].numel() / m.stride[0] / m.stride[1]
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * (2.0 / fan_in) ** 0.5)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
            elif isinstance(m, nn.PReLU):
                m.weight.copy_(0.05 + 0.45 * torch.rand(m.weight.shape, generator=g))
            elif hasattr(m, "weight") and hasattr(m, "bias") and type(m).__name__ in (
                    "LayerNorm", "GroupNorm", "InstanceNorm2d", "ManualLayerNorm", "LayerNorm2d"):
                if m.weight is not None:
                    m.weight.copy_(0.5 + torch.rand(m.weight.shape, generator=g))
                    m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.2)
            else:
                continue
            done.update(id(p) for p in m.parameters(recurse=False))
        # Other parameters (attention projections of nn.MultiheadAttention,
        # class tokens, position embeddings, layer scales, relative position
        # bias tables): matrices He-scaled, the rest of order 0.2–1.
        if name in ZOO_NAMES:
            for pname, p in model.named_parameters():
                if id(p) in done:
                    continue
                leaf = pname.rsplit(".", 1)[-1]
                if p.dim() >= 2 and leaf.endswith("weight"):
                    p.copy_(torch.randn(p.shape, generator=g) * (1.0 / p[0].numel()) ** 0.5)
                elif leaf.endswith("bias"):
                    p.copy_(torch.randn(p.shape, generator=g) * 0.1)
                elif "gamma" in leaf or "scale" in leaf:
                    p.copy_(0.3 + 0.7 * torch.rand(p.shape, generator=g))
                else:
                    p.copy_(torch.randn(p.shape, generator=g) * 0.2)
        # Calibrate the running statistics in train mode on random batches so
        # that activations keep a sensible scale through the depth, then
        # perturb them so that they are not just the batch statistics.
        model.train()
        for _ in range(4):
            model(torch.randn(calib_shape, generator=g))
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                std = m.running_var.sqrt()
                m.running_mean.add_(torch.randn(m.running_mean.shape, generator=g) * 0.1 * std)
                m.running_var.mul_(0.7 + 0.7 * torch.rand(m.running_var.shape, generator=g))
    model.eval()
    return model


class SmallResNet(resnet.ResNet):
    """torchvision's ResNet with BasicBlock, every stage's width divided by 4.

    torchvision hard-codes the widths 64..512 (ResNet-18 with 10 classes is
    about 45 MB); this keeps its code (stem, _make_layer, downsample,
    BasicBlock, avgpool, flatten, fc) and only scales the planes.
    """

    def __init__(self, layers, num_classes):
        super().__init__(resnet.BasicBlock, layers, num_classes=num_classes)
        self.fc = nn.Linear(512 // 4 * resnet.BasicBlock.expansion, num_classes)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        return super()._make_layer(block, planes // 4, blocks, stride, dilate)


def small_vgg_bn(num_classes):
    """torchvision's VGG class with make_layers(batch_norm=True) and a small cfg."""
    cfg = [16, "M", 32, "M", 64, 64, "M"]
    m = vgg.VGG(vgg.make_layers(cfg, batch_norm=True), num_classes=num_classes, init_weights=False)
    m.classifier = nn.Sequential(
        nn.Linear(64 * 7 * 7, 64),
        nn.ReLU(True),
        nn.Dropout(p=0.5),
        nn.Linear(64, 64),
        nn.ReLU(True),
        nn.Dropout(p=0.5),
        nn.Linear(64, num_classes),
    )
    return m


# name, constructor, input (C,H,W), description. Heights and widths differ on
# purpose (an H/W swap shows), and are chosen so that the architecture's
# special cases are exercised (see the descriptions).
ARCHS = [
    ("resnet_small", lambda: SmallResNet([1, 1, 1, 1], 10), (3, 64, 80),
     "torchvision ResNet(BasicBlock, [1,1,1,1]) with widths 16/32/64/128 (SmallResNet in gen.py), 10 classes"),
    ("mobilenetv2_w035", lambda: mobilenetv2.MobileNetV2(num_classes=10, width_mult=0.35), (3, 64, 96),
     "torchvision MobileNetV2(width_mult=0.35), 10 classes: depthwise Conv, ReLU6 as Clip, residual Add"),
    ("squeezenet1_0", lambda: squeezenet.squeezenet1_0(num_classes=10), (3, 70, 78),
     "torchvision squeezenet1_0, 10 classes; 70x78 input makes all three MaxPool(ceil_mode=True) round up in H and two in W"),
    ("vgg_bn_small", lambda: small_vgg_bn(10), (3, 112, 56),
     "torchvision VGG + make_layers([16,M,32,M,64,64,M], batch_norm=True), classifier 3136-64-64-10; AdaptiveAvgPool2d(7,7) on 14x7 exports as AveragePool kernel (2,1)"),
    ("densenet_small", lambda: densenet.DenseNet(growth_rate=8, block_config=(2, 2, 2, 2), num_init_features=16, bn_size=2, num_classes=10),
     (3, 64, 80), "torchvision DenseNet(growth_rate=8, block_config=(2,2,2,2), num_init_features=16, bn_size=2), 10 classes: Concat, AveragePool transitions (5->2 floors)"),
    ("shufflenetv2_x050", lambda: shufflenetv2.shufflenet_v2_x0_5(num_classes=10), (3, 64, 96),
     "torchvision shufflenet_v2_x0_5, 10 classes: channel shuffle (Reshape/Transpose), Split (chunk), ReduceMean"),
]
ARCH_OPSETS = [11, 13]
EXPORT_BATCH = 2  # dummy batch used for tracing
STORE_BATCH = 3  # batch of the stored reference (differs: the batch axis must really be dynamic)


def export_arch(name, make, chw, desc, opset, scratch, fold=True, suffix=""):
    torch.manual_seed(SEED)
    model = randomize(make(), name, (8,) + chw)
    fixture = f"{name}_o{opset}{suffix}"
    path = os.path.join(ROOT, "arch", fixture + ".onnx")
    dummy = torch.zeros((EXPORT_BATCH,) + chw)
    torch.onnx.export(
        model, dummy, path, opset_version=opset, input_names=["input"], output_names=["logits"],
        dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}}, do_constant_folding=fold,
    )
    m = onnx.load(path)
    onnx.checker.check_model(m)
    x = rng_for(name).standard_normal((STORE_BATCH,) + chw).astype(np.float32)
    in_file = f"arch/{name}.in.input.f32"  # shared by all opsets of one architecture
    write_f32(os.path.join(ROOT, in_file), x)
    with torch.no_grad():
        y = model(torch.from_numpy(x)).numpy()
    torch_file = os.path.join(scratch, fixture + ".torch.logits.f32")
    write_f32(torch_file, y)
    ops = sorted({n.op_type for n in m.graph.node})
    if not fold:
        desc += "; exported with do_constant_folding=False (unfolded Shape/Gather/Unsqueeze/Concat chains)"
    return {
        "name": fixture, "kind": "arch", "file": f"arch/{fixture}.onnx", "opset": opset,
        "description": desc, "ops": ops,
        "inputs": [{"name": "input", "shape": list(x.shape), "file": in_file}],
        "outputs": [{"name": "logits", "file": f"arch/{fixture}.out.logits.f32"}],
        "_torch": {"logits": torch_file},
    }


# ---------------------------------------------------------------------------
# The zoo of issue #18 (zoo.py): stored and referenced at batch 4, so that
# the test runs batch 4 and each image alone (batch 1); one input file per
# input shape.

ZOO_BATCH = 4
ZOO_NAMES = {z[0] for z in zoo.ZOO + zoo.BENCH}
# Output names of the models with more than one output.
ZOO_OUTPUTS = {"misc_cnn": ["logits", "log_probs", "top5_values", "top5_indices", "argmax"]}


def export_zoo(name, make, chw, desc, opset, scratch):
    torch.manual_seed(SEED)
    model = randomize(make(), name, (8,) + chw)
    fixture = f"{name}_o{opset}"
    path = os.path.join(ROOT, "arch", fixture + ".onnx")
    outs = ZOO_OUTPUTS.get(name, ["logits"])
    torch.onnx.export(
        model, torch.zeros((EXPORT_BATCH,) + chw), path, opset_version=opset, input_names=["input"], output_names=outs,
        dynamic_axes={"input": {0: "N"}, **{o: {0: "N"} for o in outs}},
    )
    m = onnx.load(path)
    onnx.checker.check_model(m)
    shape_name = "x".join(map(str, chw))
    x = rng_for(f"input {shape_name}").standard_normal((ZOO_BATCH,) + chw).astype(np.float32)
    in_file = f"arch/input_{shape_name}.f32"  # shared by the models of this input shape
    write_f32(os.path.join(ROOT, in_file), x)
    with torch.no_grad():
        ys = model(torch.from_numpy(x))
    if not isinstance(ys, tuple):
        ys = (ys,)
    torch_files = {}
    for o, y in zip(outs, ys):
        torch_files[o] = os.path.join(scratch, f"{fixture}.torch.{o}.f32")
        write_f32(torch_files[o], y.float().numpy())
    return {
        "name": fixture, "kind": "arch", "file": f"arch/{fixture}.onnx", "opset": opset,
        "description": desc, "ops": sorted({n.op_type for n in m.graph.node}),
        "inputs": [{"name": "input", "shape": list(x.shape), "file": in_file}],
        "outputs": [{"name": o, "file": f"arch/{fixture}.out.{o}.f32"} for o in outs],
        "_torch": torch_files,
    }


# ---------------------------------------------------------------------------
# Single-operator models built with onnx.helper.

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


class Op:
    """One single-operator (or tiny multi-node) fixture."""

    def __init__(self, name, opsets, build, desc, dyn=False, out_shape=None, int_outputs=()):
        # dyn: the first axis of every run-time input is declared as the
        # symbolic dimension "N" (dim_param), as in exported models.
        # out_shape: the declared output shape where ONNX shape inference
        # cannot find it or disagrees with ONNX Runtime (otherwise it is
        # inferred).
        self.name, self.opsets, self.build, self.desc, self.dyn = name, opsets, build, desc, dyn
        self.out_shape = out_shape
        self.int_outputs = int_outputs  # names of INT64 outputs (indices)


def randn(r, shape, scale=1.0):
    return (r.standard_normal(shape) * scale).astype(np.float32)


def positive(r, shape, lo=0.5, hi=2.0):
    return r.uniform(lo, hi, shape).astype(np.float32)


def away_from_zero(r, shape):
    """Values with |v| in [0.5, 2] and a random sign (safe divisors)."""
    return (positive(r, shape) * r.choice([-1.0, 1.0], shape)).astype(np.float32)


def i64(v):
    return np.array(v, dtype=np.int64)


def f32(v):
    return np.array(v, dtype=np.float32)


def make_op_model(fix, opset):
    r = rng_for(f"{fix.name}/o{opset}")
    nodes, feeds, consts, outs = fix.build(opset, r)
    g = helper.make_graph(
        nodes, fix.name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, (["N"] + list(a.shape[1:])) if fix.dyn else a.shape)
         for n, a in feeds],
        [helper.make_tensor_value_info(o, TensorProto.INT64 if o in fix.int_outputs else TensorProto.FLOAT, fix.out_shape)
         for o in outs],
        initializer=[numpy_helper.from_array(a, n) for n, a in consts],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="amt-gen")
    m.ir_version = 7 if opset <= 14 else 8  # what torch 1.13 writes; readable by every runtime of interest
    if fix.out_shape is None:
        m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m)
    return m, feeds


def conv(x_shape, w_shape, bias=True, **attrs):
    def build(opset, r):
        feeds = [("X", randn(r, x_shape))]
        consts = [("W", randn(r, w_shape, (2.0 / np.prod(w_shape[1:])) ** 0.5))]
        if bias:
            consts.append(("B", randn(r, w_shape[:1], 0.5)))
        node = helper.make_node("Conv", ["X"] + [n for n, _ in consts], ["Y"], **attrs)
        return [node], feeds, consts, ["Y"]
    return build


def one(op, shapes, consts=(), n_out=1, make=randn, **attrs):
    """A one-node graph with run-time inputs of the given shapes, then
    initializers consts = [(name, array)] ("" name = omitted optional input)."""
    def build(opset, r):
        feeds = [(f"X{i}" if len(shapes) > 1 else "X", make(r, s)) for i, s in enumerate(shapes)]
        cs = consts(opset, r) if callable(consts) else list(consts)
        outs = ["Y"] if n_out == 1 else [f"Y{i}" for i in range(n_out)]
        a = attrs["attrs"](opset) if "attrs" in attrs else attrs
        node = helper.make_node(op, [n for n, _ in feeds] + [n for n, _ in cs], outs, **a)
        return [node], feeds, [(n, v) for n, v in cs if n], outs
    return build


def binary(op, a_shape, b_shape, b_const=False):
    def build(opset, r):
        a = randn(r, a_shape)
        b = away_from_zero(r, b_shape) if op == "Div" else randn(r, b_shape)
        feeds = [("A", a)] + ([] if b_const else [("B", b)])
        consts = [("B", b)] if b_const else []
        return [helper.make_node(op, ["A", "B"], ["Y"])], feeds, consts, ["Y"]
    return build


def shape_chain(opset, r):
    """Flatten the PyTorch way: Reshape(X, Concat(Unsqueeze(Gather(Shape(X), 0)), [-1]))."""
    x = randn(r, (2, 3, 4, 5))
    nodes = [
        helper.make_node("Shape", ["X"], ["s"]),
        helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(i64(0), "zero")),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
    ]
    if opset >= 13:
        nodes.append(helper.make_node("Constant", [], ["ax"], value=numpy_helper.from_array(i64([0]), "ax")))
        nodes.append(helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]))
    else:
        nodes.append(helper.make_node("Unsqueeze", ["n"], ["n1"], axes=[0]))
    nodes += [
        helper.make_node("Constant", [], ["m1"], value=numpy_helper.from_array(i64([-1]), "m1")),
        helper.make_node("Concat", ["n1", "m1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["X", "shape"], ["Y"]),
    ]
    return nodes, [("X", x)], [], ["Y"]


def split(axis, sizes, n_out, shape):
    def build(opset, r):
        x = randn(r, shape)
        outs = [f"Y{i}" for i in range(n_out)]
        if sizes is None:
            return [helper.make_node("Split", ["X"], outs, axis=axis)], [("X", x)], [], outs
        if opset >= 13:
            return [helper.make_node("Split", ["X", "split"], outs, axis=axis)], [("X", x)], [("split", i64(sizes))], outs
        return [helper.make_node("Split", ["X"], outs, axis=axis, split=sizes)], [("X", x)], [], outs
    return build


def squeeze_like(op, shape, axes):
    def build(opset, r):
        x = randn(r, shape)
        if axes is None:
            return [helper.make_node(op, ["X"], ["Y"])], [("X", x)], [], ["Y"]
        if opset >= 13:
            return [helper.make_node(op, ["X", "axes"], ["Y"])], [("X", x)], [("axes", i64(axes))], ["Y"]
        return [helper.make_node(op, ["X"], ["Y"], axes=axes)], [("X", x)], [], ["Y"]
    return build


def slice_(shape, starts, ends, axes=None, steps=None):
    def build(opset, r):
        consts = [("starts", i64(starts)), ("ends", i64(ends))]
        if axes is not None:
            consts.append(("axes", i64(axes)))
        if steps is not None:
            consts.append(("steps", i64(steps)))
        return ([helper.make_node("Slice", ["X"] + [n for n, _ in consts], ["Y"])],
                [("X", randn(r, shape))], consts, ["Y"])
    return build


def pad(mode, pads, value=None):
    def build(opset, r):
        consts = [("pads", i64(pads))]
        if value is not None:
            consts.append(("value", f32(value)))
        return ([helper.make_node("Pad", ["X"] + [n for n, _ in consts], ["Y"], mode=mode)],
                [("X", randn(r, (1, 2, 4, 5)))], consts, ["Y"])
    return build


def resize(shape, scales=None, sizes=None, **attrs):
    """Resize with either scales or sizes; opset 11 needs the roi (and the
    scales when sizes are given) as empty tensors, opset 13 may omit them."""
    def build(opset, r):
        x = randn(r, shape)
        consts, names = [], ["X"]
        if opset >= 13:
            names.append("")
        else:
            consts.append(("roi", np.zeros((0,), np.float32)))
            names.append("roi")
        if scales is not None:
            consts.append(("scales", f32(scales)))
            names.append("scales")
        else:
            if opset >= 13:
                names.append("")
            else:
                consts.append(("scales", np.zeros((0,), np.float32)))
                names.append("scales")
            consts.append(("sizes", i64(sizes)))
            names.append("sizes")
        return [helper.make_node("Resize", names, ["Y"], **attrs)], [("X", x)], consts, ["Y"]
    return build


def upsample9(mode, scales):
    def build(opset, r):
        return ([helper.make_node("Upsample", ["X", "scales"], ["Y"], mode=mode)],
                [("X", randn(r, (1, 2, 3, 4)))], [("scales", f32(scales))], ["Y"])
    return build


def clip(lo, hi):
    def build(opset, r):
        x = randn(r, (2, 3, 4, 5), 2.0)
        if opset < 11:
            attrs = {}
            if lo is not None:
                attrs["min"] = lo
            if hi is not None:
                attrs["max"] = hi
            return [helper.make_node("Clip", ["X"], ["Y"], **attrs)], [("X", x)], [], ["Y"]
        names, consts = ["X"], []
        for n, v in (("min", lo), ("max", hi)):
            if v is None:
                names.append("")
            else:
                names.append(n)
                consts.append((n, f32(v)))
        while names[-1] == "":
            names.pop()
        return [helper.make_node("Clip", names, ["Y"])], [("X", x)], consts, ["Y"]
    return build


def dropout(opset, r):
    x = randn(r, (2, 3, 4))
    if opset >= 13:  # ratio is an optional input since opset 12
        return [helper.make_node("Dropout", ["X", "ratio"], ["Y"])], [("X", x)], [("ratio", f32(0.3))], ["Y"]
    return [helper.make_node("Dropout", ["X"], ["Y"], ratio=0.3)], [("X", x)], [], ["Y"]


def batchnorm(opset, r):
    c = 3
    x = randn(r, (2, c, 4, 5))
    consts = [("scale", positive(r, (c,))), ("B", randn(r, (c,))), ("mean", randn(r, (c,))),
              ("var", positive(r, (c,), 0.2, 3.0))]
    return ([helper.make_node("BatchNormalization", ["X"] + [n for n, _ in consts], ["Y"], epsilon=1e-3)],
            [("X", x)], consts, ["Y"])


def gemm(a_shape, b_shape, c_shape=None, b_const=True, **attrs):
    def build(opset, r):
        feeds = [("A", randn(r, a_shape))]
        consts = []
        b = randn(r, b_shape, 0.5)
        if b_const:
            consts.append(("B", b))
        else:
            feeds.append(("B", b))
        names = ["A", "B"]
        if c_shape is not None:
            consts.append(("C", randn(r, c_shape)))
            names.append("C")
        return [helper.make_node("Gemm", names, ["Y"], **attrs)], feeds, consts, ["Y"]
    return build


ALL = [11, 13]
OPS = [
    # Conv: unchanged between opsets 11 and 13; both are generated anyway.
    Op("conv_basic", ALL, conv((2, 3, 7, 9), (4, 3, 3, 3), pads=[1, 1, 1, 1]), "3x3, pads 1, bias"),
    Op("conv_1x1_nobias", ALL, conv((1, 5, 4, 6), (3, 5, 1, 1), bias=False), "1x1 without bias"),
    Op("conv_strides", ALL, conv((1, 3, 9, 8), (5, 3, 3, 2), strides=[2, 3], pads=[1, 0, 1, 0]), "strides (2,3), kernel 3x2"),
    Op("conv_groups", ALL, conv((1, 4, 6, 6), (6, 2, 3, 3), group=2), "group=2"),
    Op("conv_depthwise", ALL, conv((2, 6, 7, 7), (6, 1, 3, 3), group=6, strides=[2, 2], pads=[1, 1, 1, 1]), "depthwise (group=C), stride 2"),
    Op("conv_depthwise_mult", ALL, conv((1, 3, 6, 5), (6, 1, 3, 3), group=3, pads=[1, 1, 1, 1]), "depthwise with channel multiplier 2"),
    Op("conv_dilation", ALL, conv((1, 2, 10, 9), (3, 2, 3, 3), dilations=[2, 3], pads=[2, 3, 2, 3]), "dilations (2,3)"),
    Op("conv_asym_pads", ALL, conv((1, 3, 6, 7), (2, 3, 3, 3), bias=False, pads=[0, 1, 2, 0]), "pads top 0, left 1, bottom 2, right 0"),
    Op("conv_same_upper", ALL, conv((1, 3, 7, 8), (4, 3, 3, 3), auto_pad="SAME_UPPER", strides=[2, 2]), "auto_pad SAME_UPPER, stride 2 (odd total padding)"),
    Op("conv_same_lower", ALL, conv((1, 3, 7, 8), (4, 3, 4, 4), auto_pad="SAME_LOWER", strides=[2, 2]), "auto_pad SAME_LOWER, stride 2, even kernel"),
    Op("batchnorm", ALL, batchnorm, "eval-mode BatchNormalization, epsilon 1e-3"),
    Op("relu", ALL, one("Relu", [(2, 3, 4, 5)]), ""),
    Op("leakyrelu", ALL, one("LeakyRelu", [(2, 3, 4, 5)], alpha=0.13), "alpha 0.13"),
    Op("sigmoid", ALL, one("Sigmoid", [(2, 3, 4, 5)], make=lambda r, s: randn(r, s, 4.0)), "inputs scaled by 4"),
    Op("tanh", ALL, one("Tanh", [(2, 3, 4, 5)], make=lambda r, s: randn(r, s, 2.0)), "inputs scaled by 2"),
    Op("clip_minmax", [9, 11, 13], clip(-0.5, 0.7), "opset 9: min/max attributes; 11, 13: min/max inputs"),
    Op("clip_min_only", [9, 11, 13], clip(-0.3, None), "max omitted"),
    Op("clip_max_only", [11, 13], clip(None, 0.4), "min given as empty input name"),
    Op("softmax_axis1_4d", ALL, one("Softmax", [(2, 3, 4, 5)], axis=1),
       "axis=1 on 4-D: opset 11 normalises over the flattened [3*4*5] per batch item, opset 13 over axis 1 only"),
    Op("softmax_default_3d", ALL, one("Softmax", [(2, 3, 4)], make=lambda r, s: randn(r, s, 3.0)),
       "no axis attribute: default axis 1 (11, coerced to 2-D) vs -1 (13)"),
    Op("softmax_last_2d", ALL, one("Softmax", [(3, 10)], axis=-1, make=lambda r, s: randn(r, s, 5.0)), "classifier-style"),
    Op("add_4d_1d", ALL, binary("Add", (2, 3, 4, 5), (5,)), "numpy broadcasting [2,3,4,5] + [5]"),
    Op("add_bias_const", ALL, binary("Add", (2, 3, 4, 5), (1, 3, 1, 1), b_const=True), "per-channel initializer [1,3,1,1]"),
    Op("sub_4d_3d", ALL, binary("Sub", (2, 3, 4, 5), (3, 1, 5)), "[2,3,4,5] - [3,1,5]"),
    Op("sub_1d_4d", ALL, binary("Sub", (4, 1), (2, 3, 1, 5)), "[4,1] - [2,3,1,5]: lower-rank left operand, result [2,3,4,5]"),
    Op("mul_both_bcast", ALL, binary("Mul", (2, 1, 4, 1), (1, 3, 1, 5)), "both operands broadcast"),
    Op("mul_scalar", ALL, binary("Mul", (2, 3, 4), (), b_const=True), "0-D initializer"),
    Op("div_4d_3d", ALL, binary("Div", (2, 3, 4, 5), (3, 4, 1)), "[2,3,4,5] / [3,4,1], divisors |v| in [0.5,2]"),
    Op("div_same", ALL, binary("Div", (2, 3, 4), (2, 3, 4)), "same shapes"),
    Op("maxpool_basic", ALL, one("MaxPool", [(1, 2, 8, 9)], kernel_shape=[2, 2], strides=[2, 2]), "floor mode drops the last column"),
    Op("maxpool_ceil", ALL, one("MaxPool", [(1, 2, 8, 9)], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1), "ceil_mode rounds up in H (8) and W (9)"),
    Op("maxpool_ceil_pads", ALL, one("MaxPool", [(1, 2, 10, 11)], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1), "ceil_mode with pads"),
    Op("maxpool_ceil_edge", ALL, one("MaxPool", [(1, 1, 5, 5)], kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
       "ceil_mode where the last window would start inside the end padding: ORT (like PyTorch) drops it, 3x3 not 4x4 (see README)",
       out_shape=[1, 1, 3, 3]),
    Op("maxpool_asym_pads", ALL, one("MaxPool", [(1, 2, 7, 6)], kernel_shape=[2, 3], strides=[2, 1], pads=[0, 1, 1, 0]), "asymmetric pads, non-square kernel"),
    Op("avgpool_pads_cip0", ALL, one("AveragePool", [(1, 2, 7, 8)], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0), "count_include_pad=0"),
    Op("avgpool_pads_cip1", ALL, one("AveragePool", [(1, 2, 7, 8)], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1), "count_include_pad=1"),
    Op("avgpool_ceil_cip0", ALL, one("AveragePool", [(1, 2, 8, 9)], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=0), "ceil_mode, count_include_pad=0"),
    Op("avgpool_ceil_cip1", ALL, one("AveragePool", [(1, 2, 8, 9)], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1),
       "ceil_mode, count_include_pad=1: windows past the padded end (divisor, see README)"),
    Op("avgpool_nopad_ceil", ALL, one("AveragePool", [(1, 2, 8, 9)], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1), "ceil_mode without pads: partial last window"),
    Op("globalavgpool", ALL, one("GlobalAveragePool", [(2, 3, 5, 7)]), ""),
    Op("reducemean_hw", ALL, one("ReduceMean", [(2, 3, 5, 7)], axes=[2, 3], keepdims=0), "as ShuffleNetV2's x.mean([2,3]) exports"),
    Op("gemm_linear_dyn", ALL, gemm((3, 8), (10, 8), (10,), transB=1),
       "nn.Linear as exported: input [N,8], B^T, bias initializer [10]; running it twice must give the same result (onnx-go issue 202)",
       dyn=True),
    Op("gemm_trans_alpha_beta", ALL, gemm((4, 3), (5, 4), (1, 5), transA=1, transB=1, alpha=0.7, beta=1.3), "transA, transB, alpha 0.7, beta 1.3, C [1,5]"),
    Op("gemm_bias_col", ALL, gemm((3, 4), (4, 5), (3, 1), beta=0.5), "C [3,1] broadcast along columns"),
    Op("gemm_bias_full", ALL, gemm((3, 4), (4, 5), (3, 5), b_const=False), "C [3,5]; B a run-time input"),
    Op("gemm_bias_scalar", ALL, gemm((3, 4), (4, 5), ()), "0-D C"),
    Op("gemm_nobias", ALL, gemm((3, 4), (5, 4), None, transB=1, alpha=2.0), "C omitted (optional since opset 11)"),
    Op("matmul_2d", ALL, one("MatMul", [(3, 4), (4, 5)]), ""),
    Op("matmul_batched", ALL, one("MatMul", [(2, 3, 4), (2, 4, 5)]), "3-D x 3-D"),
    Op("matmul_bcast_2d", ALL, one("MatMul", [(2, 3, 4, 5)], consts=lambda o, r: [("W", randn(r, (5, 6)))]), "4-D x 2-D initializer"),
    Op("matmul_bcast_batch", ALL, one("MatMul", [(2, 1, 3, 4), (3, 4, 2)]), "batch dims broadcast: [2,1,3,4] x [3,4,2] -> [2,3,3,2]"),
    Op("flatten_axis1", ALL, one("Flatten", [(2, 3, 4, 5)], axis=1), ""),
    Op("flatten_axis2", ALL, one("Flatten", [(2, 3, 4, 5)], axis=2), ""),
    Op("flatten_axis0", ALL, one("Flatten", [(2, 3, 4, 5)], axis=0), "result [1,120]"),
    Op("flatten_axis_neg", ALL, one("Flatten", [(2, 3, 4, 5)], axis=-1), "result [24,5]"),
    Op("reshape_0_m1", ALL, one("Reshape", [(2, 3, 4, 5)], consts=[("shape", i64([0, -1]))]), "shape [0,-1]"),
    Op("reshape_0_mid", ALL, one("Reshape", [(2, 3, 4, 5)], consts=[("shape", i64([0, 3, -1, 1]))]), "shape [0,3,-1,1]"),
    Op("reshape_m1_first", ALL, one("Reshape", [(2, 3, 4, 5)], consts=[("shape", i64([-1, 0, 5]))]), "shape [-1,0,5] -> [8,3,5]"),
    Op("transpose_nhwc", ALL, one("Transpose", [(2, 3, 4, 5)], perm=[0, 2, 3, 1]), ""),
    Op("transpose_perm", ALL, one("Transpose", [(2, 3, 4, 5)], perm=[3, 1, 0, 2]), ""),
    Op("transpose_default", ALL, one("Transpose", [(2, 3, 4)]), "no perm: reverse the axes"),
    Op("concat_axis1", ALL, one("Concat", [(2, 1, 3, 3), (2, 3, 3, 3), (2, 2, 3, 3)], axis=1), "three inputs"),
    Op("concat_neg_const", ALL, one("Concat", [(2, 3, 2)], consts=lambda o, r: [("C", randn(r, (2, 3, 4)))], axis=-1), "axis -1, one initializer"),
    Op("split_sizes", ALL, split(1, [1, 3, 2], 3, (2, 6, 3)), "sizes [1,3,2]: attribute in 11, input in 13"),
    Op("split_equal", ALL, split(-1, None, 3, (2, 3, 6)), "no sizes: equal parts on axis -1"),
    Op("slice_neg", ALL, slice_((2, 3, 6, 7), [-3, 1], [INT64_MAX, -1], [2, 3]), "negative start, INT64_MAX end, negative end"),
    Op("slice_step_neg", ALL, slice_((2, 3, 6, 7), [-1], [INT64_MIN], [3], [-2]), "reverse with step -2"),
    Op("slice_steps", ALL, slice_((2, 3, 6, 7), [0, 1, 0], [2, 100, 5], [0, 2, -1], [1, 2, 3]), "steps 2 and 3, out-of-range end clamped, negative axis"),
    Op("slice_noaxes", ALL, slice_((4, 5), [1, 1], [3, -1]), "axes omitted"),
    Op("pad_constant", ALL, pad("constant", [0, 0, 1, 2, 0, 0, 2, 1], 0.5), "constant 0.5, asymmetric"),
    Op("pad_constant_default", ALL, pad("constant", [0, 1, 1, 0, 0, 0, 0, 2]), "constant value omitted (0), channel padding"),
    Op("pad_reflect", ALL, pad("reflect", [0, 0, 2, 1, 0, 0, 1, 3]), ""),
    Op("pad_edge", ALL, pad("edge", [0, 0, 2, 1, 0, 0, 3, 2]), ""),
    Op("resize_nearest_asym_floor", ALL, resize((1, 2, 3, 4), scales=[1, 1, 2, 2], mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
       "x2 upsampling as in yolov3-tiny"),
    Op("resize_nearest_halfpixel_rpf", ALL, resize((1, 2, 4, 5), sizes=[1, 2, 7, 11], mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_floor"),
       "non-integer ratio via sizes"),
    Op("resize_nearest_default", ALL, resize((1, 2, 4, 5), scales=[1, 1, 1.5, 0.6], mode="nearest"),
       "defaults: half_pixel, round_prefer_floor; down-scaling in W"),
    Op("resize_linear_align_corners", ALL, resize((1, 2, 4, 5), sizes=[1, 2, 7, 9], mode="linear", coordinate_transformation_mode="align_corners"), ""),
    Op("resize_linear_half_pixel", ALL, resize((1, 2, 3, 4), scales=[1, 1, 2, 2.5], mode="linear", coordinate_transformation_mode="half_pixel"), ""),
    Op("resize_linear_pytorch_half_pixel", ALL, resize((1, 2, 6, 5), sizes=[1, 2, 3, 1], mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
       "down-scaling, output width 1 (pytorch_half_pixel maps it to 0)"),
    Op("resize_linear_asym", ALL, resize((1, 2, 3, 4), scales=[1, 1, 2, 2], mode="linear", coordinate_transformation_mode="asymmetric"), ""),
    Op("upsample_nearest", [9], upsample9("nearest", [1, 1, 2, 3]), "opset 9 Upsample (scales input)"),
    Op("upsample_linear", [9], upsample9("linear", [1, 1, 2, 2]), "opset 9 Upsample linear (asymmetric coordinates)"),
    Op("squeeze_axes", ALL, squeeze_like("Squeeze", (2, 1, 3, 1), [1, -1]), "axes attribute in 11, input in 13; a negative axis"),
    Op("squeeze_all", ALL, squeeze_like("Squeeze", (1, 3, 1, 2), None), "no axes: all size-1 dimensions", out_shape=[3, 2]),
    Op("unsqueeze_axes", ALL, squeeze_like("Unsqueeze", (3, 4), [0, 3]), "axes attribute in 11, input in 13"),
    Op("unsqueeze_neg", ALL, squeeze_like("Unsqueeze", (3, 4), [-1]), "negative axis"),
    Op("identity", ALL, one("Identity", [(2, 3)]), ""),
    Op("dropout", ALL, dropout, "inference: identity (ratio attribute in 11, input in 13)"),
    Op("shape_chain", ALL, shape_chain, "Shape/Constant/Gather/Unsqueeze/Concat/Reshape as PyTorch writes x.view(x.size(0), -1); input [N,3,4,5]",
       dyn=True, out_shape=["N", 60]),
]


# ---------------------------------------------------------------------------
# Single operators of issue #18.

def graph(nodes, feeds, consts=(), outs=("Y",)):
    """A fixed multi-node build: nodes, run-time inputs [(name, array)],
    initializers, outputs."""
    def build(opset, r):
        return nodes(opset), [(n, f(r)) for n, f in feeds], [(n, f(r) if callable(f) else f) for n, f in consts], list(outs)
    return build


def rn(*shape, scale=1.0):
    return lambda r: randn(r, shape, scale)


def ties(*shape):
    """Small integers as floats: many equal values (ArgMax/TopK ties)."""
    return lambda r: r.integers(-3, 4, shape).astype(np.float32)


def reduce_(op, shape, axes, keepdims=1, since=18, noop=None, make=randn):
    """A Reduce* node with axes as an attribute before opset `since`, as an
    input from it (None: no axes)."""
    def build(opset, r):
        attrs = {"keepdims": keepdims}
        consts = []
        names = ["X"]
        if axes is not None:
            if opset >= since:
                consts.append(("axes", i64(axes)))
                names.append("axes")
            else:
                attrs["axes"] = axes
        if noop is not None:
            attrs["noop_with_empty_axes"] = noop
        return [helper.make_node(op, names, ["Y"], **attrs)], [("X", make(r, shape))], consts, ["Y"]
    return build


def topk(shape, k, **attrs):
    def build(opset, r):
        return ([helper.make_node("TopK", ["X", "K"], ["V", "I"], **attrs)], [("X", ties(*shape)(r))],
                [("K", i64([k]))], ["V", "I"])
    return build


def convt(x_shape, w_shape, bias=True, **attrs):
    def build(opset, r):
        consts = [("W", randn(r, w_shape, 0.5))]
        if bias:
            consts.append(("B", randn(r, (w_shape[1] * attrs.get("group", 1),), 0.5)))
        return ([helper.make_node("ConvTranspose", ["X"] + [n for n, _ in consts], ["Y"], **attrs)],
                [("X", randn(r, x_shape))], consts, ["Y"])
    return build


def layernorm(shape, axis, bias=True, **attrs):
    def build(opset, r):
        norm = shape[axis:]
        consts = [("Scale", positive(r, norm)), ("B", randn(r, norm, 0.5))][:2 if bias else 1]
        return ([helper.make_node("LayerNormalization", ["X"] + [n for n, _ in consts], ["Y"], axis=axis, **attrs)],
                [("X", randn(r, shape, 2.0) + 1.0)], consts, ["Y"])
    return build


def einsum(eq, *shapes):
    def build(opset, r):
        feeds = [(f"X{i}", randn(r, s)) for i, s in enumerate(shapes)]
        return [helper.make_node("Einsum", [n for n, _ in feeds], ["Y"], equation=eq)], feeds, [], ["Y"]
    return build


def where_cmp(cmp):
    """Where(cmp(A, B), A, B·2): a comparison's bool result read by Where."""
    def build(opset, r):
        a, b = ties(2, 3, 4)(r), ties(3, 4)(r)
        nodes = [helper.make_node(cmp, ["A", "B"], ["c"]), helper.make_node("Mul", ["B", "two"], ["b2"]),
                 helper.make_node("Where", ["c", "A", "b2"], ["Y"])]
        return nodes, [("A", a), ("B", b)], [("two", f32(2.0))], ["Y"]
    return build


def logic(op):
    """Where(op(A > 0, B < 0), A, B) and Not."""
    def build(opset, r):
        nodes = [helper.make_node("Greater", ["A", "zero"], ["p"]), helper.make_node("Less", ["B", "zero"], ["q"]),
                 helper.make_node(op, ["p", "q"], ["c"]), helper.make_node("Not", ["c"], ["nc"]),
                 helper.make_node("Where", ["nc", "A", "B"], ["Y"])]
        return nodes, [("A", randn(r, (3, 4))), ("B", randn(r, (3, 4)))], [("zero", f32(0.0))], ["Y"]
    return build


def cast_roundtrip(opset, r):
    """Cast to INT64 (truncation towards zero) and back to FLOAT."""
    nodes = [helper.make_node("Cast", ["X"], ["i"], to=TensorProto.INT64), helper.make_node("Cast", ["i"], ["Y"], to=TensorProto.FLOAT)]
    return nodes, [("X", randn(r, (3, 5), 4.0))], [], ["Y"]


def scatternd(reduction=None):
    def build(opset, r):
        attrs = {"reduction": reduction} if reduction else {}
        return ([helper.make_node("ScatterND", ["X", "idx", "U"], ["Y"], **attrs)],
                [("X", randn(r, (4, 3, 5))), ("U", randn(r, (2, 5)))], [("idx", i64([[1, 2], [3, 0]]))], ["Y"])
    return build


def variadic(op, *shapes):
    return one(op, list(shapes))


ISSUE18 = [11, 13]
OPS += [
    Op("erf", ISSUE18, one("Erf", [(2, 3, 4, 5)], make=lambda r, s: randn(r, s, 2.0)), "inputs scaled by 2"),
    Op("softplus", ISSUE18, one("Softplus", [(2, 3, 4)], make=lambda r, s: randn(r, s, 5.0)), "inputs scaled by 5 (large |x|)"),
    Op("softsign", [11], one("Softsign", [(2, 3, 4)], make=lambda r, s: randn(r, s, 3.0)), ""),
    Op("selu", [11], one("Selu", [(2, 3, 4)], alpha=1.5, gamma=1.1), "alpha 1.5, gamma 1.1"),
    Op("selu_default", [13], one("Selu", [(2, 3, 4)]), "default alpha and gamma"),
    Op("celu", [13], one("Celu", [(2, 3, 4)], alpha=1.5), "alpha 1.5 (Celu is opset 12+)"),
    Op("elu", [11], one("Elu", [(2, 3, 4)], alpha=0.7), "alpha 0.7"),
    Op("thresholdedrelu", [11], one("ThresholdedRelu", [(2, 3, 4)], alpha=0.3), "alpha 0.3"),
    Op("hardsigmoid", [11], one("HardSigmoid", [(2, 3, 4)], alpha=0.3, beta=0.4, make=lambda r, s: randn(r, s, 3.0)), "alpha 0.3, beta 0.4"),
    Op("hardswish", [14], one("HardSwish", [(2, 3, 4, 5)], make=lambda r, s: randn(r, s, 4.0)), "opset 14"),
    Op("sign_round", [11], graph(lambda o: [helper.make_node("Round", ["X"], ["r"]), helper.make_node("Sign", ["X"], ["s"]),
                                             helper.make_node("Add", ["r", "s"], ["Y"])],
                                 [("X", lambda r: np.round(randn(r, (4, 5), 3.0) * 2) / 2)]), "Round (halves to even) + Sign"),
    Op("prelu_channel", ISSUE18, one("PRelu", [(2, 3, 4, 5)], consts=lambda o, r: [("slope", positive(r, (3, 1, 1), 0.05, 0.5))]), "slope [3,1,1] (nn.PReLU(3))"),
    Op("prelu_scalar", ISSUE18, one("PRelu", [(2, 3, 4)], consts=lambda o, r: [("slope", f32([0.2]))]), "slope [1] (nn.PReLU())"),
    Op("sum3", ISSUE18, variadic("Sum", (2, 3, 4), (3, 1), (4,)), "three inputs broadcast"),
    Op("sum1", ISSUE18, variadic("Sum", (2, 3)), "one input"),
    Op("mean2", ISSUE18, variadic("Mean", (2, 3, 4), (2, 3, 4)), ""),
    Op("max3", ISSUE18, variadic("Max", (2, 3, 4), (1, 4), (2, 1, 1)), "three inputs broadcast"),
    Op("min2", ISSUE18, variadic("Min", (2, 3, 4), (3, 4)), ""),
    Op("mod_fmod", ISSUE18, graph(lambda o: [helper.make_node("Mod", ["A", "B"], ["Y"], fmod=1)],
                                   [("A", rn(3, 4, scale=5.0)), ("B", lambda r: away_from_zero(r, (4,)))]), "fmod=1 on floats (sign of the dividend)"),
    Op("where_greater", ISSUE18, where_cmp("Greater"), "Where(Greater(A,B), A, 2B), broadcast"),
    Op("where_less", ISSUE18, where_cmp("Less"), ""),
    Op("where_equal", ISSUE18, where_cmp("Equal"), "integral values: many equal"),
    Op("where_greater_equal", [13], where_cmp("GreaterOrEqual"), "opset 12+"),
    Op("where_less_equal", [13], where_cmp("LessOrEqual"), "opset 12+"),
    Op("logic_and_not", ISSUE18, logic("And"), "And, Not, Where"),
    Op("logic_or", ISSUE18, logic("Or"), ""),
    Op("logic_xor", ISSUE18, logic("Xor"), ""),
    Op("cast_int_roundtrip", ISSUE18, cast_roundtrip, "Cast to INT64 truncates towards zero"),
    Op("logsoftmax_default_3d", ISSUE18, one("LogSoftmax", [(2, 3, 4)], make=lambda r, s: randn(r, s, 3.0)), "default axis: 1 (11, coerced to 2-D) vs -1 (13)"),
    Op("logsoftmax_last", ISSUE18, one("LogSoftmax", [(3, 10)], axis=-1, make=lambda r, s: randn(r, s, 5.0)), ""),
    Op("softmax_attention", [13], one("Softmax", [(2, 3, 17, 17)], axis=-1, make=lambda r, s: randn(r, s, 4.0)), "attention scores [B,heads,N,N]"),
    Op("reducesum_axes", [11, 13], reduce_("ReduceSum", (2, 3, 4, 5), [1, 3], since=13), "axes attribute at 11, input at 13; non-contiguous axes"),
    Op("reducesum_all", [11, 13], reduce_("ReduceSum", (2, 3, 4), None, since=13), "no axes: all"),
    Op("reducesum_keep0", [11, 13], reduce_("ReduceSum", (2, 3, 4), [0, 2], keepdims=0, since=13), "keepdims 0"),
    Op("reducesum_noop", [13], reduce_("ReduceSum", (2, 3), None, since=13, noop=1), "noop_with_empty_axes=1, no axes: identity"),
    Op("reducemax_hw", ISSUE18, reduce_("ReduceMax", (2, 3, 4, 5), [2, 3], keepdims=1), "as x.amax((2,3), keepdim=True)"),
    Op("reducemax_c", ISSUE18, reduce_("ReduceMax", (2, 3, 4, 5), [1], keepdims=1), "over channels (CBAM)"),
    Op("reducemin_last", ISSUE18, reduce_("ReduceMin", (2, 3, 4), [-1], keepdims=0), ""),
    Op("reducel2", ISSUE18, reduce_("ReduceL2", (2, 6), [1]), "F.normalize's norm"),
    Op("reducel1", ISSUE18, reduce_("ReduceL1", (2, 3, 4), [0, 2], keepdims=0), "non-contiguous axes"),
    Op("reduceprod", ISSUE18, reduce_("ReduceProd", (2, 3, 4), [1], make=lambda r, s: positive(r, s)), ""),
    Op("reducesumsquare", ISSUE18, reduce_("ReduceSumSquare", (2, 3, 4), [2]), ""),
    Op("reducelogsum", ISSUE18, reduce_("ReduceLogSum", (2, 3, 4), [1], make=lambda r, s: positive(r, s)), ""),
    Op("reducelogsumexp", ISSUE18, reduce_("ReduceLogSumExp", (2, 3, 4), [2], make=lambda r, s: randn(r, s, 10.0)), "large values"),
    Op("reducemean_last", ISSUE18, reduce_("ReduceMean", (2, 3, 4), [-1]), "keepdims (layer norm's mean)"),
    Op("argmax_keep", ISSUE18, graph(lambda o: [helper.make_node("ArgMax", ["X"], ["Y"], axis=1)], [("X", ties(3, 5, 2))]),
       "axis 1, keepdims, ties: the first", int_outputs=("Y",)),
    Op("argmax_last_index", [13], graph(lambda o: [helper.make_node("ArgMax", ["X"], ["Y"], axis=-1, keepdims=0, select_last_index=1)],
                                         [("X", ties(3, 6))]), "select_last_index=1: ties give the last (opset 12+)", int_outputs=("Y",)),
    Op("argmin", ISSUE18, graph(lambda o: [helper.make_node("ArgMin", ["X"], ["Y"], axis=0, keepdims=0)], [("X", ties(4, 3))]),
       "axis 0", int_outputs=("Y",)),
    Op("topk_largest", ISSUE18, topk((3, 8), 3), "k=3 on the last axis, ties in index order", int_outputs=("I",)),
    Op("topk_smallest_axis1", ISSUE18, topk((2, 6, 3), 4, axis=1, largest=0), "largest=0 on axis 1", int_outputs=("I",)),
    Op("layernorm_last", [17], layernorm((2, 5, 8), -1), "axis -1, scale and bias"),
    Op("layernorm_axis1_nobias", [17], layernorm((2, 3, 4, 5), 1, bias=False, epsilon=1e-3), "axis 1 ([3,4,5] normalised), no B, epsilon 1e-3"),
    Op("instancenorm", ISSUE18, graph(lambda o: [helper.make_node("InstanceNormalization", ["X", "s", "b"], ["Y"], epsilon=1e-3)],
                                       [("X", rn(2, 3, 4, 5, scale=2.0))], [("s", lambda r: positive(r, (3,))), ("b", rn(3))]), "epsilon 1e-3"),
    Op("lrn3", ISSUE18, one("LRN", [(2, 5, 3, 4)], size=3, alpha=1e-2, beta=0.6, bias=2.0, make=lambda r, s: randn(r, s, 3.0)), "size 3, alpha, beta, bias"),
    Op("lrn5_default", ISSUE18, one("LRN", [(1, 7, 2, 3)], size=5), "size 5, defaults (as AlexNet/GoogLeNet from Caffe)"),
    Op("convtranspose_stride2", [11], convt((2, 4, 3, 5), (4, 3, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]),
       "stride 2, pads 1, output_padding 1 (nn.ConvTranspose2d upsampling)"),
    Op("convtranspose_group_dil", [13], convt((1, 4, 4, 3), (4, 2, 2, 3), group=2, dilations=[2, 1], strides=[1, 2]), "group 2, dilations (2,1), strides (1,2)"),
    Op("convtranspose_output_shape", [11], convt((1, 2, 3, 3), (2, 2, 3, 3), bias=False, strides=[3, 2], output_shape=[10, 8]),
       "output_shape given: pads computed (odd total)"),
    Op("convtranspose_same_upper", [11], convt((1, 2, 3, 4), (2, 3, 4, 3), strides=[2, 2], auto_pad="SAME_UPPER"), "auto_pad SAME_UPPER, odd total padding"),
    Op("convtranspose_1d", [13], convt((2, 3, 7), (3, 2, 4), strides=[2], pads=[1, 2]), "1-D"),
    Op("depthtospace_dcr", ISSUE18, one("DepthToSpace", [(2, 8, 2, 3)], blocksize=2), "mode DCR (default)"),
    Op("depthtospace_crd", ISSUE18, one("DepthToSpace", [(2, 8, 2, 3)], blocksize=2, mode="CRD"), "mode CRD (PixelShuffle)"),
    Op("spacetodepth", ISSUE18, one("SpaceToDepth", [(2, 3, 4, 6)], blocksize=2), ""),
    Op("tile", ISSUE18, one("Tile", [(2, 3, 4)], consts=[("repeats", i64([1, 2, 3]))]), ""),
    Op("einsum_bmm", [13], einsum("bij,bjk->bik", (2, 3, 4), (2, 4, 5)), "batched matrix product"),
    Op("einsum_attention", [13], einsum("bhid,bhjd->bhij", (2, 3, 5, 4), (2, 3, 6, 4)), "attention scores q·kᵀ (y transposed in place)"),
    Op("einsum_transpose", [13], einsum("ij->ji", (3, 4)), ""),
    Op("einsum_sum", [13], einsum("bij->bj", (2, 3, 4)), "sum over a label"),
    Op("einsum_outer", [13], einsum("i,j->ij", (3,), (4,)), "outer product"),
    Op("einsum_ellipsis", [13], einsum("...ij,...jk->...ik", (2, 2, 3, 4), (2, 2, 4, 5)), "ellipsis for two batch axes"),
    Op("einsum_implicit", [13], einsum("ij,jk", (3, 4), (4, 2)), "implicit output (ik)"),
    Op("einsum_three", [13], einsum("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)), "three operands"),
    Op("einsum_contract_sum", [13], einsum("bij,bkj->b", (2, 3, 4), (2, 5, 4)), "labels summed away in each operand"),
    Op("scatternd", ISSUE18, scatternd(), "runtime data and updates, constant indices"),
    Op("scatternd_add", [16], scatternd("add"), "reduction add (opset 16)"),
    Op("gather_axis1", ISSUE18, one("Gather", [(2, 5, 3)], consts=[("idx", i64(0))], axis=1), "x[:, 0] (ViT's class token)"),
    Op("gather_axis_neg", ISSUE18, one("Gather", [(2, 5, 3)], consts=[("idx", i64([[2, -1], [0, 1]]))], axis=-1), "2-D indices, negative index"),
    Op("conv1d_pads", ISSUE18, conv((2, 4, 9), (6, 4, 3), pads=[1, 2]), "1-D: pads 1 and 2"),
    Op("conv1d_stride_dil", ISSUE18, conv((1, 3, 17), (5, 3, 4), bias=False, strides=[2], dilations=[2]), "1-D: stride 2, dilation 2"),
    Op("conv1d_eca", ISSUE18, conv((2, 1, 16), (1, 1, 5), bias=False, pads=[2, 2]), "1-D over channels as ECA attention: [N,1,C], kernel 5"),
    Op("conv1d_depthwise_same", ISSUE18, conv((1, 4, 10), (4, 1, 3), group=4, auto_pad="SAME_UPPER", strides=[2]), "1-D depthwise, auto_pad SAME_UPPER, stride 2"),
    Op("matmul_4d_both", ISSUE18, one("MatMul", [(2, 3, 5, 4), (2, 3, 4, 6)]), "attention-shaped: both operands run-time [B,heads,N,d]"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scratch", default="/tmp/amt-fixtures-torch")
    ap.add_argument("--only", metavar="REGEXP",
                    help="(re)generate only the fixtures whose name matches; keep the others and their manifest entries")
    args = ap.parse_args()
    os.makedirs(args.scratch, exist_ok=True)
    only = re.compile(args.only) if args.only else None
    want = lambda fixture: only is None or only.search(fixture)
    if only is None:
        for d in ("arch", "op"):  # start from empty folders: no stale fixtures
            os.makedirs(os.path.join(ROOT, d), exist_ok=True)
            for f in os.listdir(os.path.join(ROOT, d)):
                if f.endswith((".onnx", ".f32")):
                    os.remove(os.path.join(ROOT, d, f))
    torch.set_num_threads(2)
    entries = []
    for name, make, chw, desc in ARCHS:
        for opset in ARCH_OPSETS:
            if want(f"{name}_o{opset}"):
                entries.append(export_arch(name, make, chw, desc, opset, args.scratch))
    # One unfolded export: the importer must fold the shape arithmetic itself.
    name, make, chw, desc = ARCHS[-1]
    if want(f"{name}_o11_nofold"):
        entries.append(export_arch(name, make, chw, desc, 11, args.scratch, fold=False, suffix="_nofold"))
    for name, make, chw, opsets, desc in zoo.ZOO + zoo.BENCH:
        for opset in opsets:
            if want(f"{name}_o{opset}"):
                entries.append(export_zoo(name, make, chw, desc, opset, args.scratch))

    for fix in OPS:
        for opset in fix.opsets:
            fixture = f"{fix.name}_o{opset}"
            if not want(fixture):
                continue
            m, feeds = make_op_model(fix, opset)
            onnx.save(m, os.path.join(ROOT, "op", fixture + ".onnx"))
            inputs = []
            for n, a in feeds:
                f = f"op/{fixture}.in.{n}.f32"
                write_f32(os.path.join(ROOT, f), a)
                inputs.append({"name": n, "shape": list(a.shape), "file": f})
            entries.append({
                "name": fixture, "kind": "op", "file": f"op/{fixture}.onnx", "opset": opset,
                "description": fix.desc, "ops": sorted({n.op_type for n in m.graph.node}),
                "inputs": inputs,
                "outputs": [{"name": o.name, "file": f"op/{fixture}.out.{o.name}.f32"} for o in m.graph.output],
            })
    if only is not None:
        # Replace the regenerated entries in place, append the new ones.
        with open(os.path.join(ROOT, "manifest.json")) as f:
            old = json.load(f)
        fresh = {e["name"]: e for e in entries}
        kept = [fresh.pop(e["name"], e) for e in old]
        entries = kept + [e for e in entries if e["name"] in fresh]
    with open(os.path.join(ROOT, "manifest.json"), "w") as f:
        json.dump(entries, f, indent=1)
        f.write("\n")
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, onnx {onnx.__version__}, numpy {np.__version__}")
    print(f"{len(entries)} fixtures in the manifest; now run: node {os.path.relpath(os.path.join(HERE, 'ref.mjs'))}"
          + (f" --only '{args.only}'" if args.only else ""))


if __name__ == "__main__":
    main()
