package record

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
)

// maxFeatureFile bounds the size of a features file read into memory
// (10,000 images × 512 features are 20 MB).
const maxFeatureFile = 4 << 30

// ReadFeatures reads a raw little-endian float32 matrix (the format of
// `amt sweep -features`; see DecodeFeatures). Its size is checked before
// it is read.
func ReadFeatures(path string, rows, dim int) ([]float32, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("features: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("features: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("features: %s is not a regular file", path)
	}
	if st.Size() > maxFeatureFile {
		return nil, 0, fmt.Errorf("features: %s is %d bytes, more than the %d allowed", path, st.Size(), int64(maxFeatureFile))
	}
	// The shape is checked from the size before the values are read.
	if _, _, err := featureShape(st.Size(), path, rows, dim); err != nil {
		return nil, 0, err
	}
	b, err := io.ReadAll(io.LimitReader(f, st.Size()))
	if err != nil {
		return nil, 0, fmt.Errorf("features: %w", err)
	}
	return DecodeFeatures(b, path, rows, dim)
}

// DecodeFeatures decodes a raw little-endian float32 matrix; name is used
// in errors. With dim > 0 the bytes must hold whole rows of dim values (and
// rows of them when rows > 0); with dim == 0 they must hold whole rows for
// rows images, and dim is derived. It returns the values and dim.
func DecodeFeatures(b []byte, name string, rows, dim int) ([]float32, int, error) {
	n, dim, err := featureShape(int64(len(b)), name, rows, dim)
	if err != nil {
		return nil, 0, err
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, dim, nil
}

// featureShape checks a features file of size bytes against rows and dim
// (see DecodeFeatures) and returns the number of values and dim.
func featureShape(size int64, name string, rows, dim int) (int, int, error) {
	if rows < 0 || dim < 0 {
		return 0, 0, fmt.Errorf("features: %s: negative rows %d or dimension %d", name, rows, dim)
	}
	if size%4 != 0 {
		return 0, 0, fmt.Errorf("features: %s holds %d bytes, not a whole number of float32 values", name, size)
	}
	n := size / 4
	mismatch := "one of the two files is truncated or they come from different sweeps"
	switch {
	case n == 0:
		return 0, 0, fmt.Errorf("features: %s is empty", name)
	case dim > 0:
		if n%int64(dim) != 0 {
			return 0, 0, fmt.Errorf("features: %s holds %d float32 values, not a whole number of rows of %d", name, n, dim)
		}
		if rows > 0 && n/int64(dim) != int64(rows) {
			return 0, 0, fmt.Errorf("features: %s holds %d rows of %d, but the verdict table has %d images: %s", name, n/int64(dim), dim, rows, mismatch)
		}
	case rows > 0:
		if n%int64(rows) != 0 {
			return 0, 0, fmt.Errorf("features: %s holds %d float32 values, which do not divide into %d rows (one per image of the verdict table): %s", name, n, rows, mismatch)
		}
		dim = int(n / int64(rows))
	default:
		return 0, 0, fmt.Errorf("features: %s: need the number of rows or the dimension", name)
	}
	return int(n), dim, nil
}

// EncodeFeatures returns the raw little-endian float32 bytes of a matrix.
func EncodeFeatures(f []float32) []byte {
	b := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}
