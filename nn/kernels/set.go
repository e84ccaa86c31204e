package kernels

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/amt-dev/amt/internal/suggest"
)

// A kernelSet is one implementation of the package's innermost loops: the
// GEMM micro-kernel with its tile shape, and the vector max of the pooling.
// The drivers (blocking, packing, threading, convolution strategies) are
// shared; only these loops differ between instruction sets.
//
// The assembly sets (avx2, avx512) give bit-identical results: their
// micro-kernels accumulate every element of C in the same order, with one
// FMA per product, and apply the same epilogue operations in the same
// order; they differ only in how many elements they compute at once. The
// portable set (generic) multiplies and adds separately on amd64 (the Go
// compiler does not fuse them there), so it agrees with them within
// float32 rounding only.
type kernelSet struct {
	name string
	// needs names the CPU features the set requires (for messages).
	needs string
	// ok reports whether the set can run on this CPU and build.
	ok bool
	// mr is the number of rows of C one micro-kernel call computes, a
	// multiple of the 4-row panels of packed A; nr the number of columns,
	// the width of the B panels.
	mr, nr int
	// isa selects the loops (see gemm and maxInto); a switch rather than
	// function values, so that the compiler sees that the pointers passed
	// to them do not escape.
	isa isa
}

type isa int

const (
	isaGeneric isa = iota
	isaAVX2
	isaAVX512
)

// gemm computes the tile of C at c (row stride ldc) of rows ≤ mr rows and
// cols ≤ nr columns: C = a·b over depth k, then the epilogue ep (see
// kernelGo). a holds ⌈rows/4⌉ packed 4-row panels, panel q at
// a[q·aStride:]; row p of b is b[boff[p]:boff[p]+nr], every offset at
// most maxOff. pf is a prefetch hint: the byte distance from a B row to
// the same row of the next panel the driver will read.
func (s *kernelSet) gemm(k int, a []float32, aStride int, b []float32, boff []int, maxOff int, c []float32, ldc int, ep *epilogue, rows, cols, pf int) {
	switch s.isa {
	case isaAVX512:
		gemmAVX512(k, a, aStride, b, boff, maxOff, c, ldc, ep, rows, cols, pf)
	case isaAVX2:
		gemmAVX2(k, a, b, boff, maxOff, c, ldc, ep, rows, cols, pf)
	default:
		gemmGeneric(k, a, b, boff, c, ldc, ep, rows, cols)
	}
}

// maxInto sets dst[i] = max(a[i], b[i]) (NaN when either is NaN); a and b
// are at least as long as dst, which may alias them.
func (s *kernelSet) maxInto(dst, a, b []float32) {
	if s.isa != isaGeneric {
		maxIntoAVX2Go(dst, a, b)
		return
	}
	maxIntoGo(dst, a, b)
}

// nrMax is the widest B panel of any kernel set.
const nrMax = 48

// sets lists the kernel sets, best first. The amd64 assembly sets are
// listed in every build, available only where kernel_amd64.go finds the
// CPU features (never on other architectures or with the noasm tag).
var sets = []*kernelSet{&avx512Set, &avx2Set, &genericSet}

// avx512Set: 8×48 AVX-512 micro-kernels (24 ZMM accumulators), with
// narrower variants for the edges (4 rows; 16 or 32 columns) and masked
// stores instead of a scratch tile. On CPUs that split 512-bit operations
// in two (AMD Zen 4) its peak is that of AVX2; it gains from the larger
// register tile (half the loads per FMA) and from the masks.
var avx512Set = kernelSet{
	name: "avx512", needs: "AVX-512F, AVX-512VL, AVX2 and FMA" + asmNeeds, mr: 8, nr: 48, isa: isaAVX512,
}

// avx2Set: the 4×24 AVX2+FMA micro-kernel (12 YMM accumulators).
var avx2Set = kernelSet{
	name: "avx2", needs: "AVX2 and FMA" + asmNeeds, mr: 4, nr: 24, isa: isaAVX2,
}

