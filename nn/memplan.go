package nn

import (
	"fmt"

	"gorgonia.org/gorgonia"
)

// buffer is memory for op outputs: size float32 values, allocated (data)
// when the graph first runs; owner is the id of the op whose output it
// holds now.
type buffer struct {
	size  int
	data  []float32
	owner int
}

// planMemory gives every op an output buffer, reusing the buffers of
// values no longer needed, in the order the tape machine runs the ops
// (the reverse of gorgonia.Sort, as gorgonia.Compile does). keep holds ops
// whose outputs must survive the run (graph outputs). It returns the ops in
// execution order and the buffers, whose memory is not allocated yet (see
// instance.allocate).
func planMemory(g *gorgonia.ExprGraph, keep map[*gop]bool) ([]*gop, []*buffer, error) {
	sorted, err := gorgonia.Sort(g)
	if err != nil {
		return nil, nil, err
	}
	var order []*gop
	for i := len(sorted) - 1; i >= 0; i-- {
		if o, ok := sorted[i].Op().(*gop); ok {
			order = append(order, o)
		}
	}
	pos := make(map[*gop]int, len(order))
	for i, o := range order {
		pos[o] = i
	}
	last := make(map[*gop]int, len(order))
	for i, o := range order {
		last[o] = i
		for _, s := range o.srcs {
			if s != nil {
				if pos[s] >= i {
					return nil, nil, fmt.Errorf("internal: %s runs before its input %s", o.label, s.label)
				}
				last[s] = max(last[s], i)
			}
		}
	}
	var bufs, free []*buffer
	release := map[int][]*buffer{} // position after which buffers are free
	give := func(o *gop) {
		if b := allocate(o, &free); b != nil {
			bufs = append(bufs, b)
		}
	}
	for i, o := range order {
		free = append(free, release[i-1]...)
		if o.into != nil || (o.parts != nil && o.buf != nil) {
			// Part of a zero-copy Concat: allocated with its first member.
			t := o
			if o.into != nil {
				t = o.into
			}
			if t.buf == nil {
				if pos[t] <= i {
					return nil, nil, fmt.Errorf("internal: concat %s runs before its part %s", t.label, o.label)
				}
				give(t)
				if !keep[t] {
					release[last[t]] = append(release[last[t]], t.buf)
				}
			}
			if o.into != nil {
				// The part's value, never read as such: its consumer (the
				// Concat) reads the shared buffer.
				o.buf = t.buf
			}
			continue
		}
		give(o)
		if !keep[o] {
			release[last[o]] = append(release[last[o]], o.buf)
		}
	}
	return order, bufs, nil
}

// allocate gives o the smallest free buffer that fits, or a new one, which
// it returns.
func allocate(o *gop, free *[]*buffer) (created *buffer) {
	size := o.outShape.TotalSize()
	best := -1
	for k, b := range *free {
		if b.size >= size && (best < 0 || b.size < (*free)[best].size) {
			best = k
		}
	}
	if best >= 0 {
		o.buf = (*free)[best]
		*free = append((*free)[:best], (*free)[best+1:]...)
		return nil
	}
	o.buf = &buffer{size: size, owner: -1}
	return o.buf
}
