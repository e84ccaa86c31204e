package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	_ "image/jpeg" // input format
	"image/png"
	"os"
	"strconv"
	"strings"

	"github.com/amt-dev/amt/internal/atomicfile"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/rgb"
)

// maxTransformPixels bounds the input image size (width × height) the
// transform command accepts, so a corrupt header cannot exhaust memory.
const maxTransformPixels = 1 << 26

// cmdTransform applies a metamorphic relation (or a composition) to an
// image file and writes the follow-up image as PNG.
func cmdTransform(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "transform", "-mr NAME[:VALUE][,NAME[:VALUE]...] [-param VALUE] IN.png|IN.jpg OUT.png")
	spec := fs.String("mr", "", `relation(s) to apply, e.g. "blur", "rotation:30", "rotation:30,invert" (applied in order); see "amt mrs"`)
	param := fs.String("param", "", "parameter of a single parametric relation given without one (-mr rotation -param 30)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return fmt.Errorf("transform: want 2 arguments IN OUT, got %d", fs.NArg())
	}
	in, out := fs.Arg(0), fs.Arg(1)
	rel, err := transformRelation(*spec, *param, flagGiven(fs, "param"))
	if err != nil {
		return fmt.Errorf("transform: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	src, err := readTransformInput(in)
	if err != nil {
		return fmt.Errorf("transform: %w", err)
	}
	dst := rel.Apply(src)
	if err := writeTransformPNG(out, dst); err != nil {
		return fmt.Errorf("transform: %w", err)
	}
	_, err = fmt.Fprintf(env.stdout, "%s: %s (%dx%d) -> %s\n", rel.Name(), in, src.W, src.H, out)
	return err
}

// flagGiven reports whether the flag name was given on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// transformRelation builds the relation from -mr and -param.
func transformRelation(spec, param string, paramSet bool) (mr.Relation, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, errors.New("-mr is required (e.g. -mr rotation:30; \"amt mrs\" lists the relations)")
	}
	if !paramSet {
		return mr.Parse(spec)
	}
	name := strings.ToLower(strings.TrimSpace(spec))
	if strings.ContainsAny(name, ",:") {
		return nil, fmt.Errorf("-param cannot be combined with -mr %q: write the angle into -mr (e.g. rotation:30,invert)", spec)
	}
	in, ok := mr.Lookup(name)
	if !ok {
		return mr.Parse(name) // reports the unknown name
	}
	if !in.Parametric() {
		return nil, fmt.Errorf("-param %q given, but relation %q takes no parameter", param, name)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(param), 64)
	if err != nil {
		return nil, fmt.Errorf("-param %q is not a number (relation %q takes its %s)", param, name, in.Param.Describe())
	}
	return mr.New(name, v)
}

// readTransformInput decodes a PNG or JPEG file into an RGB image.
func readTransformInput(path string) (rgb.Image, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return rgb.Image{}, err
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return rgb.Image{}, fmt.Errorf("%s: not a readable PNG or JPEG image: %w", path, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxTransformPixels {
		return rgb.Image{}, fmt.Errorf("%s: %s image of %dx%d pixels: want between 1 and %d pixels", path, format, cfg.Width, cfg.Height, maxTransformPixels)
	}
	im, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return rgb.Image{}, fmt.Errorf("%s: decoding %s: %w", path, format, err)
	}
	return rgb.FromImage(im), nil
}

// writeTransformPNG writes img to path as PNG atomically (internal/atomicfile).
func writeTransformPNG(path string, img rgb.Image) error {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return err
	}
	defer f.Cleanup()
	if err := png.Encode(f, img); err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return f.Commit()
}
