//go:build gpu

package cuda

import (
	"fmt"

	"github.com/amt-dev/amt/nn/internal/shapes"
)

// UnaryOp is an element-wise function of Unary (AMT_UNARY_*); alpha and
// beta are its attributes where it has any.
type UnaryOp int32

// Unary operations, with ONNX's semantics.
const (
	UnaryCopy        UnaryOp = 0
	UnaryRelu        UnaryOp = 1
	UnaryLeakyRelu   UnaryOp = 2 // slope alpha
	UnaryClip        UnaryOp = 3 // to [alpha, beta]
	UnarySigmoid     UnaryOp = 4
	UnaryTanh        UnaryOp = 5
	UnaryExp         UnaryOp = 6
	UnaryLog         UnaryOp = 7
	UnarySqrt        UnaryOp = 8
	UnaryNeg         UnaryOp = 9
	UnaryAbs         UnaryOp = 10
	UnaryFloor       UnaryOp = 11
	UnaryCeil        UnaryOp = 12
	UnaryReciprocal  UnaryOp = 13
	UnaryElu         UnaryOp = 14 // alpha
	UnaryHardSigmoid UnaryOp = 15 // max(0, min(1, alpha·x + beta))
	UnaryAffine      UnaryOp = 16 // alpha·x + beta
)

// Unary sets dst[i] = f(src[i]) for every value of src; dst has src's
// length and may be src.
func (d *Device) Unary(op UnaryOp, dst, src *Buffer, alpha, beta float32) error {
	if op < UnaryCopy || op > UnaryAffine {
		return fmt.Errorf("cuda: Unary: unknown operation %d", op)
	}
	if err := d.valid("Unary", src, 0); err != nil {
		return err
	}
	if err := d.valid("Unary", dst, src.n); err != nil {
		return err
	}
	if src.n == 0 {
		return nil
	}
	p := unaryParams{X: src.ptr, Y: dst.ptr, N: int32(src.n), Op: int32(op), Alpha: alpha, Beta: beta}
	grid, block := blocks256(src.n)
	return launch(d, kUnary, grid, block, &p)
}

// ChannelAffine sets dst[i] = src[i]·scale[c] + shift[c] where
// c = (i / inner) mod channels: a BatchNormalization over NC… tensors.
func (d *Device) ChannelAffine(dst, src, scale, shift *Buffer, channels, inner int) error {
	if channels <= 0 || inner <= 0 {
		return fmt.Errorf("cuda: ChannelAffine: %d channels of %d values", channels, inner)
	}
	if err := d.valid("ChannelAffine", src, 0); err != nil {
		return err
	}
	if src.n%(channels*inner) != 0 {
		return fmt.Errorf("cuda: ChannelAffine: %d values are not a whole number of %d channels × %d", src.n, channels, inner)
	}
	for _, b := range []*Buffer{scale, shift} {
		if err := d.valid("ChannelAffine", b, channels); err != nil {
			return err
		}
	}
	if err := d.valid("ChannelAffine", dst, src.n); err != nil {
		return err
	}
	p := affineParams{X: src.ptr, Scale: scale.ptr, Shift: shift.ptr, Y: dst.ptr, N: int32(src.n), C: int32(channels), Inner: int32(inner)}
	grid, block := blocks256(src.n)
	return launch(d, kChannelAffine, grid, block, &p)
}

// BinaryOp is an element-wise operation of Binary (AMT_BINARY_*).
type BinaryOp int32

// Binary operations.
const (
	BinaryAdd BinaryOp = 0
	BinarySub BinaryOp = 1
	BinaryMul BinaryOp = 2
	BinaryDiv BinaryOp = 3
	BinaryPow BinaryOp = 4
)

// Binary sets dst = a op b with numpy broadcasting of shapes aShape and
// bShape; dst holds the broadcast shape and may be a or b when it has
// that operand's shape.
func (d *Device) Binary(op BinaryOp, dst, a *Buffer, aShape []int, b *Buffer, bShape []int) error {
	if op < BinaryAdd || op > BinaryPow {
		return fmt.Errorf("cuda: Binary: unknown operation %d", op)
	}
	shape, err := shapes.Broadcast(aShape, bShape)
	if err != nil {
		return fmt.Errorf("cuda: Binary: %w", err)
	}
	n, err := numel(shape)
	if err != nil {
		return fmt.Errorf("cuda: Binary: %w", err)
	}
	na, _ := numel(aShape)
	nb, _ := numel(bShape)
	for _, v := range []struct {
		b *Buffer
		n int
	}{{a, na}, {b, nb}, {dst, n}} {
		if err := d.valid("Binary", v.b, v.n); err != nil {
			return err
		}
	}
	if n == 0 {
		return nil
	}
	cs, st := collapse(shape, bstrides(aShape, shape), bstrides(bShape, shape))
	if len(cs) > maxDims {
		return fmt.Errorf("cuda: Binary: shapes %v and %v: broadcasting needs %d axes, at most %d are supported", aShape, bShape, len(cs), maxDims)
	}
	p := binaryParams{A: a.ptr, B: b.ptr, Y: dst.ptr, N: int32(n), NDim: int32(len(cs)), Op: int32(op)}
	for i := range cs {
		p.Shape[i], p.AStride[i], p.BStride[i] = int32(cs[i]), int32(st[0][i]), int32(st[1][i])
	}
	grid, block := blocks256(n)
	return launch(d, kBinary, grid, block, &p)
}
