//go:build gpu

package cuda

import "fmt"

// ReduceOp is a reduction of Reduce.
type ReduceOp int32

// Reductions (AMT_REDUCE_*).
const (
	ReduceSum  ReduceOp = 0
	ReduceMean ReduceOp = 1
	ReduceMax  ReduceOp = 2 // NaN wins, as Go's max
)

// Reduce reduces src, viewed as [outer, n, inner], over its middle axis
// into dst [outer, inner], summing in index order: GlobalAveragePool
// (inner 1), ReduceMean over contiguous axes.
func (d *Device) Reduce(op ReduceOp, dst, src *Buffer, outer, n, inner int) error {
	if op < ReduceSum || op > ReduceMax {
		return fmt.Errorf("cuda: Reduce: unknown operation %d", op)
	}
	if err := d.axisView("Reduce", dst, outer, 1, inner); err != nil {
		return err
	}
	if err := d.axisView("Reduce", src, outer, n, inner); err != nil {
		return err
	}
	if outer*inner == 0 {
		return nil
	}
	if n == 0 {
		return fmt.Errorf("cuda: Reduce: empty axis")
	}
	p := reduceParams{X: src.ptr, Y: dst.ptr, Outer: int32(outer), N: int32(n), Inner: int32(inner), Op: int32(op)}
	grid, block := blocks256(outer * inner)
	return launch(d, kReduceAxis, grid, block, &p)
}

// Softmax computes the softmax of src, viewed as [outer, n, inner], along
// its middle axis into dst (which may be src).
func (d *Device) Softmax(dst, src *Buffer, outer, n, inner int) error {
	if err := d.axisView("Softmax", src, outer, n, inner); err != nil {
		return err
	}
	if err := d.axisView("Softmax", dst, outer, n, inner); err != nil {
		return err
	}
	if outer*n*inner == 0 {
		return nil
	}
	p := softmaxParams{X: src.ptr, Y: dst.ptr, Outer: int32(outer), N: int32(n), Inner: int32(inner)}
	grid, block := blocks256(outer * inner)
	return launch(d, kSoftmaxAxis, grid, block, &p)
}

// axisView checks that b holds an [outer, n, inner] tensor.
func (d *Device) axisView(what string, b *Buffer, outer, n, inner int) error {
	if outer < 0 || n < 0 || inner < 0 {
		return fmt.Errorf("cuda: %s: negative size [%d, %d, %d]", what, outer, n, inner)
	}
	t, err := numel([]int{outer, n, inner})
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", what, err)
	}
	return d.valid(what, b, t)
}
