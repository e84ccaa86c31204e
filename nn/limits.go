package nn

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/amt-dev/amt/nn/cuda"
)

// A model file is untrusted input: a 100-byte file can declare tensors of
// 10^12 values, dimensions that overflow when multiplied, or operators
// whose outputs (ConstantOfShape, Expand, Resize, …) take their size from
// values in the file. The loader therefore checks sizes before it
// allocates: the wire-level pre-pass (nn/onnxfix) checks every stored
// tensor against its dimensions, every shape an operator computes passes
// builder.checkShape before anything of its size is allocated, and the
// memory a run needs is planned, and compared with LoadOptions.MaxBytes,
// before it is allocated.

// Default limits of LoadOptions, sized for real CNNs: the models amt ships
// need under 100 MiB at batch 1 and their largest tensor has under 3·10^6
// elements.
const (
	// DefaultMaxBytes is the default bound on the memory a run may plan:
	// weights, constants computed at load time, activations, inputs and
	// outputs (2 GiB).
	DefaultMaxBytes = 2 << 30
	// DefaultMaxElements is the default bound on the elements of any one
	// tensor (2^26, 256 MiB of float32).
	DefaultMaxElements = 1 << 26
	// DefaultMaxNodes is the default bound on the number of nodes of a
	// graph.
	DefaultMaxNodes = 100000
	// minComputed is the least of maxComputed: what any model may compute
	// at load time whatever it stores (64 MiB).
	minComputed = 64 << 20
)

// maxComputed bounds the constants a model computes while it is built
// (folded Constant, ConstantOfShape, Tile, Expand… of constant inputs, and
// the packed or transposed weights of folded MatMuls): twice the weights
// the file stores, and at least minComputed. A real model computes little
// more than it stores; a file of a few hundred bytes that stores nothing
// cannot make the loader build gigabytes (below MaxBytes, which bounds
// weights, constants and activations together).
func (p *program) maxComputed() int64 {
	return max(minComputed, mulSat(2, p.weights))
}

// maxRank is the largest tensor rank the engine handles.
const maxRank = 32

// LoadOptions bounds what loading and running a model may allocate, and
// may choose its outputs. The zero value means the defaults.
type LoadOptions struct {
	// MaxBytes bounds the memory planned for a run: the weights, the
	// constants computed at load time, the activation buffers of the
	// graph (or, for batches run image by image, of each worker's graph),
	// and the batch's inputs and outputs. Loading fails when the run of
	// Batch images would need more, and so does a later Run of a larger
	// batch. Copies the convolution kernels make of their weights and the
	// per-call scratch of the kernels are not counted. 0 means
	// DefaultMaxBytes.
	MaxBytes int64
	// MaxElements bounds the number of elements of every tensor: declared
	// graph inputs and outputs, initializers, and every value an operator
	// computes, per image of the batch a graph is built for (the memory of
	// the whole batch is bounded by MaxBytes). 0 means DefaultMaxElements.
	MaxElements int64
	// MaxNodes bounds the number of nodes of the graph. 0 means
	// DefaultMaxNodes.
	MaxNodes int
	// Batch is the batch size whose planned memory is checked at load
	// time. 0 means the model's own: 1, or its fixed batch size.
	Batch int
	// Outputs, when not empty, makes these tensors the model's outputs
	// (see outputs.go): any float tensor the graph computes, intermediate
	// ones included. Empty means the graph's own outputs.
	Outputs []string

	// Device is where the model runs (see device.go): "cpu" (also ""),
	// "cuda" (an NVIDIA GPU through the CUDA driver, in a binary built with
	// -tags gpu; any failure of the GPU — no driver, no device, out of
	// memory, a failed kernel — is an error of LoadWith or Run), or
	// "cuda,cpu" (the GPU, and on any such failure the CPU from then on,
	// reported through Logf). The limits above bound the host's memory
	// plan, not the GPU's.
	Device string
	// CUDA selects the driver library and the GPU for the cuda device.
	CUDA cuda.Config
	// CPUOps names ONNX operators whose ops run on the CPU even on a
	// device that implements them, with copies to and from it (to rule out
	// a device kernel when results differ).
	CPUOps []string
	// Logf, if not nil, receives a line for each device event worth
	// knowing: a fallback to the CPU, ops that run on the CPU.
	Logf func(format string, args ...any)
}

