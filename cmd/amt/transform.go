package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/internal/atomicfile"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/rgb"
)

// jpegQuality is the quality of JPEG output: high, so that a follow-up
// written as JPEG stays close to the pixels the relation produced (JPEG is
// lossy; PNG output is exact).
const jpegQuality = 95

// cmdTransform applies a metamorphic relation (or a composition) to an
// image file and writes the follow-up image as PNG or JPEG, by the output's
// extension.
func cmdTransform(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "transform", "-mr NAME[:VALUE][,NAME[:VALUE]...] [-param VALUE] [-seed N] [-max-pixels N] IN.png|IN.jpg OUT.png|OUT.jpg")
	spec := fs.String("mr", "", `relation(s) to apply, e.g. "blur", "rotation:30", "rotation:30,invert" (applied in order); see "amt mrs"`)
	param := fs.String("param", "", "parameter of a single parametric relation given without one (-mr rotation -param 30)")
	seed := fs.Uint64("seed", 0, "seed of a random relation's draws (the noise corruptions, glass_blur, fog, …): mr.Rand(seed, image, relation); 0, the default, is what sweeps and runs use")
	maxPixels := fs.Int64("max-pixels", data.DefaultMaxPixels, "the image budget: refuse an input of more pixels (width × height, read from its header before decoding)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return showUsagef(fs, "transform: want 2 arguments IN OUT, got %d", fs.NArg())
	}
	in, out := fs.Arg(0), fs.Arg(1)
	rel, err := transformRelation(*spec, *param, flagGiven(fs, "param"))
	if err != nil {
		return fmt.Errorf("transform: %w", err)
	}
	if *maxPixels < 1 {
		return fmt.Errorf("transform: -max-pixels %d: want at least 1", *maxPixels)
	}
	encode, err := outputEncoder(out)
	if err != nil {
		return fmt.Errorf("transform: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	src, err := readTransformInput(in, data.Decoder{MaxPixels: *maxPixels})
	if err != nil {
		return fmt.Errorf("transform: %w", err)
	}
	dst := mr.ApplySeed(rel, src, *seed)
	if err := writeTransformOutput(out, dst, encode); err != nil {
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

// readTransformInput decodes a PNG or JPEG file into an RGB image with
// the data sets' decoder (so the pixels are those a sweep would see), within
// dec's pixel budget.
func readTransformInput(path string, dec data.Decoder) (rgb.Image, error) {
	img, err := dec.DecodeFile(path)
	if tl := (*data.TooLargeError)(nil); errors.As(err, &tl) {
		return rgb.Image{}, fmt.Errorf("%w (raise -max-pixels to allow it)", err)
	}
	return img, err
}

// outputEncoder returns the encoder of the output file's format, chosen by
// its extension: .png or .jpg/.jpeg (case-insensitive).
func outputEncoder(path string) (func(io.Writer, image.Image) error, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return png.Encode, nil
	case ".jpg", ".jpeg":
		return func(w io.Writer, m image.Image) error { return jpeg.Encode(w, m, &jpeg.Options{Quality: jpegQuality}) }, nil
	}
	return nil, fmt.Errorf("output %s: want a .png or .jpg/.jpeg file name (the extension chooses the format)", path)
}

// writeTransformOutput writes img to path atomically (internal/atomicfile)
// with encode.
func writeTransformOutput(path string, img rgb.Image, encode func(io.Writer, image.Image) error) error {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return err
	}
	defer f.Cleanup()
	if err := encode(f, img); err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return f.Commit()
}
