#!/usr/bin/python3
"""Measure amt's corruptions against the reference implementation itself.

    /usr/bin/python3 check_reference.py ROBUSTNESS_CHECKOUT OUTDIR
    AMT_CORRUPTION_REFERENCE=OUTDIR go test -run TestCorruptionReference -v ./mr

make_goldens.py makes the committed goldens from amt's own re-statement of
the reference's formulas in numpy/scipy/Pillow. This script instead runs
the reference's functions, with the libraries they were written for
(Debian's python3-skimage, python3-opencv, python3-wand with ImageMagick 6,
Pillow), taken at run time from a checkout of hendrycks/robustness:
ImageNet-C/create_c/make_cifar_c.py for the 4 CIFAR sources (32x32) and
ImageNet-C/imagenet_c/imagenet_c/corruptions.py for the 224x224 source
(whose functions assume 224x224). Only the files' imports (less torch),
function and class definitions and attribute assignments are executed, not
their dataset code; nothing of them is copied here.

numpy's legacy generator (seed 37) is wrapped so that every draw of
np.random.normal, uniform and randint is recorded in order (normal as its
standard normal, uniform as its random_sample, randint as its offset from
low, consuming the stream exactly as the originals do); the Go test
replays them. The noise corruptions are left out (their draws are not
replayed; TestNoiseDistributions compares their distributions), and so is
frost (amt has none).

Writes OUTDIR/NAME.u8 (severities 1..5, each the 4 CIFAR outputs then the
224x224 one, raw HWC) and, for the random corruptions, OUTDIR/NAME_tape.f64.
Then it checks noise_stats.csv (make_goldens.py's restatement, which
TestNoiseDistributions holds the Go noises to) against the reference's
noise functions: per noise, size, severity and input level, the output's
mean and variance over about 3500 draws, within 5.5 standard errors; it
prints the largest difference in standard errors.
"""
import csv
import ast
import os
import sys
import warnings

import numpy as np
import skimage
import skimage.color  # noqa: F401  (the reference uses sk.color, sk.util)
import skimage.util  # noqa: F401
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))

# amt's name -> the reference's function name
NAMES = {
    'defocus_blur': 'defocus_blur', 'glass_blur': 'glass_blur', 'motion_blur': 'motion_blur',
    'zoom_blur': 'zoom_blur', 'snow': 'snow', 'fog': 'fog', 'brightness_c': 'brightness',
    'contrast': 'contrast', 'elastic_transform': 'elastic_transform', 'pixelate': 'pixelate',
    'jpeg_compression': 'jpeg_compression', 'gaussian_blur': 'gaussian_blur', 'spatter': 'spatter',
    'saturate': 'saturate',
}
RANDOM = {'glass_blur', 'motion_blur', 'snow', 'fog', 'elastic_transform', 'spatter'}


def load(path):
    """The definitions of a reference file, executed in a fresh namespace."""
    tree = ast.parse(open(path).read(), path)
    keep = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            if any(a.name.split('.')[0] in ('torch', 'torchvision') for a in node.names):
                continue
            keep.append(node)
        elif isinstance(node, ast.ImportFrom):
            if (node.module or '').split('.')[0] in ('torch', 'torchvision'):
                continue
            keep.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            keep.append(node)
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Attribute) for t in node.targets):
            keep.append(node)
    ns = {'__name__': 'reference'}
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, 'exec'), ns)
    return ns


ORIGINAL = np.random.standard_normal, np.random.random_sample, np.random.randint


class Recorder:
    def __init__(self):
        self.vals = []
        std, rs, ri = ORIGINAL

        def normal(loc=0.0, scale=1.0, size=None):
            z = std(size)
            self.vals.append(np.ravel(z).astype(np.float64))
            return loc + scale * z

        def uniform(low=0.0, high=1.0, size=None):
            u = rs(size)
            self.vals.append(np.ravel(u).astype(np.float64))
            return low + (high - low) * u

        def randint(low, high=None, size=None):
            k = ri(0, high - low, size)
            self.vals.append(np.ravel(k).astype(np.float64))
            return low + k

        np.random.normal, np.random.uniform, np.random.randint = normal, uniform, randint


def main():
    warnings.simplefilter('ignore')
    checkout, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    cifar_ns = load(os.path.join(checkout, 'ImageNet-C/create_c/make_cifar_c.py'))
    inet_ns = load(os.path.join(checkout, 'ImageNet-C/imagenet_c/imagenet_c/corruptions.py'))
    raw = open(os.path.join(HERE, 'src_cifar4.u8'), 'rb').read()
    cifar = [Image.fromarray(np.frombuffer(raw[i * 3072:(i + 1) * 3072], np.uint8).reshape(32, 32, 3)) for i in range(4)]
    big = Image.open(os.path.join(HERE, 'src_224.png')).convert('RGB')
    only = sys.argv[3:]
    for name, ref in NAMES.items():
        if only and name not in only:
            continue
        np.random.seed(37)
        rec = Recorder()
        parts = []
        for s in range(1, 6):
            for x in cifar:
                parts.append(np.uint8(cifar_ns[ref](x, s)).tobytes())
            parts.append(np.uint8(inet_ns[ref](big, s)).tobytes())
        open(os.path.join(out, name + '.u8'), 'wb').write(b''.join(parts))
        if name in RANDOM:
            np.concatenate(rec.vals).astype('<f8').tofile(os.path.join(out, name + '_tape.f64'))
        print(name, 'done', len(rec.vals), 'draw batches')
    if not only or 'noises' in only:
        check_noises(cifar_ns, inet_ns)


def check_noises(cifar_ns, inet_ns):
    rows = list(csv.DictReader(open(os.path.join(HERE, 'noise_stats.csv'))))
    levels = sorted({int(r['level']) for r in rows})
    np.random.seed(5)
    worst, bad = 0.0, 0
    for name in ('gaussian_noise', 'shot_noise', 'impulse_noise', 'speckle_noise'):
        for regime, ns, size, draws in (('cifar', cifar_ns, 32, 60), ('imagenet', inet_ns, 224, 2)):
            img = np.array([levels[i % len(levels)] for i in range(size * size * 3)], np.uint8).reshape(size, size, 3)
            lv = np.tile(img.ravel(), draws)
            for s in range(1, 6):
                y_all = np.concatenate([np.uint8(ns[name](Image.fromarray(img), s)).ravel().astype(np.float64)
                                        for _ in range(draws)])
                for r in rows:
                    if (r['noise'], r['regime'], int(r['severity'])) != (name, regime, s):
                        continue
                    y = y_all[lv == int(r['level'])]
                    m, v = y.mean(), y.var()
                    m4 = ((y - m) ** 4).mean()
                    mr, vr, m4r, nr = (float(r[k]) for k in ('mean', 'var', 'm4', 'n'))
                    if vr == 0 and v == 0:
                        bad += m != mr
                        continue
                    zm = abs(m - mr) / np.sqrt(v / len(y) + vr / nr)
                    zv = abs(v - vr) / np.sqrt(max(m4 - v * v, 0) / len(y) + max(m4r - vr * vr, 0) / nr)
                    worst = max(worst, zm, zv)
                    if zm > 5.5 or zv > 5.5:
                        bad += 1
                        print('noise mismatch', name, regime, s, r['level'], zm, zv)
    print('noises: %d mismatches, largest difference %.2f standard errors' % (bad, worst))


if __name__ == '__main__':
    main()
