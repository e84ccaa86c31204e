//go:build gpu

package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/amt-dev/amt/nn/kernels"
)

// paramStructs maps the structs of kernels/params.h (amt_X_params) to
// their Go mirrors, and kernelParams each kernel to its parameter block.
var (
	paramStructs = map[string]any{
		"conv": convParams{}, "gemm": gemmParams{}, "pool": poolParams{}, "reduce": reduceParams{},
		"softmax": softmaxParams{}, "unary": unaryParams{}, "affine": affineParams{}, "binary": binaryParams{},
		"permute": permuteParams{}, "gather": gatherParams{}, "copy2d": copy2dParams{}, "resize": resizeParams{},
	}
	kernelParams = map[kernel]any{
		kConv2dTiled: convParams{}, kConv2dDirect: convParams{}, kGemmTiled: gemmParams{},
		kMaxPool2d: poolParams{}, kAvgPool2d: poolParams{}, kReduceAxis: reduceParams{},
		kSoftmaxAxis: softmaxParams{}, kUnary: unaryParams{}, kChannelAffine: affineParams{},
		kBinary: binaryParams{}, kPermute: permuteParams{}, kGatherAxes: gatherParams{},
		kCopy2d: copy2dParams{}, kResizeLinear: resizeParams{},
	}
)

type cField struct{ name, kind string }

// parseParams reads the structs of params.h: field names and kinds
// ("ptr", "int", "float", "int[6]").
func parseParams(t *testing.T, src string) map[string][]cField {
	t.Helper()
	structRE := regexp.MustCompile(`(?s)typedef struct \{(.*?)\} amt_(\w+)_params;`)
	fieldRE := regexp.MustCompile(`^(const )?(int|float) (\*?)(.*);$`)
	out := map[string][]cField{}
	for _, m := range structRE.FindAllStringSubmatch(src, -1) {
		var fields []cField
		for _, line := range strings.Split(m[1], "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "//") {
				continue
			}
			f := fieldRE.FindStringSubmatch(line)
			if f == nil {
				t.Fatalf("params.h: struct %s: cannot read %q", m[2], line)
			}
			for _, name := range strings.Split(f[4], ",") {
				name = strings.TrimSpace(name)
				kind := f[2]
				if f[3] == "*" {
					kind = "ptr"
				} else if n, ok := strings.CutSuffix(name, "[AMT_MAX_DIMS]"); ok {
					name, kind = n, kind+"[6]"
				}
				fields = append(fields, cField{name, kind})
			}
		}
		out[m[2]] = fields
	}
	return out
}

func goKind(t reflect.Type) string {
	switch {
	case t.Kind() == reflect.Uint64:
		return "ptr"
	case t.Kind() == reflect.Int32:
		return "int"
	case t.Kind() == reflect.Float32:
		return "float"
	case t.Kind() == reflect.Array && t.Elem().Kind() == reflect.Int32:
		return fmt.Sprintf("int[%d]", t.Len())
	}
	return t.String()
}

