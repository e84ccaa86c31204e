//go:build ignore

package main

// winogradFile emits the Winograd transforms and the deinterleaving copy.
func winogradFile() {
	fileHeader()
	p("// Winograd F(2×2, 3×3) transforms of rows of tiles (see winograd.go:")
	p("// winoInputGo and winoOutputGo are the specification; these compute the")
	p("// same sums in the same order), and the even/odd split of the padding copy.")
	// Interleave indices for VPERMI2PS: lo = a0 b0 a1 b1 … a7 b7, hi = a8 b8 … a15 b15.
	for i := 0; i < 16; i++ {
		p("DATA winoIlv<>+%d(SB)/4, $%d", 4*i, i/2+16*(i%2))
	}
	for i := 0; i < 16; i++ {
		p("DATA winoIlv<>+%d(SB)/4, $%d", 64+4*i, 8+i/2+16*(i%2))
	}
	// Deinterleave indices: even 0, 2, …, 30; odd 1, 3, …, 31.
	for i := 0; i < 16; i++ {
		p("DATA winoIlv<>+%d(SB)/4, $%d", 128+4*i, 2*i)
	}
	for i := 0; i < 16; i++ {
		p("DATA winoIlv<>+%d(SB)/4, $%d", 192+4*i, 2*i+1)
	}
	p("GLOBL winoIlv<>(SB), RODATA|NOPTR, $256")
	// AVX2 masks: 8 × -1 then 8 × 0; the mask for c lanes starts at (8-c)·4.
	for i := 0; i < 16; i++ {
		v := "$0xffffffff"
		if i >= 8 {
			v = "$0"
		}
		p("DATA winoMask<>+%d(SB)/4, %s", 4*i, v)
	}
	p("GLOBL winoMask<>(SB), RODATA|NOPTR, $64")
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

// isaName returns the function suffix and register prefix of a width.
func isaName(w int) (name, z string) {
	if w == 16 {
		return "AVX512", "Z"
	}
	return "AVX2", "Y"
}
