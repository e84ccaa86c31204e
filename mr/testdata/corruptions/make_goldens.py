#!/usr/bin/python3
"""Goldens of amt's common corruptions (mr/*.go, issue #37).

A re-statement, in numpy/scipy/Pillow, of the formulas of Hendrycks &
Dietterich's reference (hendrycks/robustness: ImageNet-C/create_c/
make_cifar_c.py for 32x32 images, ImageNet-C/imagenet_c/imagenet_c/
corruptions.py for larger ones): the same constants per severity, order of
operations, clipping and final np.uint8 truncation. skimage and OpenCV are
not installed here, so their functions are restated too: skimage's
rgb2hsv/hsv2rgb and filters.gaussian (= scipy.ndimage.gaussian_filter,
mode 'nearest', truncate 4), OpenCV's getGaussianKernel (the bit-exact
double formula of OpenCV 4), GaussianBlur and filter2D (correlation with
border reflect-101 = scipy's 'mirror'). Pillow is the reference's own
library for pixelate and jpeg_compression.

Run from this directory with Debian's /usr/bin/python3 (numpy 1.24,
scipy 1.10, Pillow 9.4):

    /usr/bin/python3 make_goldens.py

Inputs: the first 4 images of the CIFAR-10 test batch and COCO
val2017/000000000139.jpg centre-cropped to a square and resized to 224x224
with Pillow's bilinear filter (../shared/assets). Outputs:

    src_cifar4.u8        4 x 32x32x3 source images (HWC, RGB)
    src_224.png          the 224x224 source image
    NAME_cifar.png       per corruption NAME: the 4 CIFAR follow-ups of
                         severity 1, then of 2, ... 5, stacked (32x640)
    NAME_48.png          the follow-ups of the central 48x48 of the 224
                         image (ImageNet-C constants: it is larger than
                         32x32) at severities 1..5, stacked (48x240)
    NAME_224.png         the follow-ups of the 224 image at severities 1
                         and 5, stacked (224x448); the other three would
                         take 0.4 MB per corruption and their constants
                         are covered by NAME_48.png (none for brightness_c
                         and saturate, per-pixel maps whose ImageNet-C
                         constants NAME_48.png covers)
    jpeg_compression_odd.png the follow-ups of the 37x29 crop at rows 50-78,
                         columns 60-96 of the 224 image at severities 1..5
    noise_stats.csv      the noise corruptions' per-level output mean and
                         variance (see noise_stats below)
"""
import io
import os
import sys

import numpy as np
import scipy.ndimage as ndi
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, '../../../../shared/assets'))


