//go:build ignore

package main

// winogradFile emits the Winograd transforms and the deinterleaving copy.
func winogradFile() {
	fileHeader()
	p("// Winograd F(2×2, 3×3) transforms of rows of tiles (see winograd.go:")
	p("// winoInputGo and winoOutputGo are the specification; these compute the")
	p("// same sums in the same order), and the even/odd split of the padding copy.")
	// Interleave indices for VPERMI2PS: lo = a0 b0 a1 b1 … a7 b7, hi = a8 b8 … a15 b15.
	words("winoIlv", 0, func(i int) int { return i/2 + 16*(i%2) })
	words("winoIlv", 64, func(i int) int { return 8 + i/2 + 16*(i%2) })
	// Deinterleave indices: even 0, 2, …, 30; odd 1, 3, …, 31.
	evenOdd("winoIlv", 128)
	p("GLOBL winoIlv<>(SB), RODATA|NOPTR, $256")
	laneMasks("winoMask")
	winoInput(16)
	winoInput(8)
	winoInputRows(16, 4)
	winoInputRows(16, 8)
	winoInputRows(8, 4)
	winoOutput(16)
	winoOutput(8)
	winoOutputRows(16, 4)
	winoOutputRows(16, 8)
	winoOutputRows(8, 4)
	deinterleave(16)
	deinterleave(8)
}

// winoT returns the Bᵀ row combination of the transform: t_i = a op b.
var winoT = [4]struct {
	a, b int
	op   string
}{{0, 2, "SUB"}, {1, 2, "ADD"}, {2, 1, "SUB"}, {1, 3, "SUB"}}

// vop emits dst = a op b (op ADD or SUB) on vector registers.
func vop(op, a, b, dst string) { p("\tV%sPS %s, %s, %s", op, b, a, dst) }

// isa returns the function suffix and the vector registers (v(i) names
// register i) of a width.
func isa(w int) (name string, v func(i int) string) {
	if w == 16 {
		return "AVX512", vregs("Z")
	}
	return "AVX2", vregs("Y")
}
