package nn

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/nn/kernels"
)

// Image-parallel execution of batched calls.
//
// A graph runs op by op over the whole batch, so at batch 60 every op's
// output (tens of MiB) streams through memory before the next op reads it,
// and each kernel call is split over the cores. When every op of a graph
// computes each image from that image alone, Run instead gives each core
// whole images: every worker runs its own graphs, image after image, or a
// few at a time for a model with large weights (a group: its ops reuse
// their weights from the cache for each image of the group; see
// splitGroups), with single-threaded kernels, so an image's activations
// stay in its core's caches and the cores never wait for each other. The
// results are the same as image by image: the kernels compute an image the
// same way at any batch size and on any number of goroutines
// (TestSplitGroups checks it on every model of the test zoo).

// splitMinBatch is the smallest batch Run runs image by image in parallel.
const splitMinBatch = 2

// perImage reports whether the node just compiled by def from ins to outs,
// in a graph built for b.batch images, computes image i of its outputs from
// image i of its inputs alone (axis 0 being the batch axis of every runtime
// value). It is conservative: an operator without a per-image rule, or one
// used across the batch axis, makes the graph not separable.
func (b *builder) perImage(def opDef, a *attrs, ins, outs []*value) bool {
	runtimeOut := false
	for _, v := range outs {
		if v == nil {
			continue
		}
		if v.c == nil {
			runtimeOut = true
		}
	}
	if !runtimeOut {
		return true // folded while building: no work at run time
	}
	for _, v := range outs {
		if v != nil && !b.batched(v) {
			return false
		}
	}
	return def.perImage != nil && def.perImage(b, a, ins, outs)
}

// batched reports whether v is a runtime value with the batch axis first.
func (b *builder) batched(v *value) bool {
	return v.c == nil && len(v.shape) > 0 && v.shape[0] == b.batch
}

// batchedFirst is the per-image rule of the operators that compute an
// image of their output from that image of input 0 (element-wise, by
// windows within an image, or a reshape that keeps the batch axis:
// row-major, each image's values stay one block): input 0 is a batched
// runtime value, the others are constants.
func batchedFirst(b *builder, _ *attrs, ins, _ []*value) bool {
	if len(ins) == 0 || ins[0] == nil || !b.batched(ins[0]) {
		return false
	}
	for _, v := range ins[1:] {
		if v != nil && v.c == nil {
			return false
		}
	}
	return true
}

// samePerImage reports whether v is a constant with the batch axis first
// whose images are all equal: what a constant broadcast along the batch
// (an Expand of a [1,…] tensor to the batch size) holds, and what the
// graph built for one image holds once.
func (b *builder) samePerImage(v *value) bool {
	if v.c == nil || len(v.shape) == 0 || v.shape[0] != b.batch {
		return false
	}
	per := numel(v.shape[1:])
	if v.c.isInt {
		for i := per; i < len(v.c.i); i++ {
			if v.c.i[i] != v.c.i[i%per] {
				return false
			}
		}
		return true
	}
	for i := per; i < len(v.c.f); i++ {
		if math.Float32bits(v.c.f[i]) != math.Float32bits(v.c.f[i%per]) {
			return false
		}
	}
	return true
}

// axisNot0 reports whether axis ax of a rank-r value, normalised, is not
// the batch axis.
func axisNot0(ax int64, r int) bool {
	if ax < 0 {
		ax += int64(r)
	}
	return ax > 0 && ax < int64(r)
}