// TestParamsMatchHeader checks every Go parameter struct against its C
// struct field by field (name, type, order), and the sizes against the
// .param blocks of the PTX entries.
func TestParamsMatchHeader(t *testing.T) {
	src, err := os.ReadFile("kernels/params.h")
	must(t, err)
	cs := parseParams(t, string(src))
	if len(cs) != len(paramStructs) {
		t.Errorf("params.h has %d structs, the Go side %d", len(cs), len(paramStructs))
	}
	for name, fields := range cs {
		v, ok := paramStructs[name]
		if !ok {
			t.Errorf("params.h: amt_%s_params has no Go mirror", name)
			continue
		}
		gt := reflect.TypeOf(v)
		if gt.NumField() != len(fields) {
			t.Errorf("amt_%s_params has %d fields, %s %d", name, len(fields), gt.Name(), gt.NumField())
			continue
		}
		for i, f := range fields {
			gf := gt.Field(i)
			if strings.ReplaceAll(f.name, "_", "") != strings.ToLower(gf.Name) || f.kind != goKind(gf.Type) {
				t.Errorf("amt_%s_params field %d is %s %s, %s has %s %s", name, i, f.kind, f.name, gt.Name(), goKind(gf.Type), gf.Name)
			}
		}
		if gt.Size()%8 != 0 {
			t.Errorf("%s is %d bytes, not a multiple of 8", gt.Name(), gt.Size())
		}
	}

	// #defines shared with the Go side.
	defs := map[string]int64{}
	for _, m := range regexp.MustCompile(`#define (AMT_\w+) (-?\d+)`).FindAllStringSubmatch(string(src), -1) {
		v, _ := strconv.ParseInt(m[2], 10, 64)
		defs[m[1]] = v
	}
	for name, v := range map[string]int64{
		"AMT_MAX_DIMS": maxDims,
		"AMT_ACT_NONE": int64(kernels.ActNone), "AMT_ACT_RELU": int64(kernels.ActRelu),
		"AMT_ACT_LEAKY_RELU": int64(kernels.ActLeakyRelu), "AMT_ACT_CLIP": int64(kernels.ActClip),
		"AMT_REDUCE_SUM": int64(ReduceSum), "AMT_REDUCE_MEAN": int64(ReduceMean), "AMT_REDUCE_MAX": int64(ReduceMax),
		"AMT_BINARY_ADD": int64(BinaryAdd), "AMT_BINARY_SUB": int64(BinarySub), "AMT_BINARY_MUL": int64(BinaryMul),
		"AMT_BINARY_DIV": int64(BinaryDiv), "AMT_BINARY_POW": int64(BinaryPow),
		"AMT_UNARY_COPY": int64(UnaryCopy), "AMT_UNARY_RELU": int64(UnaryRelu), "AMT_UNARY_LEAKY_RELU": int64(UnaryLeakyRelu),
		"AMT_UNARY_CLIP": int64(UnaryClip), "AMT_UNARY_SIGMOID": int64(UnarySigmoid), "AMT_UNARY_TANH": int64(UnaryTanh),
		"AMT_UNARY_EXP": int64(UnaryExp), "AMT_UNARY_LOG": int64(UnaryLog), "AMT_UNARY_SQRT": int64(UnarySqrt),
		"AMT_UNARY_NEG": int64(UnaryNeg), "AMT_UNARY_ABS": int64(UnaryAbs), "AMT_UNARY_FLOOR": int64(UnaryFloor),
		"AMT_UNARY_CEIL": int64(UnaryCeil), "AMT_UNARY_RECIPROCAL": int64(UnaryReciprocal), "AMT_UNARY_ELU": int64(UnaryElu),
		"AMT_UNARY_HARD_SIGMOID": int64(UnaryHardSigmoid), "AMT_UNARY_AFFINE": int64(UnaryAffine),
	} {
		if got, ok := defs[name]; !ok || got != v {
			t.Errorf("params.h: %s is %d (defined: %v), the Go side %d", name, got, ok, v)
		}
	}

	// The PTX: every kernel the Go side launches, and nothing else, with a
	// parameter block of its struct's size.
	entryRE := regexp.MustCompile(`\.entry (\w+)\(\s*\.param \.align \d+ \.b8 \w+_param_0\[(\d+)\]`)
	entries := map[string]int{}
	ptxs, _ := filepath.Glob("kernels/*.ptx")
	for _, p := range ptxs {
		b, err := os.ReadFile(p)
		must(t, err)
		for _, m := range entryRE.FindAllStringSubmatch(string(b), -1) {
			entries[m[1]], _ = strconv.Atoi(m[2])
		}
	}
	for k := range numKernels {
		size, ok := entries[k.name()]
		if !ok {
			t.Errorf("kernel %s is in no PTX file", k.name())
			continue
		}
		delete(entries, k.name())
		if want := int(reflect.TypeOf(kernelParams[k]).Size()); size != want {
			t.Errorf("kernel %s takes %d parameter bytes, its Go struct has %d", k.name(), size, want)
		}
	}
	for name := range entries {
		t.Errorf("PTX entry %s is not launched from Go (add it to kernelNames)", name)
	}
}
