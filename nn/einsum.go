package nn

import (
	"slices"
	"strings"

	"github.com/amt-dev/amt/nn/kernels"
)

// Einsum: one operand (a transpose and a sum over the labels dropped) or
// two (a batched matrix product through kernels.Gemm: the labels of both
// operands and the output are the batch, those of both operands only are
// contracted, the others are the rows and columns); more operands are
// contracted left to right. Each operand's labels must be distinct
// (no diagonals); "..." stands for the same axes in every operand, right
// aligned, which must have equal sizes (no broadcasting).

// einsumTerm is an operand or the output: one label per axis; the axes of
// "..." get labels ellipsisLabel+k.
type einsumTerm []rune

const ellipsisLabel = 0x10000

// parseEinsum splits an equation into its operand terms and output term,
// given the operands' ranks.
func parseEinsum(eq string, ranks []int) ([]einsumTerm, einsumTerm) {
	eq = strings.ReplaceAll(eq, " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	parts := strings.Split(lhs, ",")
	if len(parts) != len(ranks) {
		fail("equation %q has %d operands, the node has %d inputs", eq, len(parts), len(ranks))
	}
	// The number of axes "..." stands for: the most of any operand (the
	// others' are right aligned with them).
	ell := 0
	for k, p := range parts {
		if pre, post, ok := strings.Cut(p, "..."); ok {
			ell = max(ell, ranks[k]-len(pre)-len(post))
		}
	}
	term := func(s string, rank int) einsumTerm {
		var t einsumTerm
		pre, post, hasEll := strings.Cut(s, "...")
		if strings.Contains(post, "...") {
			fail("equation %q: more than one ... in a term", eq)
		}
		for _, r := range pre + post {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
				fail("equation %q: invalid label %q", eq, r)
			}
		}
		t = append(t, []rune(pre)...)
		if hasEll {
			n := rank - len(pre) - len(post)
			if rank < 0 { // the output: as many as the operands have
				n = ell
			}
			if n < 0 {
				fail("equation %q: term %q has more labels than its operand's %d axes", eq, s, rank)
			}
			for k := 0; k < n; k++ {
				t = append(t, ellipsisLabel+rune(ell-n+k))
			}
		}
		t = append(t, []rune(post)...)
		if rank >= 0 && len(t) != rank {
			fail("equation %q: term %q does not match an operand of rank %d", eq, s, rank)
		}
		for k, l := range t {
			if slices.Contains(t[k+1:], l) {
				fail("equation %q: label %q repeated in one term (diagonals are not supported)", eq, l)
			}
		}
		return t
	}
	ins := make([]einsumTerm, len(parts))
	for k, p := range parts {
		ins[k] = term(p, ranks[k])
	}
	if explicit {
		return ins, term(rhs, -1)
	}
	// Implicit output: the ellipsis axes, then the labels used once, in
	// alphabetical order.
	count := map[rune]int{}
	for _, t := range ins {
		for _, l := range t {
			count[l]++
		}
	}
	var out einsumTerm
	for k := 0; k < ell; k++ {
		out = append(out, ellipsisLabel+rune(k))
	}
	var once []rune
	for l, c := range count {
		if c == 1 && l < ellipsisLabel {
			once = append(once, l)
		}
	}
	slices.Sort(once)
	return ins, append(out, once...)
}

func einsumOp(b *builder, a *attrs, ins []*value) *value {
	eq := a.str("equation", "")
	if len(ins) == 0 {
		fail("no inputs")
	}
	ranks := make([]int, len(ins))
	for k := range ins {
		ranks[k] = len(need(ins, k, "Inputs").shape)
	}
	terms, out := parseEinsum(eq, ranks)
	size := map[rune]int{}
	for k, t := range terms {
		for j, l := range t {
			d := ins[k].shape[j]
			if s, ok := size[l]; ok && s != d {
				fail("equation %q: label %q has sizes %d and %d (broadcasting is not supported)", eq, l, s, d)
			}
			size[l] = d
		}
	}
	for _, l := range out {
		if _, ok := size[l]; !ok {
			fail("equation %q: output label %q is in no operand", eq, l)
		}
	}
	// Contract left to right; a label is kept while a later operand or the
	// output uses it.
	v, t := ins[0], terms[0]
	for k := 1; k < len(ins); k++ {
		keep := slices.Clone(out)
		for _, later := range terms[k+1:] {
			keep = append(keep, later...)
		}
		v, t = b.einsum2(v, t, ins[k], terms[k], keep, size)
	}
	return b.einsum1(v, t, out, size)
}

// labelsShape returns the sizes of labels.
func labelsShape(t einsumTerm, size map[rune]int) []int {
	s := make([]int, len(t))
	for k, l := range t {
		s[k] = size[l]
	}
	return s
}

// permOf returns the permutation taking term from to term to (to's labels
// must all be in from).
func permOf(from, to einsumTerm) []int {
	perm := make([]int, len(to))
	for k, l := range to {
		perm[k] = slices.Index(from, l)
	}
	return perm
}

