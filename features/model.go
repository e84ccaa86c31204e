package features

import (
	"fmt"
	"path/filepath"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/nn/preprocess"
	"github.com/amt-dev/amt/rgb"
)

// DefaultModelFile is the default feature model, in the assets' models/
// folder: the 512-d SqueezeNet-1.1 trunk with global average pooling, the
// stand-in for the paper's ImageNet ResNet-18 (see the assets manifest).
const DefaultModelFile = "features512_squeezenet1_1.onnx"

// DefaultModelPath returns the path of [DefaultModelFile] in the assets
// folder (see data.AssetsDir).
func DefaultModelPath() (string, error) {
	dir, err := data.AssetsDir()
	if err != nil {
		return "", fmt.Errorf("features: default model: %w", err)
	}
	return filepath.Join(dir, "models", DefaultModelFile), nil
}

// ModelOptions configures a [Model] extractor. The zero value suits the
// default feature model.
type ModelOptions struct {
	// Norm normalises the resized image; nil means ImageNet's mean and
	// standard deviation (preprocess.ImageNet), which the default model
	// expects. Its Scale sets the pixel scale (preprocess.Scale).
	Norm *preprocess.Norm
	// Layout, when set, is the model input's layout, checked against its
	// shape; nil means the layout the shape implies
	// (preprocess.DetectInput: NCHW unless it is unambiguously NHWC).
	Layout *preprocess.Layout
	// BGR feeds the channels in the order B, G, R.
	BGR bool
	// BatchSize is the largest number of images per forward pass; 0 means 16.
	BatchSize int
	// Output names the model's tensor the features are read from: any
	// float tensor its graph computes, intermediate activations included
	// (nn.Model.Tensors lists them; LoadModel passes the name to
	// nn.LoadOptions). Empty means the model's single graph output.
	Output string
	// Load says how LoadModel loads the model: its device (nn.LoadOptions;
	// the zero value is the CPU). Output, when set, is added to its
	// Outputs.
	Load nn.LoadOptions
}

// Model is an extractor whose features are a tensor of an ONNX model
// (run by package nn): each image is resized to the model's input size
// with Pillow's bilinear filter (as torchvision's Resize does on a square
// input), normalised, and the model's output — its single graph output,
// or the tensor ModelOptions.Output names — gives the features: D per
// image from an [N, D] (or [N, D, 1, 1]) tensor, C per image from an
// [N, C, H, W] feature map, averaged over its H × W positions (global
// average pooling, what the default model ends with: the 512-channel map
// of SqueezeNet's last Fire module pooled this way gives the default
// model's features).
//
// For the default model and CIFAR-10 images this is the original tool's
// pipeline (Resize(224) + ToTensor + Normalize). The original fed
// non-square images (COCO) to the network with their aspect ratio kept
// (shorter side 224) and relied on adaptive pooling; the ONNX models here
// have a fixed input size, so non-square images are resized to it, which
// distorts them.
//
// The original tool also added an unseeded random bias (PyTorch's default
// init of an identity fc layer, uniform in ±1/√512) to every feature; Model
// does not: its features are deterministic.
//
// A Model is not safe for concurrent use; give each goroutine its own
// [Model.Clone].
type Model struct {
	m     *nn.Model
	pre   preprocess.Classifier
	dim   int
	pool  int // positions averaged per feature (H × W of a feature map; 1 otherwise)
	batch int
	buf   []float32
}

// LoadModel loads the ONNX feature model at path on the device
// opt.Load names (see [NewModel]).
func LoadModel(path string, opt ModelOptions) (*Model, error) {
	lo := opt.Load
	if opt.Output != "" {
		lo.Outputs = []string{opt.Output}
	}
	m, err := nn.LoadWith(path, lo)
	if err != nil {
		return nil, err // "invalid model FILE: reason" (an *nn.ModelError)
	}
	return NewModel(m, opt)
}

