// Package kernels holds amt's single-precision CPU compute kernels: GEMM and
// convolution, used by the ONNX operators in package nn through custom
// Gorgonia ops. The API here is the contract between the importer and the
// kernels; implementations behind it (portable Go, amd64 assembly) may be
// swapped without touching the importer.
//
// All matrices are row-major float32. Kernels may use several goroutines
// (up to runtime.GOMAXPROCS) for one call; they are safe for concurrent use.
package kernels

import (
	"fmt"
	"runtime"
	"sync"
)

// Gemm computes C = alpha·op(A)·op(B) + beta·C where op(X) is X or Xᵀ.
// op(A) is m×k, op(B) is k×n and C is m×n; lda, ldb and ldc are the row
// strides of A, B and C as stored. When beta is 0, C is overwritten (its
// old contents, even NaN, are ignored).
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	parallelRows(m, n*k, func(i0, i1 int) {
		row := make([]float32, n)
		for i := i0; i < i1; i++ {
			for j := range row {
				row[j] = 0
			}
			for p := 0; p < k; p++ {
				var av float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if av == 0 {
					continue
				}
				if transB {
					for j := 0; j < n; j++ {
						row[j] += av * b[j*ldb+p]
					}
				} else {
					brow := b[p*ldb : p*ldb+n]
					for j, bv := range brow {
						row[j] += av * bv
					}
				}
			}
			crow := c[i*ldc : i*ldc+n]
			if beta == 0 {
				for j := range crow {
					crow[j] = alpha * row[j]
				}
			} else {
				for j := range crow {
					crow[j] = alpha*row[j] + beta*crow[j]
				}
			}
		}
	})
}

// parallelRows splits [0, m) into chunks run on up to GOMAXPROCS goroutines
// when the work (m·cost) is large enough to pay for them.
func parallelRows(m, cost int, f func(i0, i1 int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers > m {
		workers = m
	}
	if workers <= 1 || m*cost < 1<<15 {
		f(0, m)
		return
	}
	var wg sync.WaitGroup
	chunk := (m + workers - 1) / workers
	for i0 := 0; i0 < m; i0 += chunk {
		i1 := min(i0+chunk, m)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i0, i1)
		}()
	}
	wg.Wait()
}

// ActKind names an activation fused into a kernel's epilogue.
type ActKind int

const (
	ActNone      ActKind = iota
	ActRelu              // max(x, 0)
	ActLeakyRelu         // x if x ≥ 0 else Alpha·x
	ActClip              // min(max(x, Min), Max)
)

// Activation is an element-wise activation applied after bias addition.
type Activation struct {
	Kind     ActKind
	Alpha    float32 // LeakyRelu slope
	Min, Max float32 // Clip bounds
}

// Apply applies the activation to x in place.
func (a Activation) Apply(x []float32) {
	switch a.Kind {
	case ActRelu:
		for i, v := range x {
			if v < 0 {
				x[i] = 0
			}
		}
	case ActLeakyRelu:
		for i, v := range x {
			if v < 0 {
				x[i] = a.Alpha * v
			}
		}
	case ActClip:
		for i, v := range x {
			if v < a.Min {
				x[i] = a.Min
			} else if v > a.Max {
				x[i] = a.Max
			}
		}
	}
}

// ConvShape describes a 2-D convolution over NCHW tensors (ONNX Conv).
type ConvShape struct {
	InC, InH, InW                        int // input channels and spatial size
	OutC                                 int // output channels (feature maps)
	KH, KW                               int // kernel size
	StrideH, StrideW                     int
	PadTop, PadLeft, PadBottom, PadRight int
	DilH, DilW                           int
	Groups                               int
}

// OutH returns the output height.
func (s ConvShape) OutH() int {
	return (s.InH+s.PadTop+s.PadBottom-(s.DilH*(s.KH-1)+1))/s.StrideH + 1
}

// OutW returns the output width.
func (s ConvShape) OutW() int {
	return (s.InW+s.PadLeft+s.PadRight-(s.DilW*(s.KW-1)+1))/s.StrideW + 1
}

