package bandit

// dot64 returns Σ a_i·b_i, summed in index order.
func dot64(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// mulRows sets dst[i] = dot64(a[i·stride+off : i·stride+off+len(x)], x) for
// every i < len(dst): a block of the row-major matrix a (row stride
// stride) times x. Four rows go at a time, each summed in index order as
// dot64 sums it, so the results are bit-identical to dot64's; the four
// independent sums overlap in the pipeline, where one waits on each
// addition's latency.
func mulRows(dst, a []float64, stride, off int, x []float64) {
	n := len(x)
	i := 0
	for ; i+4 <= len(dst); i += 4 {
		r0 := a[i*stride+off:][:n]
		r1 := a[(i+1)*stride+off:][:n]
		r2 := a[(i+2)*stride+off:][:n]
		r3 := a[(i+3)*stride+off:][:n]
		var s0, s1, s2, s3 float64
		for j, v := range x {
			s0 += r0[j] * v
			s1 += r1[j] * v
			s2 += r2[j] * v
			s3 += r3[j] * v
		}
		dst[i], dst[i+1], dst[i+2], dst[i+3] = s0, s1, s2, s3
	}
	for ; i < len(dst); i++ {
		dst[i] = dot64(a[i*stride+off:][:n], x)
	}
}
