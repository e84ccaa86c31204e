package data

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// orderStream is the PCG stream (sequence) number of the case orders, so
// that an experiment seed used elsewhere gives an independent stream here.
const orderStream = 0x616d742d64617461 // "amt-data"

// Order returns the indices of the cases an experiment visits in one pass
// over a source of n cases: 0, 1, …, m−1 with m = min(n, limit) (limit 0
// or negative means all n), shuffled when shuffle is true.
//
// The shuffle is a Fisher–Yates shuffle (i from m−1 down to 1, swap i with
// j uniform in [0, i]) whose j are drawn from rand.NewPCG(seed,
// 0x616d742d64617461) of math/rand/v2 with Lemire's multiply-and-reject
// method, written out here so that orders stay byte-identical across Go
// releases; each pass continues the same PCG stream. Order is the first
// pass of [NewSampler]. The original
// tool shuffled with numpy's Mersenne Twister; its orders are not
// reproduced.
func Order(n int, seed uint64, shuffle bool, limit int) []int {
	return NewSampler(n, seed, shuffle, limit).Pass()
}

// Sampler draws case indices pass after pass, as the original tool did:
// each pass visits every selected case exactly once, in an order
// reshuffled for each pass (when shuffling), the next pass starting when
// the previous one is used up. A Sampler is not safe for concurrent use.
type Sampler struct {
	m       int
	shuffle bool
	rng     *rand.PCG
	order   []int
	pos     int
	pass    int
}

// NewSampler returns a sampler over the first min(n, limit) of n cases
// (all n when limit <= 0), see [Order]. It panics if n is negative.
func NewSampler(n int, seed uint64, shuffle bool, limit int) *Sampler {
	if n < 0 {
		panic(fmt.Sprintf("data: NewSampler: negative n %d", n))
	}
	m := n
	if limit > 0 && limit < n {
		m = limit
	}
	return &Sampler{m: m, shuffle: shuffle, rng: rand.NewPCG(seed, orderStream), pos: m, pass: -1}
}

// Len returns the number of cases in one pass.
func (s *Sampler) Len() int { return s.m }

// Next returns the next case index and the (0-based) pass it belongs to.
// It returns (-1, -1) when a pass holds no case.
func (s *Sampler) Next() (index, pass int) {
	if s.m == 0 {
		return -1, -1
	}
	if s.pos == s.m {
		s.refill()
	}
	i := s.order[s.pos]
	s.pos++
	return i, s.pass
}

// Pass returns the indices of the rest of the current pass, or of the
// next whole pass when the current one is used up (or none has started).
func (s *Sampler) Pass() []int {
	if s.m == 0 {
		return []int{}
	}
	if s.pos == s.m {
		s.refill()
	}
	out := append([]int(nil), s.order[s.pos:]...)
	s.pos = s.m
	return out
}

func (s *Sampler) refill() {
	if s.order == nil {
		s.order = make([]int, s.m)
	}
	for i := range s.order {
		s.order[i] = i
	}
	if s.shuffle {
		for i := len(s.order) - 1; i > 0; i-- {
			j := uniform(s.rng, uint64(i)+1)
			s.order[i], s.order[j] = s.order[j], s.order[i]
		}
	}
	s.pos = 0
	s.pass++
}

// uniform returns a uniform integer in [0, n) (n > 0) by Lemire's
// multiply-and-reject method on 64-bit draws of src.
func uniform(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// Passes returns the indices of p whole passes of [NewSampler](n, seed,
// shuffle, limit), concatenated.
func Passes(n int, seed uint64, shuffle bool, limit, p int) []int {
	s := NewSampler(n, seed, shuffle, limit)
	out := make([]int, 0, p*s.Len())
	for range p {
		out = append(out, s.Pass()...)
	}
	return out
}