def sources():
    raw = open(os.path.join(SHARED, 'cifar10/test_batch_first1017.bin'), 'rb').read(4 * 3073)
    cifar = []
    for i in range(4):
        rec = np.frombuffer(raw[i * 3073 + 1:(i + 1) * 3073], np.uint8)
        cifar.append(rec.reshape(3, 32, 32).transpose(1, 2, 0).copy())
    im = Image.open(os.path.join(SHARED, 'coco_val2017_subset158/val2017/000000000139.jpg')).convert('RGB')
    w, h = im.size
    s = min(w, h)
    im = im.crop(((w - s) // 2, (h - s) // 2, (w - s) // 2 + s, (h - s) // 2 + s)).resize((224, 224), Image.BILINEAR)
    return cifar, np.array(im)


# ---- restated helpers ----

def rgb2hsv(arr):  # skimage.color.rgb2hsv
    out = np.empty_like(arr)
    v = arr.max(-1)
    delta = arr.ptp(-1)
    with np.errstate(invalid='ignore', divide='ignore'):
        s = delta / v
        s[delta == 0.] = 0.
        idx = arr[..., 0] == v
        out[idx, 0] = (arr[idx, 1] - arr[idx, 2]) / delta[idx]
        idx = arr[..., 1] == v
        out[idx, 0] = 2. + (arr[idx, 2] - arr[idx, 0]) / delta[idx]
        idx = arr[..., 2] == v
        out[idx, 0] = 4. + (arr[idx, 0] - arr[idx, 1]) / delta[idx]
    h = (out[..., 0] / 6.) % 1.
    h[delta == 0.] = 0.
    out[..., 0], out[..., 1], out[..., 2] = h, s, v
    out[np.isnan(out)] = 0
    return out


def hsv2rgb(arr):  # skimage.color.hsv2rgb
    hi = np.floor(arr[..., 0] * 6)
    f = arr[..., 0] * 6 - hi
    p = arr[..., 2] * (1 - arr[..., 1])
    q = arr[..., 2] * (1 - f * arr[..., 1])
    t = arr[..., 2] * (1 - (1 - f) * arr[..., 1])
    v = arr[..., 2]
    hi = np.stack([hi, hi, hi], axis=-1).astype(np.uint8) % 6
    return np.choose(hi, np.stack([np.stack((v, t, p), axis=-1), np.stack((q, v, p), axis=-1),
                                   np.stack((p, v, t), axis=-1), np.stack((p, q, v), axis=-1),
                                   np.stack((t, p, v), axis=-1), np.stack((v, p, q), axis=-1)]))


def sk_gaussian(x, sigma):  # skimage.filters.gaussian(x, sigma, multichannel=True)
    return ndi.gaussian_filter(x, sigma=(sigma, sigma, 0), mode='nearest', truncate=4.0)


def cv_gauss_kernel(n, sigma):  # cv2.getGaussianKernel(n, sigma, CV_32F), OpenCV 4
    x = np.arange(n) * 2.0 - (n - 1)
    t = np.exp(x * x * (-0.125 / (sigma * sigma)))
    return (t / t.sum()).astype(np.float32)


def disk(radius, alias_blur):
    if radius <= 8:
        L, ks = np.arange(-8, 8 + 1), 3
    else:
        L, ks = np.arange(-radius, radius + 1), 5
    X, Y = np.meshgrid(L, L)
    d = np.array((X ** 2 + Y ** 2) <= radius ** 2, dtype=np.float32)
    d /= np.sum(d)
    g = cv_gauss_kernel(ks, alias_blur)
    d = ndi.correlate1d(d, g, axis=1, mode='mirror')  # cv2.GaussianBlur: rows,
    d = ndi.correlate1d(d, g, axis=0, mode='mirror')  # then columns
    return d


def small(x):
    return x.shape[0] <= 32 and x.shape[1] <= 32


def pick(x, s, cifar, imagenet):
    return (cifar if small(x) else imagenet)[s - 1]


def clipped_zoom(img, z):
    out = img
    for axis in (0, 1):
        n = img.shape[axis]
        ch = int(np.ceil(n / z))
        top = (n - ch) // 2
        out = np.take(out, np.arange(top, top + ch), axis=axis)
    out = ndi.zoom(out, (z, z, 1), order=1)
    for axis in (0, 1):
        n = img.shape[axis]
        trim = (out.shape[axis] - n) // 2
        out = np.take(out, np.arange(trim, trim + n), axis=axis)
    return out


# ---- deterministic corruptions: x is an HxWx3 uint8 array ----

def brightness_c(x, s):
    c = pick(x, s, [.05, .1, .15, .2, .3], [.1, .2, .3, .4, .5])
    x = rgb2hsv(x / 255.)
    x[:, :, 2] = np.clip(x[:, :, 2] + c, 0, 1)
    return np.clip(hsv2rgb(x), 0, 1) * 255


def saturate(x, s):
    c = pick(x, s, [(0.3, 0), (0.1, 0), (1.5, 0), (2, 0.1), (2.5, 0.2)],
             [(0.3, 0), (0.1, 0), (2, 0), (5, 0.1), (20, 0.2)])
    x = rgb2hsv(x / 255.)
    x[:, :, 1] = np.clip(x[:, :, 1] * c[0] + c[1], 0, 1)
    return np.clip(hsv2rgb(x), 0, 1) * 255


def contrast(x, s):
    c = pick(x, s, [.75, .5, .4, .3, 0.15], [0.4, .3, .2, .1, .05])
    x = x / 255.
    means = np.mean(x, axis=(0, 1), keepdims=True)
    return np.clip((x - means) * c + means, 0, 1) * 255


def gaussian_blur(x, s):
    c = pick(x, s, [.4, .6, 0.7, .8, 1], [1, 2, 3, 4, 6])
    return np.clip(sk_gaussian(x / 255., c), 0, 1) * 255


def defocus_blur(x, s):
    c = pick(x, s, [(0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1, 0.2), (1.5, 0.1)],
             [(3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5), (10, 0.5)])
    x = x / 255.
    k = disk(c[0], c[1]).astype(np.float64)
    ch = [ndi.correlate(x[:, :, d], k, mode='mirror') for d in range(3)]
    return np.clip(np.stack(ch, axis=2), 0, 1) * 255


def zoom_blur(x, s):
    c = pick(x, s, [np.arange(1, 1.06, 0.01), np.arange(1, 1.11, 0.01), np.arange(1, 1.16, 0.01),
                    np.arange(1, 1.21, 0.01), np.arange(1, 1.26, 0.01)],
             [np.arange(1, 1.11, 0.01), np.arange(1, 1.16, 0.01), np.arange(1, 1.21, 0.02),
              np.arange(1, 1.26, 0.02), np.arange(1, 1.31, 0.03)])
    x = (x / 255.).astype(np.float32)
    out = np.zeros_like(x)
    for z in c:
        out += clipped_zoom(x, z)
    x = (x + out) / (len(c) + 1)
    return np.clip(x, 0, 1) * 255


def pixelate(x, s):
    c = pick(x, s, [0.95, 0.9, 0.85, 0.75, 0.65], [0.6, 0.5, 0.4, 0.3, 0.25])
    h, w = x.shape[:2]
    im = Image.fromarray(x).resize((int(w * c), int(h * c)), Image.BOX).resize((w, h), Image.BOX)
    return np.array(im)


def jpeg_compression(x, s):
    c = pick(x, s, [80, 65, 58, 50, 40], [25, 18, 15, 10, 7])
    buf = io.BytesIO()
    Image.fromarray(x).save(buf, 'JPEG', quality=c)
    return np.array(Image.open(buf))


# ---- noises: the reference's formulas on a flat array x of values /255 ----

def gaussian_noise(x, s, small_):
    c = [[0.04, 0.06, .08, .09, .10], [.08, .12, 0.18, 0.26, 0.38]][not small_][s - 1]
    return np.clip(x + np.random.normal(size=x.shape, scale=c), 0, 1) * 255


def shot_noise(x, s, small_):
    c = [[500, 250, 100, 75, 50], [60, 25, 12, 5, 3]][not small_][s - 1]
    return np.clip(np.random.poisson(x * c) / c, 0, 1) * 255


def impulse_noise(x, s, small_):  # skimage.util.random_noise(mode='s&p', amount=c)
    c = [[.01, .02, .03, .05, .07], [.03, .06, .09, 0.17, 0.27]][not small_][s - 1]
    out = x.copy()
    flipped = np.random.random(x.shape) < c
    salted = np.random.random(x.shape) < 0.5
    out[flipped & salted] = 1
    out[flipped & ~salted] = 0
    return np.clip(out, 0, 1) * 255


def speckle_noise(x, s, small_):
    c = [[.06, .1, .12, .16, .2], [.15, .2, 0.35, 0.45, 0.6]][not small_][s - 1]
    return np.clip(x + x * np.random.normal(size=x.shape, scale=c), 0, 1) * 255


NOISES = [gaussian_noise, shot_noise, impulse_noise, speckle_noise]
NOISE_LEVELS = list(range(0, 256, 5))
NOISE_DRAWS = 40000


def noise_stats():
    """Per noise, regime (cifar: the 32x32 constants; imagenet: the larger
    images' ones), severity and input level v in 0, 5, ..., 255: the mean,
    variance and 4th central moment of np.uint8(noise(v/255)) over
    NOISE_DRAWS draws of numpy's legacy generator (seed 37)."""
    np.random.seed(37)
    rows = ['noise,regime,severity,level,n,mean,var,m4']
    for f in NOISES:
        for regime in ('cifar', 'imagenet'):
            for s in range(1, 6):
                x = np.repeat(np.array(NOISE_LEVELS, dtype=np.float64) / 255., NOISE_DRAWS)
                y = np.uint8(f(x, s, regime == 'cifar')).astype(np.float64).reshape(len(NOISE_LEVELS), NOISE_DRAWS)
                m = y.mean(axis=1)
                d = y - m[:, None]
                var = (d ** 2).mean(axis=1)
                m4 = (d ** 4).mean(axis=1)
                for i, v in enumerate(NOISE_LEVELS):
                    rows.append('%s,%s,%d,%d,%d,%.6f,%.6f,%.6f' % (f.__name__, regime, s, v, NOISE_DRAWS, m[i], var[i], m4[i]))
    open(os.path.join(HERE, 'noise_stats.csv'), 'w').write('\n'.join(rows) + '\n')


# ---- random corruptions, drawing from a recorded tape ----

class Tape:
    """numpy's legacy generator, every draw rounded to float32 and recorded
    in draw order (the Go tests replay the tape through the same formulas):
    normal(loc, scale) = loc + scale*z, uniform(lo, hi) = lo + (hi-lo)*u,
    randint(lo, hi) = lo + k with k in [0, hi-lo)."""

    def __init__(self):
        self.vals = []

    def _rec(self, a):
        a = np.asarray(a, dtype=np.float32)
        self.vals.append(a.ravel())
        return a.astype(np.float64)

    def normal(self, loc, scale, size):
        return loc + scale * self._rec(np.random.standard_normal(size))

    def uniform(self, lo, hi, size):
        return lo + (hi - lo) * self._rec(np.random.random_sample(size))

    def randint(self, lo, hi, size):
        return lo + self._rec(np.random.randint(0, hi - lo, size)).astype(np.int64)


def glass_blur(x, s, tape):
    c = pick(x, s, [(0.05, 1, 1), (0.25, 1, 1), (0.4, 1, 1), (0.25, 1, 2), (0.4, 1, 2)],
             [(0.7, 1, 2), (0.9, 2, 1), (1, 2, 3), (1.1, 3, 2), (1.5, 4, 2)])
    H, W = x.shape[:2]
    x = np.uint8(sk_gaussian(x / 255., c[0]) * 255)
    for i in range(c[2]):
        for h in range(H - c[1], c[1], -1):
            for w in range(W - c[1], c[1], -1):
                dx, dy = tape.randint(-c[1], c[1], (2,))
                h_prime, w_prime = h + dy, w + dx
                # the reference's "swap" of numpy views (a copy in effect)
                x[h, w], x[h_prime, w_prime] = x[h_prime, w_prime], x[h, w]
    return np.clip(sk_gaussian(x / 255., c[0]), 0, 1) * 255


def plasma_fractal(tape, mapsize, wibbledecay):
    maparray = np.empty((mapsize, mapsize), dtype=np.float64)
    maparray[0, 0] = 0
    stepsize = mapsize
    wibble = 100

    def wibbledmean(array):
        return array / 4 + wibble * tape.uniform(-wibble, wibble, array.shape)

    def fillsquares():
        cornerref = maparray[0:mapsize:stepsize, 0:mapsize:stepsize]
        squareaccum = cornerref + np.roll(cornerref, shift=-1, axis=0)
        squareaccum += np.roll(squareaccum, shift=-1, axis=1)
        maparray[stepsize // 2:mapsize:stepsize, stepsize // 2:mapsize:stepsize] = wibbledmean(squareaccum)

    def filldiamonds():
        drgrid = maparray[stepsize // 2:mapsize:stepsize, stepsize // 2:mapsize:stepsize]
        ulgrid = maparray[0:mapsize:stepsize, 0:mapsize:stepsize]
        ltsum = (drgrid + np.roll(drgrid, 1, axis=0)) + (ulgrid + np.roll(ulgrid, -1, axis=1))
        maparray[0:mapsize:stepsize, stepsize // 2:mapsize:stepsize] = wibbledmean(ltsum)
        ttsum = (drgrid + np.roll(drgrid, 1, axis=1)) + (ulgrid + np.roll(ulgrid, -1, axis=0))
        maparray[stepsize // 2:mapsize:stepsize, 0:mapsize:stepsize] = wibbledmean(ttsum)

    while stepsize >= 2:
        fillsquares()
        filldiamonds()
        stepsize //= 2
        wibble /= wibbledecay
    maparray -= maparray.min()
    return maparray / maparray.max()


def fog(x, s, tape):
    c = pick(x, s, [(.2, 3), (.5, 3), (0.75, 2.5), (1, 2), (1.5, 1.75)],
             [(1.5, 2), (2., 2), (2.5, 1.7), (2.5, 1.5), (3., 1.4)])
    H, W = x.shape[:2]
    m = 1
    while m < max(H, W):
        m *= 2
    x = x / 255.
    max_val = x.max()
    x += c[0] * plasma_fractal(tape, m, c[1])[:H, :W][..., np.newaxis]
    return np.clip(x * max_val / (max_val + c[0]), 0, 1) * 255


def cv_affine_from_3(src, dst):
    """cv2.getAffineTransform: OpenCV's 6x6 system, LUImpl (partial
    pivoting, elimination with d = -1/pivot, back substitution)."""
    a = np.zeros((6, 6))
    b = np.zeros(6)
    for i in range(3):
        sx, sy = float(src[i][0]), float(src[i][1])
        a[2 * i] = [sx, sy, 1, 0, 0, 0]
        a[2 * i + 1] = [0, 0, 0, sx, sy, 1]
        b[2 * i], b[2 * i + 1] = float(dst[i][0]), float(dst[i][1])
    m = 6
    for i in range(m):
        k = i
        for j in range(i + 1, m):
            if abs(a[j, i]) > abs(a[k, i]):
                k = j
        if k != i:
            a[[i, k]] = a[[k, i]]
            b[[i, k]] = b[[k, i]]
        d = -1 / a[i, i]
        for j in range(i + 1, m):
            alpha = a[j, i] * d
            for kk in range(i + 1, m):
                a[j, kk] += alpha * a[i, kk]
            b[j] += alpha * b[i]
    for i in range(m - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, m):
            s -= a[i, k] * b[k]
        b[i] = s / a[i, i]
    return b.reshape(2, 3)


def reflect101(i, n):
    if n == 1:
        return np.zeros_like(i)
    p = 2 * n - 2
    i = np.mod(i, p)
    return np.where(i >= n, p - i, i)


def cv_warp_affine_f32(img, M):
    """cv2.warpAffine(img, M, (W, H), INTER_LINEAR, BORDER_REFLECT_101) of
    a float32 HxWx3 image: the inverse matrix in double, coordinates in
    1/1024 then 1/32 pixel (rint, +16, >> 5), float32 bilinear weights from
    the 1/32 fractions, float32 sums in OpenCV's order."""
    H, W = img.shape[:2]
    m = M.ravel()
    D = m[0] * m[4] - m[1] * m[3]
    D = 1. / D if D != 0 else 0.
    i0, i1, i3, i4 = m[4] * D, m[1] * -D, m[3] * -D, m[0] * D
    i2 = -i0 * m[2] - i1 * m[5]
    i5 = -i3 * m[2] - i4 * m[5]
    xs, ys = np.arange(W, dtype=np.float64), np.arange(H, dtype=np.float64)
    adelta = np.rint(i0 * xs * 1024).astype(np.int64)
    bdelta = np.rint(i3 * xs * 1024).astype(np.int64)
    X0 = np.rint((i1 * ys + i2) * 1024).astype(np.int64) + 16
    Y0 = np.rint((i4 * ys + i5) * 1024).astype(np.int64) + 16
    X = (X0[:, None] + adelta[None, :]) >> 5
    Y = (Y0[:, None] + bdelta[None, :]) >> 5
    sx, sy = X >> 5, Y >> 5
    ax = ((X & 31).astype(np.float32) * np.float32(1 / 32))[..., None]
    ay = ((Y & 31).astype(np.float32) * np.float32(1 / 32))[..., None]
    one = np.float32(1)
    w0, w1, w2, w3 = (one - ay) * (one - ax), (one - ay) * ax, ay * (one - ax), ay * ax
    sx0, sx1, sy0, sy1 = reflect101(sx, W), reflect101(sx + 1, W), reflect101(sy, H), reflect101(sy + 1, H)
    v = img[sy0, sx0] * w0 + img[sy0, sx1] * w1
    v = v + img[sy1, sx0] * w2
    v = v + img[sy1, sx1] * w3
    return v.astype(np.float32)


def elastic_transform(image, s, tape):
    cs, ims = 32, 244
    c = pick(image, s, [(cs * 0, cs * 0, cs * 0.08), (cs * 0.05, cs * 0.2, cs * 0.07), (cs * 0.08, cs * 0.06, cs * 0.06),
                        (cs * 0.1, cs * 0.04, cs * 0.05), (cs * 0.1, cs * 0.03, cs * 0.03)],
             [(ims * 2, ims * 0.7, ims * 0.1), (ims * 2, ims * 0.08, ims * 0.2), (ims * 0.05, ims * 0.01, ims * 0.02),
              (ims * 0.07, ims * 0.01, ims * 0.02), (ims * 0.12, ims * 0.01, ims * 0.02)])
    image = np.array(image, dtype=np.float32) / 255.
    shape = image.shape
    shape_size = shape[:2]
    center_square = np.float32(shape_size) // 2
    square_size = min(shape_size) // 3
    pts1 = np.float32([center_square + square_size,
                       [center_square[0] + square_size, center_square[1] - square_size],
                       center_square - square_size])
    pts2 = pts1 + tape.uniform(-c[2], c[2], pts1.shape).astype(np.float32)
    M = cv_affine_from_3(pts1, pts2)
    image = cv_warp_affine_f32(image, M)
    dx = (ndi.gaussian_filter(tape.uniform(-1, 1, shape[:2]), c[1], mode='reflect', truncate=3) * c[0]).astype(np.float32)
    dy = (ndi.gaussian_filter(tape.uniform(-1, 1, shape[:2]), c[1], mode='reflect', truncate=3) * c[0]).astype(np.float32)
    dx, dy = dx[..., np.newaxis], dy[..., np.newaxis]
    x, y, z = np.meshgrid(np.arange(shape[1]), np.arange(shape[0]), np.arange(shape[2]))
    indices = np.reshape(y + dy, (-1, 1)), np.reshape(x + dx, (-1, 1)), np.reshape(z, (-1, 1))
    return np.clip(ndi.map_coordinates(image, indices, order=1, mode='reflect').reshape(shape), 0, 1) * 255


def magick_motion_blur(img, radius, sigma, angle):
    """ImageMagick's MotionBlurImage (MagickCore/effect.c, 6.8+ and 7) of
    an 8-bit HxWxC image, as read from and written to PNG by a Q16 build:
    width = 2*ceil(radius)+1 taps exp(-i^2/(2 sigma^2)) normalised, tap i
    at (x + ceil(i cos a - 0.5), y + ceil(i sin a - 0.5)), edge pixels
    repeated, summed on v*257, rounded to the quantum, then q/257
    truncated as ImageMagick 6.9.11 Q16 writes 8-bit PNGs (found with
    check_reference.py, which runs ImageMagick itself through wand)."""
    width = int(2 * np.ceil(radius) + 1)
    i = np.arange(width, dtype=np.float64)
    k = np.exp(-(i * i) / (2 * sigma * sigma)) / (np.sqrt(2 * np.pi) * sigma)
    k = k / k.sum()
    px, py = width * np.sin(np.deg2rad(angle)), width * np.cos(np.deg2rad(angle))
    hyp = np.hypot(px, py)
    ox = np.ceil(i * py / hyp - 0.5).astype(int)
    oy = np.ceil(i * px / hyp - 0.5).astype(int)
    H, W = img.shape[:2]
    ys, xs = np.arange(H)[:, None], np.arange(W)[None, :]
    acc = np.zeros(img.shape, dtype=np.float64)
    for j in range(width):
        sy = np.clip(ys + oy[j], 0, H - 1)
        sx = np.clip(xs + ox[j], 0, W - 1)
        acc += k[j] * (257.0 * img[sy, sx].astype(np.float64))
    q = np.floor(np.clip(acc, 0, 65535) + 0.5).astype(np.int64)
    return (q // 257).astype(np.uint8)


def motion_blur(x, s, tape):
    c = pick(x, s, [(6, 1), (6, 1.5), (6, 2), (8, 2), (9, 2.5)], [(10, 3), (15, 5), (15, 8), (15, 12), (20, 15)])
    return magick_motion_blur(x, c[0], c[1], tape.uniform(-45, 45, ())[()])


def snow(x, s, tape):
    c = pick(x, s, [(0.1, 0.2, 1, 0.6, 8, 3, 0.95), (0.1, 0.2, 1, 0.5, 10, 4, 0.9), (0.15, 0.3, 1.75, 0.55, 10, 4, 0.9),
                    (0.25, 0.3, 2.25, 0.6, 12, 6, 0.85), (0.3, 0.3, 1.25, 0.65, 14, 12, 0.8)],
             [(0.1, 0.3, 3, 0.5, 10, 4, 0.8), (0.2, 0.3, 2, 0.5, 12, 4, 0.7), (0.55, 0.3, 4, 0.9, 12, 8, 0.7),
              (0.55, 0.3, 4.5, 0.85, 12, 8, 0.65), (0.55, 0.3, 2.5, 0.85, 12, 12, 0.55)])
    H, W = x.shape[:2]
    x = np.array(x, dtype=np.float32) / 255.
    snow_layer = tape.normal(c[0], c[1], x.shape[:2])
    snow_layer = clipped_zoom(snow_layer[..., np.newaxis], c[2])
    snow_layer[snow_layer < c[3]] = 0
    snow_layer = (np.clip(snow_layer.squeeze(), 0, 1) * 255).astype(np.uint8)
    snow_layer = magick_motion_blur(snow_layer[..., None], c[4], c[5], tape.uniform(-135, -45, ())[()])[..., 0] / 255.
    snow_layer = snow_layer[..., np.newaxis]
    gray = x[..., 0] * np.float32(0.299) + x[..., 1] * np.float32(0.587) + x[..., 2] * np.float32(0.114)  # cv2 RGB2GRAY
    x = c[6] * x + (1 - c[6]) * np.maximum(x, gray.reshape(H, W, 1) * 1.5 + 0.5)
    return np.clip(x + snow_layer + np.rot90(snow_layer, k=2), 0, 1) * 255


def cv_canny(img, low, high):
    """cv2.Canny(img, low, high): 3x3 Sobel (replicate), L1 magnitude,
    non-maximum suppression with OpenCV's fixed-point tan(22.5) test (zero
    magnitude outside), hysteresis over 8-neighbours."""
    H, W = img.shape
    p = np.pad(img.astype(np.int64), 1, mode='edge')
    gx = (p[:-2, 2:] - p[:-2, :-2]) + 2 * (p[1:-1, 2:] - p[1:-1, :-2]) + (p[2:, 2:] - p[2:, :-2])
    gy = (p[2:, :-2] - p[:-2, :-2]) + 2 * (p[2:, 1:-1] - p[:-2, 1:-1]) + (p[2:, 2:] - p[:-2, 2:])
    mag = np.zeros((H + 2, W + 2), np.int64)
    mag[1:-1, 1:-1] = np.abs(gx) + np.abs(gy)
    state = np.ones((H + 2, W + 2), np.uint8)
    stack = []
    TG22 = 13573
    for y in range(H):
        for x in range(W):
            Y, X = y + 1, x + 1
            m = mag[Y, X]
            if m <= low:
                continue
            xs, ys = int(gx[y, x]), int(gy[y, x])
            ax, ay = abs(xs), abs(ys) << 15
            t22 = ax * TG22
            if ay < t22:
                keep = m > mag[Y, X - 1] and m >= mag[Y, X + 1]
            elif ay > t22 + (ax << 16):
                keep = m > mag[Y - 1, X] and m >= mag[Y + 1, X]
            else:
                s = -1 if (xs ^ ys) < 0 else 1
                keep = m > mag[Y - 1, X - s] and m > mag[Y + 1, X + s]
            if keep:
                state[Y, X] = 0
                if m > high:
                    state[Y, X] = 2
                    stack.append((Y, X))
    while stack:
        Y, X = stack.pop()
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                if (dy or dx) and state[Y + dy, X + dx] == 0:
                    state[Y + dy, X + dx] = 2
                    stack.append((Y + dy, X + dx))
    return np.where(state[1:-1, 1:-1] == 2, 255, 0).astype(np.uint8)


def cv_distance_l2_5(img):
    """cv2.distanceTransform(img, DIST_L2, 5): two chamfer passes with the
    5x5 mask steps 1, 1.4, 2.1969 in 16-bit fixed point."""
    H, W = img.shape
    HV, DIAG, LONG, INF = 65536, 91750, 143976, (2 ** 31 - 1) >> 2
    t = np.full((H + 4, W + 4), INF, np.int64)
    for y in range(H):
        for x in range(W):
            Y, X = y + 2, x + 2
            if img[y, x] == 0:
                t[Y, X] = 0
                continue
            t[Y, X] = min(t[Y - 2, X - 1] + LONG, t[Y - 2, X + 1] + LONG, t[Y - 1, X - 2] + LONG,
                          t[Y - 1, X - 1] + DIAG, t[Y - 1, X] + HV, t[Y - 1, X + 1] + DIAG,
                          t[Y - 1, X + 2] + LONG, t[Y, X - 1] + HV)
    for y in range(H - 1, -1, -1):
        for x in range(W - 1, -1, -1):
            Y, X = y + 2, x + 2
            v = t[Y, X]
            if v > HV:
                v = min(v, t[Y + 2, X + 1] + LONG, t[Y + 2, X - 1] + LONG, t[Y + 1, X + 2] + LONG,
                        t[Y + 1, X + 1] + DIAG, t[Y + 1, X] + HV, t[Y + 1, X - 1] + DIAG,
                        t[Y + 1, X - 2] + LONG, t[Y, X + 1] + HV)
                t[Y, X] = v
    return (t[2:-2, 2:-2].astype(np.float64) * (1.0 / 65536)).astype(np.float32)


def box3_sum(img):  # 3x3 sums, border reflect-101
    return ndi.correlate(img.astype(np.float64), np.ones((3, 3)), mode='mirror')


def cv_equalize_hist(img):
    hist = np.bincount(img.ravel(), minlength=256)
    i = int(np.nonzero(hist)[0][0])
    if hist[i] == img.size:
        return img.copy()
    scale = np.float32(255) / np.float32(img.size - hist[i])
    lut = np.zeros(256, np.uint8)
    s = 0
    for j in range(i + 1, 256):
        s += int(hist[j])
        lut[j] = min(max(np.round(np.float64(np.float32(s) * scale)), 0), 255)
    return lut[img]


def spatter(x, s, tape):
    c = pick(x, s, [(0.62, 0.1, 0.7, 0.7, 0.5, 0), (0.65, 0.1, 0.8, 0.7, 0.5, 0), (0.65, 0.3, 1, 0.69, 0.5, 0),
                    (0.65, 0.1, 0.7, 0.69, 0.6, 1), (0.65, 0.1, 0.5, 0.68, 0.6, 1)],
             [(0.65, 0.3, 4, 0.69, 0.6, 0), (0.65, 0.3, 3, 0.68, 0.6, 0), (0.65, 0.3, 2, 0.68, 0.5, 0),
              (0.65, 0.3, 1, 0.65, 1.5, 1), (0.67, 0.4, 1, 0.65, 1.5, 1)])
    x = np.array(x, dtype=np.float32) / 255.
    liquid_layer = tape.normal(c[0], c[1], x.shape[:2])
    liquid_layer = ndi.gaussian_filter(liquid_layer, c[2], mode='nearest', truncate=4.0)
    liquid_layer[liquid_layer < c[3]] = 0
    if c[5] == 0:
        liquid_layer = (liquid_layer * 255).astype(np.int64).astype(np.uint8)
        dist = 255 - cv_canny(liquid_layer, 50, 150)
        dist = cv_distance_l2_5(dist)
        dist = np.minimum(dist, np.float32(20))                      # THRESH_TRUNC
        dist = (box3_sum(dist) * (1.0 / 9)).astype(np.float32).astype(np.uint8)  # cv2.blur (float)
        dist = cv_equalize_hist(dist)
        ker = np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]], dtype=np.float64)
        dist = np.clip(ndi.correlate(dist.astype(np.float64), ker, mode='mirror'), 0, 255).astype(np.uint8)
        dist = (((box3_sum(dist).astype(np.int64) + 4) * 7282) >> 16).astype(np.float32)  # cv2.blur (uint8)
        m = liquid_layer * dist
        mx = m.max()
        if mx == 0:
            return np.zeros(x.shape, np.uint8)
        m = m / mx
        m *= np.float32(c[4])
        color = np.stack([np.float32(175 / 255.), np.float32(238 / 255.), np.float32(238 / 255.)])
        return np.clip(x + m[..., None] * color, 0, 1) * 255
    m = np.where(liquid_layer > c[3], 1, 0)
    m = ndi.gaussian_filter(m.astype(np.float64), c[4], mode='nearest', truncate=4.0)
    m[m < 0.8] = 0
    color = np.concatenate((63 / 255. * np.ones_like(x[..., :1]), 42 / 255. * np.ones_like(x[..., :1]),
                            20 / 255. * np.ones_like(x[..., :1])), axis=2)
    color *= m[..., np.newaxis]
    x *= (1 - m[..., np.newaxis])
    return np.clip(x + color, 0, 1) * 255


RANDOM = [glass_blur, fog, elastic_transform, motion_blur, snow, spatter]


def random_goldens(f, cifar, mid):
    """NAME_cifar.png (the first 2 CIFAR images at severities 1..5,
    32x320), NAME_48.png (the 48x48 crop at 1..5) and NAME_tape.f32 (the
    draws, float32 little-endian, in that order; NAME_tape.i8, int8, when
    all are small integers), seed 37."""
    np.random.seed(37)
    tape = Tape()
    save(f.__name__ + '_cifar', [f(x.copy(), s, tape) for s in range(1, 6) for x in cifar[:2]])
    save(f.__name__ + '_48', [f(mid.copy(), s, tape) for s in range(1, 6)])
    vals = np.concatenate(tape.vals)
    if np.all(vals == np.round(vals)) and np.all(np.abs(vals) < 128):
        vals.astype('i1').tofile(os.path.join(HERE, f.__name__ + '_tape.i8'))  # integer draws only
    else:
        vals.astype('<f4').tofile(os.path.join(HERE, f.__name__ + '_tape.f32'))


DETERMINISTIC = [defocus_blur, zoom_blur, brightness_c, contrast, pixelate, jpeg_compression,
                 gaussian_blur, saturate]


def main():
    cifar, big = sources()
    open(os.path.join(HERE, 'src_cifar4.u8'), 'wb').write(b''.join(c.tobytes() for c in cifar))
    Image.fromarray(big).save(os.path.join(HERE, 'src_224.png'), optimize=True)
    mid = big[88:136, 88:136]
    odd = big[50:79, 60:97]  # 37 wide, 29 high
    only = sys.argv[1:]
    if not only or 'noise_stats' in only:
        noise_stats()
    for f in DETERMINISTIC:
        if only and f.__name__ not in only:
            continue
        save(f.__name__ + '_cifar', [f(x.copy(), s) for s in range(1, 6) for x in cifar])
        save(f.__name__ + '_48', [f(mid.copy(), s) for s in range(1, 6)])
        if f not in (brightness_c, saturate):  # per-pixel colour maps: the 48x48 crop covers them
            save(f.__name__ + '_224', [f(big.copy(), s) for s in (1, 5)])
        if f is jpeg_compression:  # odd sizes: block padding, chroma edges
            save(f.__name__ + '_odd', [f(odd.copy(), s) for s in range(1, 6)])
        print(f.__name__, 'done')
    for f in RANDOM:
        if only and f.__name__ not in only:
            continue
        random_goldens(f, cifar, mid)
        print(f.__name__, 'done')


def save(name, images):
    Image.fromarray(np.concatenate([np.uint8(x) for x in images], axis=0)).save(
        os.path.join(HERE, name + '.png'), optimize=True)


if __name__ == '__main__':
    main()
