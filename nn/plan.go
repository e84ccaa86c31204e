package nn

import (
	"fmt"

	"github.com/amt-dev/amt/nn/kernels"
)

// PlannedBytes returns the memory Run plans for a batch of batch images:
// the weights, the constants computed at load time, the activation buffers
// of the graph Run uses for that batch (or, when it runs the batch image
// by image, of each of its min(kernels.Threads(), batch) workers' graphs), and
// the batch's inputs and outputs. It builds the graphs needed without
// allocating their buffers, and fails as Run would when they cannot be
// built (for example a batch other than the fixed one of a model of fixed
// shape). LoadOptions.MaxBytes bounds it for every Run.
func (m *Model) PlannedBytes(batch int) (int64, error) {
	if batch < 1 {
		return 0, fmt.Errorf("nn: %s: batch size must be positive, got %d", m.p.name, batch)
	}
	pl, err := m.plan(batch)
	if err != nil {
		return 0, fmt.Errorf("nn: %s: %w", m.p.name, err)
	}
	return pl.total(), nil
}

// checkPlan plans the memory of a run of batch images (0 or less: the
// model's own batch, 1 unless it has a fixed one) and fails when it
// exceeds LoadOptions.MaxBytes.
func (m *Model) checkPlan(batch int) (memPlan, error) {
	pl, err := m.plan(batch)
	if err != nil {
		return pl, err
	}
	if lim := m.p.opt.MaxBytes; pl.total() > lim {
		return pl, limitError("a batch of %d needs %v, more than the limit of %s", pl.batch, pl, formatBytes(lim))
	}
	return pl, nil
}

// plan returns the memory plan of a run of batch images, following Run's
// choice between one graph for the batch and image-by-image workers.
func (m *Model) plan(batch int) (memPlan, error) {
	p := m.p
	fixed := p.inputs[0].Shape[0]
	if batch <= 0 {
		batch = max(fixed, 1)
	}
	split := false
	switch {
	case p.dynamic:
		split = batch >= splitMinBatch && p.isSeparable()
	case p.splittable:
		split = batch > 1
	case batch != fixed:
		return memPlan{}, fmt.Errorf("the model takes a fixed batch of %d, not %d", fixed, batch)
	}
	pl := memPlan{batch: batch, weights: p.weights, graphs: 1}
	if !split {
		inst, err := m.instance(p.batchKey(batch))
		if err != nil {
			return pl, err
		}
		pl.consts, pl.activations, pl.io = inst.constBytes, inst.bufBytes, inst.inBytes+inst.outBytes
		return pl, nil
	}
	// Each worker's graphs, one per group size (see splitRun).
	w := min(kernels.Threads(), batch)
	sizes := m.splitGroups(batch, w)
	pl.graphs = w * len(sizes)
	var one *instance
	images := 0 // per worker, in all its graphs
	for _, g := range sizes {
		images += g
		inst, err := m.instance(p.batchKey(g))
		if err != nil {
			return pl, err
		}
		pl.consts = addSat(pl.consts, mulSat(int64(w), inst.constBytes))
		pl.activations = addSat(pl.activations, mulSat(int64(w), inst.bufBytes))
		one = inst // the last, for 1 image
	}
	// The batch's inputs and concatenated outputs, each worker's copy of
	// its largest group's outputs, and its graphs' own inputs (groupInputs).
	pl.io = addSat(mulSat(int64(batch), one.inBytes+one.outBytes), mulSat(int64(w*sizes[0]), one.outBytes))
	pl.io = addSat(pl.io, mulSat(int64(w*images), one.inBytes))
	return pl, nil
}