// NewModel returns an extractor running m, which must have one input of
// shape [N, C, H, W] or [N, H, W, C] (C = 3, or 1 for a grey model that
// gets the luma; N dynamic or 1; the layout as opt.Layout says or the
// shape implies) with fixed H and W and one output of
// shape [N, D], [N, D, 1, 1] or [N, C, H, W] with fixed sizes (see Model;
// load m with nn.LoadOptions.Outputs to use an intermediate tensor, or use
// LoadModel with ModelOptions.Output). Other shapes are an error naming
// the model and the shape.
func NewModel(m *nn.Model, opt ModelOptions) (*Model, error) {
	ins, outs := m.Inputs(), m.Outputs()
	if len(ins) != 1 {
		return nil, fmt.Errorf("features: model %s has %d inputs, want 1 image input [N, C, H, W]", m.Name(), len(ins))
	}
	s := ins[0].Shape
	var layout preprocess.Layout
	if opt.Layout != nil {
		layout = *opt.Layout
	}
	in, err := preprocess.ResolveInput(s, layout, opt.Layout == nil)
	if err != nil {
		return nil, fmt.Errorf("features: model %s input %q: %w", m.Name(), ins[0].Name, err)
	}
	if in.Height <= 0 || in.Width <= 0 {
		return nil, fmt.Errorf("features: model %s input %q has shape %v, want [N, C, H, W] with C = 3 (RGB) or 1 (grey) and a fixed H and W", m.Name(), ins[0].Name, s)
	}
	if len(outs) != 1 {
		return nil, fmt.Errorf("features: model %s has %d outputs, want 1 feature output [N, D]", m.Name(), len(outs))
	}
	o := outs[0].Shape
	ok := len(o) >= 2 && o[1] > 0
	pool := 1
	if len(o) == 4 && o[2] > 0 && o[3] > 0 {
		pool = o[2] * o[3]
	} else {
		for _, d := range o[min(len(o), 2):] {
			ok = ok && d == 1
		}
	}
	if !ok {
		return nil, fmt.Errorf("features: model %s output %q has shape %v, want [N, D] (or [N, D, 1, 1]) or a feature map [N, C, H, W] with fixed sizes", m.Name(), outs[0].Name, o)
	}
	norm := preprocess.ImageNet()
	if opt.Norm != nil {
		norm = *opt.Norm
	}
	if err := norm.Validate(); err != nil {
		return nil, fmt.Errorf("features: %w", err)
	}
	batch := opt.BatchSize
	if batch == 0 {
		batch = 16
	}
	if batch < 0 {
		return nil, fmt.Errorf("features: batch size %d must be positive", opt.BatchSize)
	}
	if s[0] > 1 {
		// nn runs a model with a fixed batch of 1 image by image, but other
		// fixed batch sizes must be matched exactly.
		return nil, fmt.Errorf("features: model %s input %q has a fixed batch size %d; want a dynamic one or 1", m.Name(), ins[0].Name, s[0])
	}
	pre := preprocess.Classifier{W: in.Width, H: in.Height, Norm: norm, Gray: in.Channels == 1, Layout: in.Layout, BGR: opt.BGR && in.Channels == 3}
	return &Model{m: m, pre: pre, dim: o[1], pool: pool, batch: batch}, nil
}

// Clone returns an extractor sharing x's weights, for another goroutine.
func (x *Model) Clone() *Model {
	return &Model{m: x.m.Clone(), pre: x.pre, dim: x.dim, pool: x.pool, batch: x.batch}
}

// Device says where the model runs (nn.Model.Device).
func (x *Model) Device() string { return x.m.Device() }

// Dim returns the model's number of output features.
func (x *Model) Dim() int { return x.dim }

// Extract runs the model on the images, at most BatchSize at a time.
func (x *Model) Extract(imgs []rgb.Image) ([][]float32, error) {
	out := make([][]float32, 0, len(imgs))
	per := x.pre.Len()
	for start := 0; start < len(imgs); start += x.batch {
		chunk := imgs[start:min(start+x.batch, len(imgs))]
		n := len(chunk)
		if cap(x.buf) < n*per {
			x.buf = make([]float32, n*per)
		}
		buf := x.buf[:n*per]
		for i, m := range chunk {
			if err := m.Validate(); err != nil {
				return nil, fmt.Errorf("features: image %d: %w", start+i, err)
			}
			if err := x.pre.Into(buf[i*per:(i+1)*per], m); err != nil {
				return nil, fmt.Errorf("features: image %d: %w", start+i, err)
			}
		}
		in := tensor.New(tensor.WithShape(x.pre.Shape(n)...), tensor.WithBacking(buf))
		res, err := x.m.Run(in)
		if err != nil {
			return nil, fmt.Errorf("features: %w", err)
		}
		vals, ok := res[0].Data().([]float32)
		if !ok || len(vals) != n*x.dim*x.pool {
			return nil, fmt.Errorf("features: model %s returned %v values of shape %v for %d images, want %d×%d×%d float32",
				x.m.Name(), res[0].Dtype(), res[0].Shape(), n, n, x.dim, x.pool)
		}
		for i := range n {
			if x.pool == 1 {
				out = append(out, append([]float32(nil), vals[i*x.dim:(i+1)*x.dim]...))
				continue
			}
			row := make([]float32, x.dim)
			for c := range row {
				// Summed in float32 in order, then divided, as
				// package nn's GlobalAveragePool does.
				var sum float32
				for _, v := range vals[(i*x.dim+c)*x.pool : (i*x.dim+c+1)*x.pool] {
					sum += v
				}
				row[c] = sum / float32(x.pool)
			}
			out = append(out, row)
		}
	}
	return out, nil
}