// splitRun runs a batch of n images image by image, for a separable graph
// with a dynamic batch or a model of fixed batch 1 (see Run): each of up
// to kernels.Threads workers (m, then m's worker clones) takes the next
// group of images (see splitGroups) and runs it on its own graph for that
// many, until none are left. The outputs are concatenated along axis 0.
func (m *Model) splitRun(inputs []*tensor.Dense, n int) ([]*tensor.Dense, error) {
	w := min(kernels.Threads(), n)
	for len(m.workers) < w-1 {
		m.workers = append(m.workers, m.Clone())
	}
	sizes := m.splitGroups(n, w)
	insts := make([]map[int]*instance, w) // per worker, by group size
	for k := range insts {
		mk := m
		if k > 0 {
			mk = m.workers[k-1]
		}
		insts[k] = map[int]*instance{}
		for _, g := range sizes {
			inst, err := mk.instance(m.p.batchKey(g))
			if err != nil {
				return nil, err
			}
			insts[k][g] = inst
		}
	}
	outs := make([][]float32, len(m.p.outputs))
	shapes := make([][]int, len(m.p.outputs))
	for k, v := range insts[0][1].outputs {
		s := slices.Clone(v.shape)
		if len(s) == 0 || s[0] != 1 {
			// Possible for a model of fixed shape; perImage rules it out for
			// a dynamic batch.
			return nil, fmt.Errorf("nn: %s: cannot run the model image by image on %d images: output %q has shape %v, not [1,…]", m.p.name, n, m.p.outputs[k].Name, s)
		}
		s[0] = n
		shapes[k] = s
		outs[k] = make([]float32, numel(s))
	}
	// take returns the next images to run, [i, i+c): a group while every
	// worker has one left, then single images, so that the workers finish
	// together.
	var next atomic.Int64
	take := func() (i, c int) {
		for {
			i := int(next.Load())
			if i >= n {
				return n, 0
			}
			c := sizes[len(sizes)-1]
			for _, g := range sizes {
				if n-i >= g*w {
					c = g
					break
				}
			}
			if next.CompareAndSwap(int64(i), int64(i+c)) {
				return i, c
			}
		}
	}
	errs := make([]error, w)
	var wg sync.WaitGroup
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// This core runs whole images: the kernels need not split
			// their work onto it.
			defer kernels.Occupy()()
			for {
				i, c := take()
				if c == 0 {
					return
				}
				inst := insts[k][c]
				res, err := inst.run(inst.groupInputs(inputs, i, c))
				if err != nil {
					errs[k] = fmt.Errorf("%w (images %d to %d of %d)", err, i, i+c-1, n)
					next.Store(int64(n)) // stop the other workers early
					return
				}
				for o, r := range res {
					per := len(outs[o]) / n
					d := r.Data().([]float32)
					if len(d) != c*per {
						errs[k] = fmt.Errorf("nn: %s: internal: images %d to %d: output %q has %d values, want %d", m.p.name, i, i+c-1, m.p.outputs[o].Name, len(d), c*per)
						next.Store(int64(n))
						return
					}
					copy(outs[o][i*per:(i+c)*per], d)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	res := make([]*tensor.Dense, len(outs))
	for k := range outs {
		res[k] = tensor.New(tensor.WithShape(shapes[k]...), tensor.WithBacking(outs[k]))
	}
	return res, nil
}

// groupInputs copies images [i, i+c) of the batch inputs into inputs that
// inst, a graph for c images, owns: a graph keeps its inputs bound after a
// run, and a view of the batch would keep the caller's whole batch alive
// in each of the workers' graphs until their next run.
func (inst *instance) groupInputs(inputs []*tensor.Dense, i, c int) []*tensor.Dense {
	if inst.own == nil {
		inst.own = make([]*tensor.Dense, len(inputs))
		for j, t := range inputs {
			s := t.Shape().Clone()
			s[0] = c
			inst.own[j] = tensor.New(tensor.WithShape(s...), tensor.Of(tensor.Float32))
		}
	}
	for j, t := range inputs {
		d := inst.own[j].Data().([]float32)
		copy(d, t.Data().([]float32)[i*len(d)/c:])
	}
	return inst.own
}

// splitGroupMax is the most images a worker of splitRun runs through one
// graph. Each image more in a group reuses the weights a layer has just
// brought into cache, with diminishing returns, while the group's
// activations grow with it (19 MiB for 8 SqueezeNet-224 images): beyond 8
// the saving no longer pays for the memory.
const splitGroupMax = 8

// splitGroupWeights is the size of a model's weights, in bytes, above
// which splitRun groups images. A group pays when its ops' weights would
// not stay in a core's cache from one image to the next (SqueezeNet-1.1,
// 2.9 MB); with a few hundred KB of weights per layer (ResNet-20, 1.1 MB)
// they stay anyway, and a group only spreads each layer's activations
// over more memory. A variable for the tests, which group every model.
var splitGroupWeights int64 = 2 << 20

// splitGroups returns the group sizes splitRun's w workers use for n
// images, largest first: the largest power of two up to splitGroupMax of
// which every worker gets a group, and 1, for the images left when every
// worker no longer has a whole group (single images let the workers finish
// together); only 1 for a model of fixed batch 1, whose graph cannot take
// more, or whose weights are at most splitGroupWeights. Two sizes, so two
// graphs per worker.
func (m *Model) splitGroups(n, w int) []int {
	g := 1
	if m.p.dynamic && m.p.weights > splitGroupWeights {
		for g*2 <= splitGroupMax && g*2*w <= n {
			g *= 2
		}
	}
	if g == 1 {
		return []int{1}
	}
	return []int{g, 1}
}

// splitProbeBatch is the batch size of the graph isSeparable inspects: not
// 1 (every axis of size 1 would look like a batch axis) and unlikely to be
// any other dimension of a model (such as 3 colour channels).
const splitProbeBatch = 5

// isSeparable reports whether the program's graph computes each image from
// that image alone, so that batched calls may run image by image. It
// builds the graph for splitProbeBatch images once per program to find out.
func (p *program) isSeparable() bool {
	p.sepOnce.Do(func() {
		inst, err := p.build(splitProbeBatch)
		p.separable = err == nil && inst.separable
	})
	return p.separable
}