func isIdentity(perm []int) bool {
	for k, p := range perm {
		if k != p {
			return false
		}
	}
	return true
}

// einsum1 sums x (labels t) over the labels not in out and transposes the
// rest into out's order.
func (b *builder) einsum1(x *value, t, out einsumTerm, size map[rune]int) *value {
	// Kept labels in output order, then the summed ones.
	order := slices.Clone(out)
	for _, l := range t {
		if !slices.Contains(out, l) {
			order = append(order, l)
		}
	}
	perm := permOf(t, order)
	shape := labelsShape(out, size)
	if isIdentity(perm) && len(order) == len(out) {
		return alias(x, shape)
	}
	xs := x.shape
	n := numel(labelsShape(order[len(out):], size))
	var tmp []float32
	if !isIdentity(perm) {
		tmp = make([]float32, numel(xs))
	}
	return b.emit(shape, []*value{x}, func(dst []float32, ins [][]float32) {
		src := ins[0]
		if tmp != nil {
			transpose(tmp, src, xs, perm)
			src = tmp
		}
		for o := range dst {
			var s float32
			for _, v := range src[o*n : (o+1)*n] {
				s += v
			}
			dst[o] = s
		}
	})
}

// einsum2 contracts x (labels tx) with y (labels ty), keeping the labels
// in keep, into a value whose labels it returns: the batch labels, then
// x's, then y's.
func (b *builder) einsum2(x *value, tx einsumTerm, y *value, ty einsumTerm, keep einsumTerm, size map[rune]int) (*value, einsumTerm) {
	// Sum away the labels of one operand that nothing else uses.
	drop := func(v *value, t, other einsumTerm) (*value, einsumTerm) {
		var kept einsumTerm
		for _, l := range t {
			if slices.Contains(other, l) || slices.Contains(keep, l) {
				kept = append(kept, l)
			}
		}
		if len(kept) == len(t) {
			return v, t
		}
		return b.einsum1(v, t, kept, size), kept
	}
	x, tx = drop(x, tx, ty)
	y, ty = drop(y, ty, tx)
	var batch, m, n, k einsumTerm
	for _, l := range tx {
		switch {
		case !slices.Contains(ty, l):
			m = append(m, l)
		case slices.Contains(keep, l):
			batch = append(batch, l)
		default:
			k = append(k, l)
		}
	}
	for _, l := range ty {
		if !slices.Contains(tx, l) {
			n = append(n, l)
		}
	}
	nb, nm, nn, nk := numel(labelsShape(batch, size)), numel(labelsShape(m, size)), numel(labelsShape(n, size)), numel(labelsShape(k, size))
	// Operand layouts [batch, m, k] or [batch, k, m] (transposed) for x,
	// [batch, k, n] or [batch, n, k] for y: whichever needs no copy.
	layout := func(v *value, t einsumTerm, rows, cols einsumTerm) (perm []int, trans bool) {
		p := permOf(t, slices.Concat(batch, rows, cols))
		if isIdentity(p) {
			return nil, false
		}
		if q := permOf(t, slices.Concat(batch, cols, rows)); isIdentity(q) {
			return nil, true
		}
		return p, false
	}
	px, transA := layout(x, tx, m, k)
	py, transB := layout(y, ty, k, n)
	res := slices.Concat(batch, m, n)
	xs, ys := x.shape, y.shape
	var tmpX, tmpY []float32
	if px != nil {
		tmpX = make([]float32, numel(xs))
	}
	if py != nil {
		tmpY = make([]float32, numel(ys))
	}
	lda, ldb := nk, nn
	if transA {
		lda = nm
	}
	if transB {
		ldb = nk
	}
	v := b.emit(labelsShape(res, size), []*value{x, y}, func(dst []float32, ins [][]float32) {
		a, c := ins[0], ins[1]
		if px != nil {
			transpose(tmpX, a, xs, px)
			a = tmpX
		}
		if py != nil {
			transpose(tmpY, c, ys, py)
			c = tmpY
		}
		for i := 0; i < nb; i++ {
			kernels.Gemm(transA, transB, nm, nn, nk, 1, a[i*nm*nk:], lda, c[i*nk*nn:], ldb, 0, dst[i*nm*nn:], nn)
		}
	})
	return v, res
}

// einsumPerImage: an Einsum whose every operand is batched and starts
// with the same label, which the output starts with too, computes each
// image alone.
func einsumPerImage(b *builder, a *attrs, ins, outs []*value) bool {
	ranks := make([]int, len(ins))
	for k, v := range ins {
		if v == nil || !b.batched(v) {
			return false
		}
		ranks[k] = len(v.shape)
	}
	var terms []einsumTerm
	var out einsumTerm
	if !attempt(func() { terms, out = parseEinsum(a.str("equation", ""), ranks) }) {
		return false
	}
	for _, t := range terms {
		if len(t) == 0 || t[0] != out[0] {
			return false
		}
	}
	return len(out) > 0
}