// genericSet is the portable Go set: it runs everywhere.
var genericSet = kernelSet{
	name: "generic", needs: "nothing", ok: true, mr: 4, nr: 24, isa: isaGeneric,
}

// cur is the kernel set in use; see Use.
var cur atomic.Pointer[kernelSet]

// active returns the kernel set in use.
func activeSet() *kernelSet { return cur.Load() }

// KernelSetEnv is the environment variable that chooses the kernel set
// when the package is initialised (see KernelSets); empty or unset, the
// best set this CPU runs is used.
const KernelSetEnv = "AMT_KERNELS"

func init() {
	detectSets()
	best := &genericSet
	for _, s := range sets {
		if s.ok {
			best = s
			break
		}
	}
	cur.Store(best)
	if name := os.Getenv(KernelSetEnv); name != "" {
		if err := Use(name); err != nil {
			// A one-line warning rather than a panic at start-up: the
			// best set runs instead, and KernelSet says which.
			fmt.Fprintf(os.Stderr, "amt: %s=%s ignored: %v; using %s\n", KernelSetEnv, name, err, best.name)
		}
	}
}

// KernelSet names the kernel set in use: "avx512" (AVX-512 F+VL), "avx2"
// (AVX2+FMA) or "generic" (portable Go), or "reference" in refkernels
// builds (the naive implementation, see naive.go).
func KernelSet() string {
	if refKernels {
		return "reference"
	}
	return activeSet().name
}

// KernelSets lists the package's kernel sets, best first, and whether each
// can run here (with the reason when not).
func KernelSets() []KernelSetInfo {
	var out []KernelSetInfo
	for _, s := range sets {
		info := KernelSetInfo{Name: s.name, Available: s.ok}
		if !s.ok {
			info.Reason = "needs " + s.needs
		}
		out = append(out, info)
	}
	return out
}

// KernelSetInfo describes one kernel set.
type KernelSetInfo struct {
	Name      string
	Available bool
	Reason    string // why not, when not available
}

// Use makes the named kernel set the one in use for Gemm, MaxPool and the
// convolutions NewConv prepares from now on (a Conv keeps the set it was
// prepared with). It fails for an unknown set or one this CPU cannot run.
// The environment variable AMT_KERNELS does the same at start-up.
func Use(name string) error {
	s, err := lookupSet(name)
	if err != nil {
		return err
	}
	cur.Store(s)
	return nil
}

// lookupSet returns the named set if it can run here.
func lookupSet(name string) (*kernelSet, error) {
	var names []string
	for _, s := range sets {
		names = append(names, s.name)
		if s.name != name {
			continue
		}
		if !s.ok {
			return nil, fmt.Errorf("kernel set %q needs %s, which this CPU or build lacks", name, s.needs)
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown kernel set %q%s (want one of %s)", name, suggest.DidYouMean(name, names), strings.Join(names, ", "))
}

// gemmGeneric is the generic set's gemm: kernelGo on full tiles, through a
// scratch tile on the edges.
func gemmGeneric(k int, a, b []float32, boff []int, c []float32, ldc int, ep *epilogue, rows, cols int) {
	if rows == mr && cols == nr {
		kernelGo(k, a, b, boff, c[:(mr-1)*ldc+nr], ldc, ep)
		return
	}
	var tile [mr * nr]float32
	if ep.flags&epAccumulate != 0 {
		for r := 0; r < rows; r++ {
			copy(tile[r*nr:r*nr+cols], c[r*ldc:r*ldc+cols])
		}
	}
	kernelGo(k, a, b, boff, tile[:], nr, ep)
	for r := 0; r < rows; r++ {
		copy(c[r*ldc:r*ldc+cols], tile[r*nr:r*nr+cols])
	}
}

// maxIntoGo is the portable maxInto.
func maxIntoGo(dst, a, b []float32) {
	n := len(dst)
	a, b = a[:n], b[:n]
	for i := range dst {
		dst[i] = max(a[i], b[i])
	}
}
