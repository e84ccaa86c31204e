package nn

import (
	"fmt"
	"slices"
	"strings"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/nn/kernels"
)

// Devices.
//
// A model's graph — its ops and the fusion decisions taken while building
// it — is built once per batch size by the same builder for every device.
// Each op the builder emits carries its CPU function (gop.fn) and, beside
// it, a device-independent description of the same work (a devOp below:
// the kind of computation, its parameters and shapes, its constant data),
// recorded by onDevice at the emit site. The CPU runs the functions on the
// Gorgonia tape; a device (device_cuda.go, built with the gpu tag) turns
// the descriptions into its own operations, plans its own memory the way
// planMemory does for the CPU, and runs the whole graph with the
// activations on the device: one host→device copy per graph input and one
// device→host copy per graph output for each batch.
//
// An op without a description (an operator no device implements yet, or
// parameters the device kernels do not cover) runs on the CPU inside the
// device's graph, with explicit copies of its inputs to the host and of
// its output back; loading the model reports every such op in one line
// (LoadOptions.Logf) and Model.DeviceFallbacks lists them. The CPU path is
// unchanged by all this: the descriptions are only read by a device.

// DeviceNames returns the values LoadOptions.Device accepts (besides "").
func DeviceNames() []string { return []string{"cpu", "cuda", "cuda,cpu"} }

// CheckDevice returns an error unless s is "" or one of DeviceNames.
func CheckDevice(s string) error {
	if s == "" || slices.Contains(DeviceNames(), s) {
		return nil
	}
	return fmt.Errorf("unknown device %q%s (want %s)", s, suggest.DidYouMean(s, DeviceNames()), strings.Join(DeviceNames(), ", "))
}

// attachDevice moves a loaded model to the device o names (LoadOptions.
// Device); the graph for batch size 1 is built on it now, so that a
// missing driver or a lack of memory shows when loading.
func attachDevice(m *Model, o LoadOptions) (*Model, error) {
	if o.Device == "" || o.Device == "cpu" {
		return m, nil
	}
	dev := &deviceRun{fallback: o.Device == "cuda,cpu", logf: o.Logf}
	acc, err := openCUDA(o.CUDA, dev.log, o.CPUOps)
	if err == nil {
		dev.acc = acc
		err = acc.prepare(m, m.p.batchKey(1))
	}
	if err != nil {
		if acc != nil {
			acc.close()
		}
		err = fmt.Errorf("nn: load %s: %w", m.p.name, err)
		if !dev.fallback {
			return nil, err
		}
		dev.log("%v; running on the CPU", err)
		return m, nil
	}
	m.dev = dev
	return m, nil
}

// Device describes where the model runs now: "cpu", or "cuda: " and the
// GPU.
func (m *Model) Device() string {
	if m.dev == nil {
		return "cpu"
	}
	return m.dev.acc.String()
}

// DeviceFallbacks lists the ops of the graphs built so far on the device
// that run on the CPU (see LoadOptions), as "Operator(node)"; nil on the
// CPU.
func (m *Model) DeviceFallbacks() []string {
	if m.dev == nil {
		return nil
	}
	return m.dev.acc.fallbacks()
}

// Close releases what the model holds on its device (a no-op on the CPU).
// The model runs on the CPU afterwards.
func (m *Model) Close() error {
	if m.dev == nil {
		return nil
	}
	err := m.dev.acc.close()
	m.dev = nil
	return err
}

// deviceRun is the device a Model runs on, and what to do when it fails.
type deviceRun struct {
	acc      accel
	fallback bool // on a failure, run on the CPU from then on
	logf     func(format string, args ...any)
}

func (d *deviceRun) log(format string, args ...any) {
	if d.logf != nil {
		d.logf(format, args...)
	}
}

// clone returns the same device for a clone of the model, with its own
// graphs.
func (d *deviceRun) clone() *deviceRun {
	if d == nil {
		return nil
	}
	return &deviceRun{acc: d.acc.clone(), fallback: d.fallback, logf: d.logf}
}

// accel is a device's runner of one Model (see device_cuda.go).
type accel interface {
	// prepare builds the graph for a batch key (see program.batchKey).
	prepare(m *Model, key int) error
	// run runs a validated batch of batch images; split: the model has a
	// fixed batch of 1 and runs the batch image by image.
	run(m *Model, inputs []*tensor.Dense, batch int, split bool) ([]*tensor.Dense, error)
	fallbacks() []string
	clone() accel
	close() error
	String() string
}

// runDevice runs a validated batch on m's device; on a failure it either
// fails or, as configured, moves m to the CPU for good and runs there.
func (m *Model) runDevice(inputs []*tensor.Dense, batch int, split bool) ([]*tensor.Dense, error) {
	res, err := m.dev.acc.run(m, inputs, batch, split)
	if err == nil {
		return res, nil
	}
	err = fmt.Errorf("nn: %s: on the GPU: %w", m.p.name, err)
	if !m.dev.fallback {
		return nil, err
	}
	m.dev.log("%v; running on the CPU from now on", err)
	m.dev.acc.close()
	m.dev = nil
	return m.Run(inputs...)
}

