package nn

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
)

// Load reads and prepares the ONNX model in the file at path, with the
// default LoadOptions. See LoadWith.
func Load(path string) (*Model, error) { return LoadWith(path, LoadOptions{}) }

// LoadWith reads and prepares the ONNX model in the file at path within the
// limits of opt. Every error about the file, including its absence, is a
// *ModelError ("invalid model FILE: reason"); one over the limits also
// wraps ErrLimit.
func LoadWith(path string, opt LoadOptions) (*Model, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	b, err := readModel(path, opt.MaxBytes)
	if err != nil {
		return nil, &ModelError{File: path, Err: err}
	}
	return LoadBytesWith(b, path, opt)
}

// readModel reads the file at path, refusing one of more than max bytes
// before reading it (or, for what is not a regular file, after max+1).
func readModel(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, unwrapPath(err)
	}
	if st.IsDir() {
		return nil, errors.New("is a directory")
	}
	tooBig := func(n int64) error {
		return limitError("the file has %d bytes, more than the limit of %s", n, formatBytes(max))
	}
	if st.Mode().IsRegular() && st.Size() > max {
		return nil, tooBig(st.Size())
	}
	// A regular file is read into a buffer of its size (io.ReadAll would
	// grow one by doubling, copying a 35 MB model about ten times).
	var buf bytes.Buffer
	if st.Mode().IsRegular() {
		buf.Grow(int(st.Size()) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, unwrapPath(err)
	}
	b := buf.Bytes()
	if int64(len(b)) > max {
		return nil, tooBig(int64(len(b)))
	}
	return b, nil
}

// unwrapPath returns the cause of a *fs.PathError (ModelError names the
// file already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// LoadBytes prepares the ONNX model encoded in b, with the default
// LoadOptions; name (e.g. the file name) is used in error messages. See
// LoadBytesWith.
func LoadBytes(b []byte, name string) (*Model, error) { return LoadBytesWith(b, name, LoadOptions{}) }

// LoadBytesWith prepares the ONNX model encoded in b within the limits of
// opt; name (e.g. the file name) is used in error messages. The model is
// checked before anything is allocated for it: the file's structure and
// stored tensors (see nn/onnxfix), the graph (operators, attributes,
// shapes) and the memory a run of opt.Batch images would need. Errors are
// *ModelError values. The activation buffers are allocated on the first
// run.
func LoadBytesWith(b []byte, name string, opt LoadOptions) (*Model, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	m, err := load(b, name, opt)
	if err != nil {
		return nil, &ModelError{File: name, Err: err}
	}
	return attachDevice(m, opt)
}

func load(b []byte, name string, opt LoadOptions) (*Model, error) {
	if int64(len(b)) > opt.MaxBytes {
		return nil, limitError("the file has %d bytes, more than the limit of %s", len(b), formatBytes(opt.MaxBytes))
	}
	p, err := newProgram(b, name, opt)
	if err != nil {
		return nil, err
	}
	if len(opt.Outputs) > 0 {
		if p, err = p.withOutputs(opt.Outputs); err != nil {
			return nil, err
		}
	}
	m := &Model{p: p, insts: map[int]*instance{}}
	// Build the graph for the smallest batch now so that unsupported
	// operators and attributes are reported at load time.
	if _, err := m.instance(p.batchKey(1)); err != nil {
		return nil, err
	}
	if _, err := m.checkPlan(opt.Batch); err != nil {
		return nil, err
	}
	return m, nil
}