// withDefaults returns o with its zero fields set to the defaults.
func (o LoadOptions) withDefaults() (LoadOptions, error) {
	if o.MaxBytes < 0 || o.MaxElements < 0 || o.MaxNodes < 0 || o.Batch < 0 {
		return o, fmt.Errorf("nn: load options %+v: limits must not be negative", o)
	}
	if err := CheckDevice(o.Device); err != nil {
		return o, fmt.Errorf("nn: load options: %w", err)
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxElements == 0 {
		o.MaxElements = DefaultMaxElements
	}
	if o.MaxNodes == 0 {
		o.MaxNodes = DefaultMaxNodes
	}
	return o, nil
}

// ErrLimit is wrapped by the errors of models (or batches) over the limits
// of their LoadOptions.
var ErrLimit = errors.New("over the limit")

// limitError returns an error that is ErrLimit (errors.Is) with the given
// message.
func limitError(format string, args ...any) error {
	return &overLimitError{fmt.Sprintf(format, args...)}
}

type overLimitError struct{ msg string }

func (e *overLimitError) Error() string        { return e.msg }
func (e *overLimitError) Is(target error) bool { return target == ErrLimit }

// ModelError is the error of a model file that cannot be loaded: not an
// ONNX file, malformed, using what the engine does not support, or over
// the limits of its LoadOptions. Its message is one line:
// "invalid model FILE: reason".
type ModelError struct {
	File string // the file (the name given to LoadBytes)
	Err  error  // the reason
}

func (e *ModelError) Error() string {
	return "invalid model " + oneLine(e.File, 200) + ": " + oneLine(e.Err.Error(), 600)
}

func (e *ModelError) Unwrap() error { return e.Err }

// oneLine returns s with control and other non-printable characters
// escaped (as strconv.Quote does), cut to at most max bytes.
func oneLine(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= max {
			b.WriteString("…")
			break
		}
		switch {
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// checkedNumel returns the number of elements of shape s, and false if a
// dimension is negative or the product exceeds limit.
func checkedNumel(s []int, limit int64) (int64, bool) {
	n, bound := int64(1), int64(1)
	for _, d := range s {
		if d < 0 {
			return 0, false
		}
		// bound: the product with zero dimensions counted as 1, so that no
		// intermediate product (numel(shape[k:]), strides) can overflow.
		if int64(d) > limit || bound > limit/max(int64(d), 1) {
			return 0, false
		}
		bound *= max(int64(d), 1)
		n *= int64(d)
	}
	return n, true
}

// checkShape fails the node being built (see fail) unless shape is a
// tensor shape within the limits: rank at most maxRank, no negative
// dimension, at most LoadOptions.MaxElements elements per image of the
// batch (zero dimensions counted as 1). It returns the number of elements.
//
// Every build function calls it on an output shape it computes from
// attribute values or constant inputs (ConstantOfShape, Expand, Reshape,
// Resize, Pad, Range, Tile, broadcasting, …) before allocating anything of
// that size, including index maps; emit and compileNode check every output
// again.
func (b *builder) checkShape(shape []int) int {
	if len(shape) > maxRank {
		fail("output of rank %d: at most %d is supported", len(shape), maxRank)
	}
	for _, d := range shape {
		if d < 0 {
			fail("output shape %v has a negative dimension", shape)
		}
	}
	n, ok := checkedNumel(shape, b.maxElements)
	if !ok {
		b.overLimit("output shape %v has more than %d elements, the limit per tensor", shape, b.maxElements)
	}
	return int(n)
}

// checkConst is checkShape for a constant computed while building (of
// int64 values if isInt, else float32): it also fails unless the weights,
// the constants computed so far and this one fit in LoadOptions.MaxBytes,
// so that the memory allocated while building stays within it.
func (b *builder) checkConst(shape []int, isInt bool) int {
	n := b.checkShape(shape)
	size := int64(4)
	if isInt {
		size = 8
	}
	add := mulSat(size, int64(n))
	if total := addSat(b.p.weights+b.constBytes, add); total > b.p.opt.MaxBytes {
		b.overLimit("weights and constants computed at load time would need %s, more than the limit of %s", formatBytes(total), formatBytes(b.p.opt.MaxBytes))
	}
	b.checkComputed(addSat(b.constBytes, add))
	return n
}

// overLimit fails the node being built with an error wrapping ErrLimit.
func (b *builder) overLimit(format string, args ...any) {
	panic(buildError{limitError(format, args...)})
}

// memPlan is the memory planned for a run.
type memPlan struct {
	batch       int
	weights     int64 // initializers (shared by clones)
	consts      int64 // constants computed while building the graph(s)
	activations int64 // op output buffers of the graph(s)
	io          int64 // the batch's inputs and outputs
	graphs      int   // graphs the run uses (workers running image by image)
}

func (p memPlan) total() int64 {
	return addSat(addSat(p.weights, p.consts), addSat(p.activations, p.io))
}

// mulSat and addSat multiply and add non-negative int64 values, saturating
// at math.MaxInt64.
func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func (p memPlan) String() string {
	s := fmt.Sprintf("%s (weights %s, constants %s, activations %s, inputs and outputs %s",
		formatBytes(p.total()), formatBytes(p.weights), formatBytes(p.consts), formatBytes(p.activations), formatBytes(p.io))
	if p.graphs > 1 {
		s += fmt.Sprintf(", over %d image-by-image workers", p.graphs)
	}
	return s + ")"
}

// formatBytes formats n bytes with a binary unit.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n), 0
	for v >= unit && u < 5 {
		v /= unit
		u++
	}
	return fmt.Sprintf("%.3g %ciB", v, "KMGTPE"[u-1])
}

// tensBytes returns the memory of a constant's values.
func tensBytes(t *tens) int64 {
	if t.isInt {
		return 8 * int64(len(t.i))
	}
	return 4 * int64(len(t.f))
}

// checkOutputs checks the outputs of the node just built: every shape
// within the limits (build functions check before they allocate; this
// catches what they only alias, such as a Reshape), every constant holding
// as many values as its shape, and the constants computed so far, with the
// weights, within LoadOptions.MaxBytes.
func (b *builder) checkOutputs(ins, outs []*value) {
	for _, v := range outs {
		if v == nil {
			continue
		}
		n := b.checkShape(v.shape)
		if v.c == nil {
			continue
		}
		have := len(v.c.f)
		if v.c.isInt {
			have = len(v.c.i)
		}
		if have != n {
			fail("internal error: constant output of shape %v holds %d values", v.shape, have)
		}
		shared := false
		for _, in := range ins {
			if in != nil && in.c != nil && sameData(in.c, v.c) {
				shared = true
			}
		}
		if !shared {
			b.constBytes += tensBytes(v.c)
		}
	}
	if total := b.p.weights + b.constBytes; total > b.p.opt.MaxBytes {
		b.overLimit("weights and constants computed at load time need %s, more than the limit of %s", formatBytes(total), formatBytes(b.p.opt.MaxBytes))
	}
	b.checkComputed(b.constBytes)
}

// checkComputed fails the node being built when the constants computed at
// load time would reach computed bytes, more than maxComputed.
func (b *builder) checkComputed(computed int64) {
	if m := b.p.maxComputed(); computed > m {
		b.overLimit("constants computed at load time would need %s, more than %s (twice the %s of weights the file stores, at least %s)",
			formatBytes(computed), formatBytes(m), formatBytes(b.p.weights), formatBytes(minComputed))
	}
}

// sameData reports whether two constants share their values.
func sameData(a, b *tens) bool {
	switch {
	case a.isInt != b.isInt:
		return false
	case a.isInt:
		return len(a.i) > 0 && len(b.i) > 0 && &a.i[0] == &b.i[0]
	}
	return len(a.f) > 0 && len(b.f) > 0 && &a.f[0] == &b.f[0]
}

// recordMemory records the memory planned for the instance built by b.
func (inst *instance) recordMemory(b *builder) {
	inst.constBytes = b.constBytes
	for _, buf := range inst.bufs {
		inst.bufBytes += 4 * int64(buf.size)
	}
	for _, in := range inst.inputs {
		inst.inBytes += 4 * int64(in.Shape().TotalSize()) // checked by build
	}
	for _, v := range inst.outputs {
		n, _ := checkedNumel(v.shape, inst.p.opt.MaxElements) // checked by checkOutputs
		inst.outBytes += 4 * max(1, n)
	}
}
