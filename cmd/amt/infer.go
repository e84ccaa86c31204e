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
	"sync"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/plural"
	"github.com/amt-dev/amt/nn"
)

// cmdInfer runs an ONNX model on raw float32 input:
//
//	amt infer -model M.onnx -input X.f32 -shape N,C,H,W -out Y.f32 [-batch B] [-max-memory 2GiB] [-device D]
//
// It writes every graph output, in graph-output order, concatenated per
// batch, as float32 little-endian. A model whose run of B images would
// plan more than -max-memory (weights, activations, inputs and outputs;
// see nn.LoadOptions) is refused before anything is allocated for it.
// -device cuda runs the model on an NVIDIA GPU (a binary built with -tags
// gpu), -device cuda,cpu falls back to the CPU when the GPU fails (see
// nn.LoadOptions); device events go to stderr.
//
// With -check M.onnx it runs nothing: it prints the model's operators,
// whether amt implements them, and the memory planned for a batch of
// -batch images (see checkModel).
func cmdInfer(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "infer", "-model M.onnx -input X.f32 -shape N,C,H,W -out Y.f32 [-batch B] [-max-memory SIZE] [-device D]\n       amt infer -check M.onnx [-batch B]")
	check := fs.String("check", "", "print the operators of ONNX model `file` (supported or not), its inputs and outputs and the memory planned for -batch images (default 1), and run nothing")
	model := fs.String("model", "", "ONNX model `file`")
	input := fs.String("input", "", "input `file`: float32 little-endian, C order, of the given shape")
	shapeStr := fs.String("shape", "", "input `shape`, comma-separated, batch first (e.g. 4,3,224,224)")
	out := fs.String("out", "", "output `file` (float32 little-endian)")
	batch := fs.Int("batch", 0, "images per run (0: all at once)")
	maxMem := byteSize(nn.DefaultMaxBytes)
	fs.Var(&maxMem, "max-memory", "most memory a run may plan: weights, activations, inputs and outputs (`size`: bytes, or with KiB, MiB, GiB)")
	device := fs.String("device", "cpu", "where the model runs: "+strings.Join(nn.DeviceNames(), ", ")+" (cuda needs a binary built with -tags gpu)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("infer: unexpected arguments %q", fs.Args())
	}
	if *check != "" {
		return checkModel(env, *check, *batch, int64(maxMem))
	}
	for _, f := range []struct{ name, v string }{{"model", *model}, {"input", *input}, {"shape", *shapeStr}, {"out", *out}} {
		if f.v == "" {
			return showUsagef(fs, "infer: flag -%s is required", f.name)
		}
	}
	if *batch < 0 {
		return usagef("infer: -batch %d: must be ≥ 0", *batch)
	}
	if err := nn.CheckDevice(*device); err != nil {
		return fmt.Errorf("infer: -device: %w", err)
	}
	shape, err := parseShape(*shapeStr)
	if err != nil {
		return usagef("infer: -shape %q: %w", *shapeStr, err)
	}
	n := shape[0]
	b := *batch
	if b == 0 || b > n {
		b = n
	}
	m, err := nn.LoadWith(*model, nn.LoadOptions{MaxBytes: int64(maxMem), Batch: b, Device: *device, Logf: stderrLog(env, "infer")})
	if err != nil {
		return fmt.Errorf("infer: %w", err)
	}
	defer m.Close()
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
	fmt.Fprintf(env.stdout, "wrote %s: outputs %s for %s in batches of %d on %s\n", *out, strings.Join(names, ", "), plural.Count(n, "input"), b, m.Device())
	return nil
}

// parseShape parses "N,C,H,W" into positive dimensions whose product (in
// bytes of float32) fits an int.
func parseShape(s string) ([]int, error) {
	var shape []int
	n := 1
	for i, f := range strings.Split(s, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("dimension %d (%q) is not an integer", i, f)
		}
		if d <= 0 {
			return nil, fmt.Errorf("dimension %d is %d; dimensions must be positive", i, d)
		}
		if n > math.MaxInt/4/d {
			return nil, fmt.Errorf("more than %d values", math.MaxInt/4)
		}
		n *= d
		shape = append(shape, d)
	}
	return shape, nil
}

// readFloat32s reads a float32 little-endian file holding exactly a tensor
// of the given shape, checking its size before reading it.
func readFloat32s(path string, shape []int) ([]float32, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	n := 1
	for _, d := range shape {
		n *= d // parseShape bounds the product
	}
	if st.Size() != 4*int64(n) {
		return nil, fmt.Errorf("input %s has %d bytes; shape %v needs %d float32 values = %d bytes", path, st.Size(), shape, n, 4*n)
	}
	if n == 0 {
		return nil, errors.New("empty input")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 4*n {
		return nil, fmt.Errorf("input %s has %d bytes; shape %v needs %d float32 values = %d bytes", path, len(b), shape, n, 4*n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// byteSize is a flag value of a number of bytes, written as an integer
// with an optional unit: B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB,
// GB, TB (powers of 1000).
type byteSize int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}

func (s *byteSize) Set(v string) error {
	num, mult := strings.TrimSpace(v), int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	x, err := strconv.ParseInt(num, 10, 64)
	if err != nil || x <= 0 || x > math.MaxInt64/mult {
		return fmt.Errorf("%q is not a positive size in bytes (e.g. 2GiB, 512MiB, 1000000)", v)
	}
	*s = byteSize(x * mult)
	return nil
}

func (s byteSize) String() string {
	for _, u := range byteUnits[:4] {
		if int64(s) >= u.mult && int64(s)%u.mult == 0 && (u.suffix == "TiB" || int64(s)%(u.mult<<10) != 0) {
			return fmt.Sprintf("%d%s", int64(s)/u.mult, u.suffix)
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// stderrLog returns a logger of device events (nn.LoadOptions.Logf) that
// writes lines to stderr, prefixed with the command's name.
func stderrLog(env *cliEnv, cmd string) func(format string, args ...any) {
	var mu sync.Mutex // sweep workers log concurrently
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(env.stderr, cmd+": "+format+"\n", args...)
	}
}
