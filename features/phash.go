package features

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/amt-dev/amt/nn/preprocess"
	"github.com/amt-dev/amt/rgb"
)

// PHash is the perceptual hash of imagehash's phash(image, hash_size=16)
// (imagehash 4.x with Pillow 9.4 and scipy), as 256 features of value 0
// or 1. For each image it
//
//  1. converts it to grey with Pillow's convert("L"):
//     L = (19595·R + 38470·G + 7471·B + 32768) >> 16;
//  2. resizes it to 64×64 with Pillow's Lanczos filter (Image.ANTIALIAS,
//     support 3, the same fixed-point separable resampling as Pillow's
//     Image.resize: horizontal pass first, rounded to uint8, then the
//     vertical pass; an axis of unchanged size is not resampled);
//  3. takes the unnormalised 2-D DCT-II, scipy's
//     dct(dct(x, axis=0), axis=1), i.e. X[u][v] = 4 Σ_y Σ_x x[y][x]
//     cos(πu(2y+1)/128) cos(πv(2x+1)/128), and keeps u, v < 16;
//  4. sets bit u·16+v (row-major, u the vertical frequency) to 1 when
//     X[u][v] is greater than the median of the 256 values (numpy's
//     median: the mean of the two middle ones).
//
// Steps 1 and 2 are bit-exact with Pillow 9.4. The DCT is computed
// directly in float64, so it agrees with scipy's FFT-based one to about
// 1e-12 relative; a bit can differ from imagehash's only when its value is
// that close to the median (for example in flat images, where many values
// are zero up to rounding noise).
//
// PHash is safe for concurrent use.
type PHash struct{}

// pHash geometry: hash_size 16, highfreq_factor 4.
const (
	hashSize    = 16
	hashImgSize = hashSize * 4 // 64
)

// Dim returns 256.
func (PHash) Dim() int { return hashSize * hashSize }

// Extract returns the 256 hash bits of each image as 0 or 1.
func (p PHash) Extract(imgs []rgb.Image) ([][]float32, error) {
	out := make([][]float32, len(imgs))
	for i, m := range imgs {
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("features: phash: image %d: %w", i, err)
		}
		if m.W == 0 || m.H == 0 {
			return nil, fmt.Errorf("features: phash: image %d is empty (%d×%d)", i, m.W, m.H)
		}
		bits := phashBits(m)
		row := make([]float32, len(bits))
		for j, b := range bits {
			if b {
				row[j] = 1
			}
		}
		out[i] = row
	}
	return out, nil
}

// phashBits returns the 256 hash bits of m.
func phashBits(m rgb.Image) []bool {
	low := phashDCT(preprocess.ResizeGray(grayL(m), m.W, m.H, hashImgSize, hashImgSize, preprocess.Lanczos))
	med := median(low[:])
	bits := make([]bool, len(low))
	for i, v := range low {
		bits[i] = v > med
	}
	return bits
}

// grayL converts to Pillow's "L" mode: ITU-R 601-2 luma in 16-bit fixed
// point, rounded (Pillow's L24 macro).
func grayL(m rgb.Image) []uint8 {
	out := make([]uint8, m.W*m.H)
	for i := range out {
		r, g, b := uint32(m.Pix[3*i]), uint32(m.Pix[3*i+1]), uint32(m.Pix[3*i+2])
		out[i] = uint8((r*19595 + g*38470 + b*7471 + 0x8000) >> 16)
	}
	return out
}

// dctCos returns c[k][n] = cos(πk(2n+1)/(2·64)), the DCT-II basis for 64
// samples, for the 16 lowest frequencies. The table is computed once and
// never modified.
var dctCos = sync.OnceValue(func() *[hashSize][hashImgSize]float64 {
	var c [hashSize][hashImgSize]float64
	for k := range hashSize {
		for n := range hashImgSize {
			c[k][n] = math.Cos(math.Pi * float64(k) * float64(2*n+1) / (2 * hashImgSize))
		}
	}
	return &c
})

// phashDCT returns the top-left 16×16 of scipy's dct(dct(px, axis=0),
// axis=1) (type II, unnormalised: each 1-D pass is 2 Σ x[n] cos(…)) of a
// 64×64 image, row-major.
func phashDCT(px []uint8) [hashSize * hashSize]float64 {
	c := dctCos()
	// Along axis 0 (columns): a[u][x] = 2 Σ_y px[y][x] cos(πu(2y+1)/128).
	var a [hashSize][hashImgSize]float64
	for u := range hashSize {
		for y := range hashImgSize {
			cu := 2 * c[u][y]
			row := px[y*hashImgSize : (y+1)*hashImgSize]
			for x, v := range row {
				a[u][x] += float64(v) * cu
			}
		}
	}
	// Along axis 1 (rows): d[u][v] = 2 Σ_x a[u][x] cos(πv(2x+1)/128).
	var d [hashSize * hashSize]float64
	for u := range hashSize {
		for v := range hashSize {
			var s float64
			for x := range hashImgSize {
				s += a[u][x] * c[v][x]
			}
			d[u*hashSize+v] = 2 * s
		}
	}
	return d
}

// median is numpy's median: the middle value, or the mean of the two
// middle values for an even count.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