// opRec is an op as the builder emitted it: its inputs (nil for an
// omitted optional input) and what it computes, device-independently.
type opRec struct {
	op     *gop
	optype string // the ONNX operator
	ins    []*value
	dev    devOp // nil: the CPU only
}

// onDevice records d as the description of the op computing v (when v is
// not folded at load time) and returns v.
func (b *builder) onDevice(v *value, d devOp) *value {
	if v.op == nil {
		return v
	}
	for k := len(b.ops) - 1; k >= 0; k-- {
		if b.ops[k].op == v.op {
			b.ops[k].dev = d
			return v
		}
	}
	fail("internal: onDevice: op %s was not emitted by this builder", v.op.label)
	return v
}

// devOp describes the work of one op for a device: the kind of
// computation with its parameters, in the terms of the CPU function it
// stands beside. The op's inputs are those of its opRec, in order.
type devOp interface{ devOp() }

// devConv is a convolution of batch images (input 0) with its fused
// epilogue: bias, the residual input 1 when present, the activation; then
// the max pooling fused after it, if any. The weight and bias are the
// CPU's (any BatchNormalization folded in).
type devConv struct {
	shape        kernels.ConvShape
	batch        int
	weight, bias []float32
	act          kernels.Activation
	pool         *kernels.PoolShape // nil, or a max pooling of the output (the op's output)
}

// devAffine is y = x·scale[c] + shift[c] with c = (i / inner) mod
// channels: a BatchNormalization.
type devAffine struct {
	scale, shift    []float32
	channels, inner int
}

// devPool is a max or average pooling of planes planes. Average pooling
// takes the bottom and right pads and count_include_pad (see
// kernels.PoolShape for the rest).
type devPool struct {
	max                 bool
	planes              int
	shape               kernels.PoolShape
	padBottom, padRight int
	countIncludePad     bool
}

// devReduce is a "sum", "mean" or "max" of the input, transposed by perm
// first when perm is not nil (its shape inShape), viewed as
// [outer, n, inner], over its middle axis.
type devReduce struct {
	op              string
	perm, inShape   []int
	outer, n, inner int
}

// devUnary is an element-wise function named by its ONNX operator, with
// its attributes: LeakyRelu and Elu (alpha), Clip (bounds alpha, beta),
// HardSigmoid (alpha, beta).
type devUnary struct {
	op          string
	alpha, beta float32
}

// unaryOps are the element-wise operators without attributes a device
// may implement, whose functions unaryOp alone determines.
var unaryOps = map[string]bool{
	"Abs": true, "Ceil": true, "Exp": true, "Floor": true, "Log": true, "Neg": true,
	"Reciprocal": true, "Relu": true, "Sigmoid": true, "Sqrt": true, "Tanh": true,
}

// devBinary is the broadcasting binary operator op (an ONNX name) of
// inputs of shapes a and b.
type devBinary struct {
	op   string
	a, b []int
}

// devSoftmax is a softmax along the middle axis of [outer, n, inner].
type devSoftmax struct{ outer, n, inner int }

// devTranspose permutes the axes of an input of the given shape.
type devTranspose struct{ shape, perm []int }

// devConcat joins inputs of the given shapes along axis.
type devConcat struct {
	shapes [][]int
	axis   int
}

// devGather is gatherAxes: out[i0,…] = in[maps[0][i0],…], or fill where a
// map entry is negative.
type devGather struct {
	shape []int
	maps  [][]int
	fill  float32
}

// devTake is ONNX Gather of the indices ids along axis.
type devTake struct {
	shape []int
	axis  int
	ids   []int
}

// devResize is a bilinear resize of planes ih×iw planes, output row y and
// column x interpolating the taps ys[y] and xs[x].
type devResize struct {
	planes, ih, iw int
	ys, xs         []linearTap
}

// devGemm is Y = alpha·op(A)·op(B) (+ C): A and B are inputs 0 and 1; C is
// either the constant c (beta applied, broadcast to m×n) or input 2 of
// shape cShape scaled by beta.
type devGemm struct {
	transA, transB bool
	m, n, k        int
	lda, ldb       int
	alpha          float32
	c              []float32
	cShape         []int
	beta           float32
}

// devMatMul is len(offA) products of m×k and k×n matrices of inputs 0 and
// 1 starting at the given offsets, into consecutive m×n matrices, each
// plus the bias row (n values, when not nil) and, with res, input 2 (a
// residual of the output's shape).
type devMatMul struct {
	m, n, k    int
	offA, offB []int
	bias       []float32
	res        bool
}

func (devConv) devOp()      {}
func (devAffine) devOp()    {}
func (devPool) devOp()      {}
func (devReduce) devOp()    {}
func (devUnary) devOp()     {}
func (devBinary) devOp()    {}
func (devSoftmax) devOp()   {}
func (devTranspose) devOp() {}
func (devConcat) devOp()    {}
func (devGather) devOp()    {}
func (devTake) devOp()      {}
func (devResize) devOp()    {}
func (devGemm) devOp()      {}
func (devMatMul) devOp()    {}