// Validate checks that the shape is well formed.
func (s ConvShape) Validate() error {
	switch {
	case s.InC <= 0 || s.InH <= 0 || s.InW <= 0 || s.OutC <= 0 || s.KH <= 0 || s.KW <= 0:
		return fmt.Errorf("kernels: conv shape %+v: sizes must be positive", s)
	case s.StrideH <= 0 || s.StrideW <= 0 || s.DilH <= 0 || s.DilW <= 0 || s.Groups <= 0:
		return fmt.Errorf("kernels: conv shape %+v: strides, dilations and groups must be positive", s)
	case s.PadTop < 0 || s.PadLeft < 0 || s.PadBottom < 0 || s.PadRight < 0:
		return fmt.Errorf("kernels: conv shape %+v: pads must be non-negative", s)
	case s.InC%s.Groups != 0 || s.OutC%s.Groups != 0:
		return fmt.Errorf("kernels: conv shape %+v: channels not divisible by %d groups", s, s.Groups)
	case s.OutH() <= 0 || s.OutW() <= 0:
		return fmt.Errorf("kernels: conv shape %+v: empty output", s)
	}
	return nil
}

// Conv is a convolution with fixed weights, bias and activation, prepared
// once (weights may be repacked) and run many times.
type Conv struct {
	s      ConvShape
	weight []float32 // [OutC, InC/Groups, KH, KW]
	bias   []float32 // [OutC] or nil
	act    Activation
}

// NewConv prepares a convolution. weight has ONNX layout
// [OutC, InC/Groups, KH, KW]; bias is nil or has OutC values. The slices are
// not retained: the kernel keeps its own copy.
func NewConv(s ConvShape, weight, bias []float32, act Activation) (*Conv, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if want := s.OutC * (s.InC / s.Groups) * s.KH * s.KW; len(weight) != want {
		return nil, fmt.Errorf("kernels: conv weight has %d values, shape %+v needs %d", len(weight), s, want)
	}
	if bias != nil && len(bias) != s.OutC {
		return nil, fmt.Errorf("kernels: conv bias has %d values, want %d", len(bias), s.OutC)
	}
	c := &Conv{s: s, weight: append([]float32(nil), weight...), act: act}
	if bias != nil {
		c.bias = append([]float32(nil), bias...)
	}
	return c, nil
}

// Shape returns the convolution's shape.
func (c *Conv) Shape() ConvShape { return c.s }

// Forward computes dst = act(conv(src) + bias) for a batch of n images.
// src is [n, InC, InH, InW] and dst is [n, OutC, OutH, OutW].
func (c *Conv) Forward(dst, src []float32, n int) {
	s := c.s
	oh, ow := s.OutH(), s.OutW()
	icg, ocg := s.InC/s.Groups, s.OutC/s.Groups
	kk := icg * s.KH * s.KW
	cols := make([]float32, kk*oh*ow)
	for b := 0; b < n; b++ {
		in := src[b*s.InC*s.InH*s.InW:]
		out := dst[b*s.OutC*oh*ow : (b+1)*s.OutC*oh*ow]
		for g := 0; g < s.Groups; g++ {
			im2col(cols, in[g*icg*s.InH*s.InW:], icg, s, oh, ow)
			Gemm(false, false, ocg, oh*ow, kk, 1, c.weight[g*ocg*kk:], kk, cols, oh*ow, 0, out[g*ocg*oh*ow:], oh*ow)
		}
		for o := 0; o < s.OutC; o++ {
			plane := out[o*oh*ow : (o+1)*oh*ow]
			if c.bias != nil {
				bv := c.bias[o]
				for i := range plane {
					plane[i] += bv
				}
			}
			c.act.Apply(plane)
		}
	}
}

// im2col unrolls the receptive fields of ic channels into cols
// [ic·KH·KW, oh·ow], with zeros for padding.
func im2col(cols, in []float32, ic int, s ConvShape, oh, ow int) {
	r := 0
	for c := 0; c < ic; c++ {
		plane := in[c*s.InH*s.InW:]
		for ky := 0; ky < s.KH; ky++ {
			for kx := 0; kx < s.KW; kx++ {
				row := cols[r*oh*ow : (r+1)*oh*ow]
				r++
				for y := 0; y < oh; y++ {
					iy := y*s.StrideH - s.PadTop + ky*s.DilH
					dst := row[y*ow : (y+1)*ow]
					if iy < 0 || iy >= s.InH {
						for i := range dst {
							dst[i] = 0
						}
						continue
					}
					src := plane[iy*s.InW:]
					for x := 0; x < ow; x++ {
						ix := x*s.StrideW - s.PadLeft + kx*s.DilW
						if ix < 0 || ix >= s.InW {
							dst[x] = 0
						} else {
							dst[x] = src[ix]
						}
					}
				}
			}
		}
	}
}
