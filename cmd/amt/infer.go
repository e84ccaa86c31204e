package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/nn"
)

// cmdInfer runs an ONNX model on raw float32 input:
//
//	amt infer -model M.onnx -input X.f32 -shape N,C,H,W -out Y.f32 [-batch B]
//
// It writes every graph output, in graph-output order, concatenated per
// batch, as float32 little-endian.
//
// With -check M.onnx it runs nothing: it prints the model's operators,
// whether amt implements them, and the memory planned for a batch of
// -batch images (see checkModel).
func cmdInfer(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "infer", "-model M.onnx -input X.f32 -shape N,C,H,W -out Y.f32 [-batch B]\n       amt infer -check M.onnx [-batch B]")
	check := fs.String("check", "", "print the operators of ONNX model `file` (supported or not), its inputs and outputs and the memory planned for -batch images (default 1), and run nothing")
	model := fs.String("model", "", "ONNX model `file`")
	input := fs.String("input", "", "input `file`: float32 little-endian, C order, of the given shape")
	shapeStr := fs.String("shape", "", "input `shape`, comma-separated, batch first (e.g. 4,3,224,224)")
	out := fs.String("out", "", "output `file` (float32 little-endian)")
	batch := fs.Int("batch", 0, "images per run (0: all at once)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("infer: unexpected arguments %q", fs.Args())
	}
	if *check != "" {
		return checkModel(env, *check, *batch)
	}
	for _, f := range []struct{ name, v string }{{"model", *model}, {"input", *input}, {"shape", *shapeStr}, {"out", *out}} {
		if f.v == "" {
			fs.Usage()
			return fmt.Errorf("infer: flag -%s is required", f.name)
		}
	}
	if *batch < 0 {
		return fmt.Errorf("infer: -batch %d: must be ≥ 0", *batch)
	}
	shape, err := parseShape(*shapeStr)
	if err != nil {
		return fmt.Errorf("infer: -shape %q: %w", *shapeStr, err)
	}
	m, err := nn.Load(*model)
	if err != nil {
		return fmt.Errorf("infer: %w", err)
	}
	ins := m.Inputs()
	if len(ins) != 1 {
		return fmt.Errorf("infer: model %s has %d inputs; infer supports single-input models", *model, len(ins))
	}
	if len(shape) != len(ins[0].Shape) {
		return fmt.Errorf("infer: -shape %v has rank %d, model input %q has rank %d %v", shape, len(shape), ins[0].Name, len(ins[0].Shape), ins[0].Shape)
	}
	data, err := readFloat32s(*input, shape)
	if err != nil {
		return fmt.Errorf("infer: %w", err)
	}
	n := shape[0]
	b := *batch
	if b == 0 || b > n {
		b = n
	}
	f, err := os.Create(*out)
	if err != nil {
		return fmt.Errorf("infer: %w", err)
	}
	w := bufio.NewWriter(f)
	err = func() error {
		per := len(data) / n
		for i := 0; i < n; i += b {
			if err := ctx.Err(); err != nil {
				return err
			}
			cnt := min(b, n-i)
			s := append([]int{cnt}, shape[1:]...)
			x := tensor.New(tensor.WithShape(s...), tensor.WithBacking(data[i*per:(i+cnt)*per]))
			outs, err := m.Run(x)
			if err != nil {
				return fmt.Errorf("images %d–%d: %w", i, i+cnt-1, err)
			}
			var buf [4]byte
			for _, o := range outs {
				for _, v := range o.Data().([]float32) {
					binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
					if _, err := w.Write(buf[:]); err != nil {
						return err
					}
				}
			}
		}
		return w.Flush()
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(*out)
		return fmt.Errorf("infer: %w", err)
	}
	var names []string
	for _, o := range m.Outputs() {
		names = append(names, fmt.Sprintf("%s %v", o.Name, o.Shape))
	}
	fmt.Fprintf(env.stdout, "wrote %s: outputs %s for %d inputs in batches of %d\n", *out, strings.Join(names, ", "), n, b)
	return nil
}

// parseShape parses "N,C,H,W" into positive dimensions.
func parseShape(s string) ([]int, error) {
	var shape []int
	for i, f := range strings.Split(s, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("dimension %d (%q) is not an integer", i, f)
		}
		if d <= 0 {
			return nil, fmt.Errorf("dimension %d is %d; dimensions must be positive", i, d)
		}
		shape = append(shape, d)
	}
	return shape, nil
}

// readFloat32s reads a float32 little-endian file holding exactly a tensor
// of the given shape.
func readFloat32s(path string, shape []int) ([]float32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	if len(b) != 4*n {
		return nil, fmt.Errorf("input %s has %d bytes; shape %v needs %d float32 values = %d bytes", path, len(b), shape, n, 4*n)
	}
	if n == 0 {
		return nil, errors.New("empty input")
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}
