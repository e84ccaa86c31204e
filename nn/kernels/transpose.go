package kernels

// Transpose sets dst[j·rows+i] = src[i·cols+j]: dst is the cols×rows
// transpose of the rows×cols row-major matrix src (the two must not
// overlap; each holds at least rows·cols values). It only moves values,
// so every kernel set gives the same result. The assembly sets move 8×8
// blocks through registers (transposeStrip8); a matrix of at least
// transposeMinValues values is split by columns over the free threads
// (FreeThreads, as the other kernels).
func Transpose(dst, src []float32, rows, cols int) {
	n := rows * cols
	if n == 0 {
		return
	}
	_, _ = dst[n-1], src[n-1]
	w := 1
	if n >= transposeMinValues {
		w = FreeThreads()
	}
	if w == 1 { // without the closure, which would be allocated
		transposeCols(dst, src, rows, cols, 0, cols)
		return
	}
	// Chunks of whole 8-column blocks, so that each worker runs the
	// block kernel on all but the last chunk's tail.
	blocks := (cols + 7) / 8
	ParallelFor(blocks, w, func(b0, b1 int) {
		transposeCols(dst, src, rows, cols, 8*b0, min(8*b1, cols))
	})
}

// transposeMinValues is the size from which Transpose splits its work:
// below it, the fork and join cost more than they save.
const transposeMinValues = 16 << 10

// transposeCols is Transpose for the columns [j0, j1) of src.
func transposeCols(dst, src []float32, rows, cols, j0, j1 int) {
	i := 0
	if nb := (j1 - j0) / 8; nb > 0 && activeSet().isa != isaGeneric {
		for ; i+8 <= rows; i += 8 {
			transposeStrip8(&dst[j0*rows+i], &src[i*cols+j0], cols, rows, nb)
		}
		// The rows below the last full strip, and the columns after
		// the last full block, in Go.
		transposeGo(dst, src, rows, cols, i, rows, j0, j0+8*nb)
		transposeGo(dst, src, rows, cols, 0, rows, j0+8*nb, j1)
		return
	}
	transposeGo(dst, src, rows, cols, 0, rows, j0, j1)
}

// transposeGo is Transpose for rows [i0, i1) and columns [j0, j1) of src,
// in tiles of 16×16 values.
func transposeGo(dst, src []float32, rows, cols, i0, i1, j0, j1 int) {
	const tile = 16
	for ib := i0; ib < i1; ib += tile {
		ie := min(ib+tile, i1)
		for jb := j0; jb < j1; jb += tile {
			je := min(jb+tile, j1)
			for j := jb; j < je; j++ {
				row := dst[j*rows+ib : j*rows+ie]
				for k := range row {
					row[k] = src[(ib+k)*cols+j]
				}
			}
		}
	}
}
