package nn

import (
	"slices"

	"github.com/amt-dev/amt/nn/kernels"
)

// ConvTranspose (1-D and 2-D), as a GEMM per image and group, col = Wᵀ·X
// (kernels.Gemm), scattered into the output (col2im), plus the bias.

func convTransposeOp(b *builder, a *attrs, ins []*value) *value {
	x, w := need(ins, 0, "X"), constant(ins, 1, "W")
	var bias []float32
	if opt(ins, 2) != nil {
		bias = constant(ins, 2, "B").floats()
	}
	sp := len(x.shape) - 2 // spatial rank
	if (sp != 1 && sp != 2) || len(w.shape) != len(x.shape) {
		fail("only 1-D and 2-D transposed convolution is supported (input %v, weight %v)", x.shape, w.shape)
	}
	group := int(a.int("group", 1))
	cin := x.shape[1]
	if group <= 0 || cin%group != 0 || w.shape[0] != cin {
		fail("weight %v does not fit input %v with group=%d", w.shape, x.shape, group)
	}
	cout := w.shape[1] * group
	if bias != nil && len(bias) != cout {
		fail("bias has %d values, want %d", len(bias), cout)
	}
	// Spatial parameters, as 2-D (a 1-D one has height 1).
	ints := func(name string, def int64) []int {
		v := a.ints(name, nil)
		if v == nil {
			v = slices.Repeat([]int64{def}, sp)
		}
		if len(v) != sp {
			fail("attribute %q %v: want %d values", name, v, sp)
		}
		out := make([]int, 2)
		out[0] = 1
		if def == 0 {
			out[0] = 0
		}
		for k, e := range v {
			out[2-sp+k] = int(e)
		}
		return out
	}
	in := []int{1, x.shape[len(x.shape)-1]}
	k := []int{1, w.shape[len(w.shape)-1]}
	if sp == 2 {
		in[0], k[0] = x.shape[2], w.shape[2]
	}
	if ks := a.ints("kernel_shape", nil); ks != nil && (len(ks) != sp || int(ks[sp-1]) != k[1] || int(ks[0]) != k[2-sp]) {
		fail("attribute \"kernel_shape\" %v does not match weight shape %v", ks, w.shape)
	}
	strides, dil, adj := ints("strides", 1), ints("dilations", 1), ints("output_padding", 0)
	for d := 0; d < 2; d++ {
		if strides[d] <= 0 || dil[d] <= 0 || adj[d] < 0 || strides[d] > 1<<20 || dil[d] > 1<<20 || adj[d] > 1<<20 {
			fail("strides %v, dilations %v and output_padding %v must be positive (output_padding non-negative) and at most %d", strides, dil, adj, 1<<20)
		}
	}
	var pads [4]int // top, left, bottom, right
	if p := a.ints("pads", nil); p != nil {
		if len(p) != 2*sp {
			fail("attribute \"pads\" %v: want %d values", p, 2*sp)
		}
		for j := 0; j < sp; j++ {
			if p[j] < 0 || p[sp+j] < 0 || p[j] > 1<<20 || p[sp+j] > 1<<20 {
				fail("attribute \"pads\" %v: want values in [0, %d]", p, 1<<20)
			}
			pads[2-sp+j], pads[4-sp+j] = int(p[j]), int(p[sp+j])
		}
	}
	autoPad := a.str("auto_pad", "NOTSET")
	outShape := a.ints("output_shape", nil)
	if outShape != nil && len(outShape) != sp && len(outShape) != sp+2 {
		fail("attribute \"output_shape\" %v: want %d or %d values", outShape, sp, sp+2)
	}
	out := [2]int{}
	for d := 0; d < 2; d++ {
		full := (in[d]-1)*strides[d] + adj[d] + (k[d]-1)*dil[d] + 1
		// Padding distributed as ONNX Runtime 1.30 does: the odd one at
		// the start for SAME_LOWER, at the end otherwise.
		distribute := func(total int) {
			total = max(0, total)
			if autoPad == "SAME_LOWER" {
				pads[d], pads[d+2] = total-total/2, total/2
			} else {
				pads[d], pads[d+2] = total/2, total-total/2
			}
		}
		switch {
		case d < 2-sp: // the height of a 1-D convolution
			pads[d], pads[d+2] = 0, 0
		case outShape != nil:
			// The output has the given size: padded away when larger than
			// the full one, else extended at the end (like output_padding).
			want := int(min(max(outShape[len(outShape)-2+d], 0), 1<<40))
			distribute(full - want)
			out[d] = want
		case autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER":
			distribute(full - in[d]*strides[d])
		case autoPad == "VALID":
			pads[d], pads[d+2] = 0, 0
		case autoPad != "NOTSET":
			fail("attribute \"auto_pad\" = %q is not supported", autoPad)
		}
		if out[d] == 0 {
			out[d] = full - pads[d] - pads[d+2]
		}
		if out[d] <= 0 {
			fail("empty output (size %d along spatial axis %d)", out[d], d)
		}
	}
	shape := []int{x.shape[0], cout}
	if sp == 2 {
		shape = append(shape, out[0])
	}
	shape = append(shape, out[1])
	b.checkShape(shape)
	b.checkShape([]int{w.shape[1], k[0], k[1], in[0], in[1]}) // the columns of one group
	n := x.shape[0]
	cgIn, cgOut := cin/group, cout/group
	hw, ohw := in[0]*in[1], out[0]*out[1]
	rows := cgOut * k[0] * k[1]
	col := make([]float32, rows*hw)
	wf := w.floats()
	return b.emit(shape, []*value{x}, func(dst []float32, ins [][]float32) {
		src := ins[0]
		for img := 0; img < n; img++ {
			for g := 0; g < group; g++ {
				xg := src[(img*cin+g*cgIn)*hw:]
				wg := wf[g*cgIn*rows:]
				kernels.Gemm(true, false, rows, hw, cgIn, 1, wg, rows, xg, hw, 0, col, hw)
				og := dst[(img*cout+g*cgOut)*ohw : (img*cout+(g+1)*cgOut)*ohw]
				clear(og)
				col2im(og, col, cgOut, k, in, out, strides, dil, pads)
			}
			if bias != nil {
				for c := 0; c < cout; c++ {
					o := dst[(img*cout+c)*ohw : (img*cout+c+1)*ohw]
					for i := range o {
						o[i] += bias[c]
					}
				}
			}
		}
	})
}

// col2im adds col ([c·kh·kw, ih·iw]: each input position's contribution
// through each kernel tap) into out ([c, oh, ow]).
func col2im(out, col []float32, c int, k, in []int, o [2]int, s, d []int, pads [4]int) {
	hw := in[0] * in[1]
	for ch := 0; ch < c; ch++ {
		plane := out[ch*o[0]*o[1] : (ch+1)*o[0]*o[1]]
		for ky := 0; ky < k[0]; ky++ {
			for kx := 0; kx < k[1]; kx++ {
				row := col[((ch*k[0]+ky)*k[1]+kx)*hw:]
				for iy := 0; iy < in[0]; iy++ {
					oy := iy*s[0] - pads[0] + ky*d[0]
					if oy < 0 || oy >= o[0] {
						continue
					}
					orow := plane[oy*o[1] : (oy+1)*o[1]]
					src := row[iy*in[1] : (iy+1)*in[1]]
					ox := -pads[1] + kx*d[1]
					for _, v := range src {
						if ox >= 0 && ox < o[1] {
							orow[ox] += v
						}
						ox += s[1]
					}
				}
			}
		}
	}
}
