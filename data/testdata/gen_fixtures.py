#!/usr/bin/python3
"""Provenance of the image fixtures in this folder (not run by the tests).

Pillow 9.4.0 (Debian 12 python3-pil, libjpeg-turbo). For each odd image
NAME.{jpg,png} it writes NAME.want.png, Pillow's Image.open(NAME).convert("RGB").
  cmyk.jpg     Adobe CMYK JPEG, 24x16
  gray.jpg     grey-scale JPEG, 24x16
  rgba.png     RGBA PNG with varying alpha, 24x16
  palette.png  palette PNG with a transparent entry, 24x16
Usage: gen_fixtures.py OUT_DIR
"""
import sys, os
import numpy as np
from PIL import Image

out = sys.argv[1]
h, w = 16, 24
y, x = np.mgrid[0:h, 0:w]
c = (x * 10).astype(np.uint8)
m = (y * 15).astype(np.uint8)
ye = ((x + y) * 6).astype(np.uint8)
k = ((x * y) % 97).astype(np.uint8)
Image.fromarray(np.dstack([c, m, ye, k]), "CMYK").save(os.path.join(out, "cmyk.jpg"), quality=95)
Image.fromarray(((x * 7 + y * 5) % 256).astype(np.uint8), "L").save(os.path.join(out, "gray.jpg"), quality=90)
rgba = np.dstack([c, m, ye, (255 - y * 16).astype(np.uint8)])
Image.fromarray(rgba, "RGBA").save(os.path.join(out, "rgba.png"))
p = Image.fromarray(((x + y) % 4).astype(np.uint8), "P")
p.putpalette([255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30])
p.info["transparency"] = 3
p.save(os.path.join(out, "palette.png"), transparency=3)
for name in ["cmyk.jpg", "gray.jpg", "rgba.png", "palette.png"]:
    im = Image.open(os.path.join(out, name))
    print(name, im.mode, im.size)
    im.convert("RGB").save(os.path.join(out, name.rsplit(".", 1)[0] + ".want.png"))
