#!/usr/bin/python3
"""Provenance of the pHash fixtures in this folder (not run by the tests).

Runs imagehash's phash (hash_size=16, highfreq_factor=4; its code is
restated below because imagehash is not packaged for Debian 12) with
Pillow 9.4.0, numpy 1.24.2 and scipy 1.10.1 (Debian 12 python3-pil,
python3-numpy, python3-scipy) on CIFAR-10 test images 0..7 and on the
Pillow-decoded COCO image 22192. Writes, for the 9 images in that order:
  phash_gray.u8      uint8 [8,32,32]: convert("L") of the 8 CIFAR images
  phash_resized.u8   uint8 [9,64,64]: convert("L").resize((64,64), ANTIALIAS)
  phash_dct.f64      float64 LE [9,16,16]: top-left of scipy dct(dct(x, axis=0), axis=1)
  phash_bits.txt     one line per image: 256 characters 0/1, row-major
Usage: gen_phash.py SHARED_DIR OUT_DIR
"""
import sys, os
import numpy as np
import scipy.fftpack
from PIL import Image

shared, out = sys.argv[1], sys.argv[2]
raw = open(os.path.join(shared, "assets/cifar10/test_batch_first1017.bin"), "rb").read()
imgs = []
for i in range(8):
    rec = np.frombuffer(raw[i * 3073 + 1:(i + 1) * 3073], dtype=np.uint8).reshape(3, 32, 32)
    imgs.append(Image.fromarray(rec.transpose(1, 2, 0).copy(), "RGB"))
imgs.append(Image.open(os.path.join(shared, "golden/detection/mr_22192_decoded_rgb.png")).convert("RGB"))

gray, resized, dcts, bits = [], [], [], []
for im in imgs:
    g = im.convert("L")
    if im.size == (32, 32):
        gray.append(np.asarray(g).tobytes())
    r = g.resize((64, 64), Image.ANTIALIAS)
    px = np.asarray(r)
    resized.append(px.tobytes())
    dct = scipy.fftpack.dct(scipy.fftpack.dct(px, axis=0), axis=1)
    low = dct[:16, :16]
    dcts.append(low.astype("<f8").tobytes())
    diff = low > np.median(low)
    bits.append("".join("1" if b else "0" for b in diff.flatten()))

open(os.path.join(out, "phash_gray.u8"), "wb").write(b"".join(gray))
open(os.path.join(out, "phash_resized.u8"), "wb").write(b"".join(resized))
open(os.path.join(out, "phash_dct.f64"), "wb").write(b"".join(dcts))
open(os.path.join(out, "phash_bits.txt"), "w").write("\n".join(bits) + "\n")
