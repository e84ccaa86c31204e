# Makes luma_cifar16.bin: for the first 16 images of the shared CIFAR-10
# file, Pillow's Image.convert("L") (32×32 bytes each), then that L image
# resized to 28×28 and to 45×45 with Image.BILINEAR (784 and 2025 bytes
# each): 16 × (1024 + 784 + 2025) bytes. Run with Debian's Python (Pillow 9.4):
#   /usr/bin/python3 nn/preprocess/testdata/make_luma.py ../shared/assets/cifar10/test_batch_first1017.bin
import sys
import numpy as np
from PIL import Image

raw = open(sys.argv[1], "rb").read()
out = bytearray()
for i in range(16):
    rec = np.frombuffer(raw[i * 3073 + 1:(i + 1) * 3073], dtype=np.uint8).reshape(3, 32, 32)
    im = Image.fromarray(np.ascontiguousarray(rec.transpose(1, 2, 0)), "RGB").convert("L")
    out += im.tobytes()
    out += im.resize((28, 28), Image.BILINEAR).tobytes()
    out += im.resize((45, 45), Image.BILINEAR).tobytes()
open("nn/preprocess/testdata/luma_cifar16.bin", "wb").write(out)
