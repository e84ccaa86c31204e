package main

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/rgb"
)

// tfRun runs amt with args and returns stdout, stderr and the error.
func tfRun(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := dispatch(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, args)
	return out.String(), errb.String(), err
}

func tfEncodePNG(t testing.TB, im image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, im); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func tfWriteFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func tfReadPNG(t testing.TB, path string) rgb.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rgb.FromImage(im)
}

func TestTransform(t *testing.T) {
	dir := t.TempDir()
	src := goldentest.RandomImage(33, 20, 1)
	in := tfWriteFile(t, dir, "in.png", tfEncodePNG(t, src))
	for _, tc := range []struct {
		args []string
		want string // relation the output must equal
	}{
		{[]string{"-mr", "rotation:30,invert"}, "rotation:30,invert"},
		{[]string{"-mr", "rotation", "-param", "30"}, "rotation:30"},
		{[]string{"-mr", "shear", "-param", "-20"}, "shear:-20"},
		{[]string{"-mr", "blur"}, "blur"},
		{[]string{"-mr", "rot-5"}, "rotation:-5"},
	} {
		out := filepath.Join(dir, "out.png")
		stdout, _, err := tfRun(t, append(append([]string{"transform"}, tc.args...), in, out)...)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if !strings.HasPrefix(stdout, tc.want+": ") {
			t.Errorf("%q: stdout %q, want it to start with %q", tc.args, stdout, tc.want)
		}
		rel, err := mr.Parse(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		if got := tfReadPNG(t, out); !got.Equal(rel.Apply(src)) {
			t.Errorf("%q: output differs from %s", tc.args, tc.want)
		}
	}
	// The output format follows the extension: JPEG for .jpg.
	jout := filepath.Join(dir, "out.JPG")
	if _, _, err := tfRun(t, "transform", "-mr", "blur", in, jout); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(jout); !bytes.HasPrefix(b, []byte("\xff\xd8")) {
		t.Errorf("out.JPG starts with % x, want a JPEG", b[:min(len(b), 8)])
	} else if m, err := jpeg.Decode(bytes.NewReader(b)); err != nil || m.Bounds().Dx() != src.W {
		t.Errorf("out.JPG: %v", err)
	}
	// JPEG input is accepted; the output is PNG of the decoded pixels.
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, src, nil); err != nil {
		t.Fatal(err)
	}
	jin := tfWriteFile(t, dir, "in.jpg", jb.Bytes())
	dec, err := jpeg.Decode(bytes.NewReader(jb.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "j.png")
	if _, _, err := tfRun(t, "transform", "-mr", "fliplr", jin, out); err != nil {
		t.Fatal(err)
	}
	if got := tfReadPNG(t, out); !got.Equal(mr.FlipLR{}.Apply(rgb.FromImage(dec))) {
		t.Error("JPEG input: output differs from fliplr of the decoded image")
	}
}

func TestTransformErrors(t *testing.T) {
	dir := t.TempDir()
	in := tfWriteFile(t, dir, "in.png", tfEncodePNG(t, goldentest.RandomImage(4, 4, 2)))
	bad := tfWriteFile(t, dir, "bad.png", []byte("not an image"))
	bomb := tfWriteFile(t, dir, "bomb.png", goldentest.BombPNG(60000, 60000))
	out := filepath.Join(dir, "out.png")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-mr", "blur"}, "want 2 arguments IN OUT, got 0"},
		{[]string{"-mr", "blur", in}, "want 2 arguments IN OUT, got 1"},
		{[]string{in, out}, "-mr is required"},
		{[]string{"-mr", "sharpen", in, out}, `unknown relation "sharpen"`},
		{[]string{"-mr", "rotation", in, out}, "needs an angle in degrees in [-360, 360]"},
		{[]string{"-mr", "rotation:999", in, out}, "out of range"},
		{[]string{"-mr", "blur", "-param", "3", in, out}, `relation "blur" takes no parameter`},
		{[]string{"-mr", "rotation:30,invert", "-param", "3", in, out}, "-param cannot be combined"},
		{[]string{"-mr", "rotation", "-param", "x", in, out}, `-param "x" is not a number`},
		{[]string{"-mr", "shear", "-param", "89", in, out}, "[-85, 85]"},
		{[]string{"-mr", "blur", filepath.Join(dir, "missing.png"), out}, "missing.png"},
		{[]string{"-mr", "blur", bad, out}, "bad.png: not a PNG or JPEG file"},
		{[]string{"-mr", "blur", in, filepath.Join(dir, "out.gif")}, "want a .png or .jpg/.jpeg file name"},
		{[]string{"-mr", "blur", "-max-pixels", "15", in, out}, "4×4 = 16 pixels, more than the limit of 15 pixels (raise -max-pixels to allow it)"},
		{[]string{"-mr", "blur", "-max-pixels", "0", in, out}, "-max-pixels 0: want at least 1"},
		{[]string{"-mr", "blur", bomb, out}, "60000×60000 = 3600000000 pixels, more than the limit of 33554432 pixels"},
		{[]string{"-mr", "blur", in, filepath.Join(dir, "no", "such", "dir.png")}, "no such file or directory"},
		{[]string{"-nosuchflag", in, out}, "flag provided but not defined"},
	} {
		_, _, err := tfRun(t, append([]string{"transform"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("transform %q: error %v, want %q", tc.args, err, tc.want)
		}
	}
	// Failed runs leave no output and no temporary files behind.
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "in.png" && e.Name() != "bad.png" && e.Name() != "bomb.png" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if _, _, err := tfRun(t, "transform", "-h"); err != nil {
		t.Errorf("transform -h: %v", err)
	}
}

// FuzzTransform: no input (relation spec, parameter, extra arguments or
// image bytes) makes the transform command panic; when it succeeds, the
// output is a PNG of the input's size.
func FuzzTransform(f *testing.F) {
	png4 := tfEncodePNG(f, goldentest.RandomImage(4, 3, 3))
	f.Add("rotation:30,invert", "", "", png4)
	f.Add("rotation", "30", "", png4)
	f.Add("shear", "-45", "", png4)
	f.Add("blur", "", "", png4)
	f.Add("shear:90", "", "", png4)
	f.Add("rot-5,fliplr", "", "-param\n5", png4)
	f.Add(",,", "NaN", "-mr", []byte("\x89PNG\r\n\x1a\n"))
	f.Add("grayscale", "", "", []byte{0xff, 0xd8, 0xff})
	f.Fuzz(func(t *testing.T, spec, param, extra string, img []byte) {
		dir := t.TempDir()
		in := tfWriteFile(t, dir, "in.png", img)
		out := filepath.Join(dir, "out.png")
		args := []string{"transform", "-mr", spec}
		if param != "" {
			args = append(args, "-param", param)
		}
		if extra != "" {
			args = append(args, strings.Split(extra, "\n")...)
		}
		args = append(args, in, out)
		_, _, err := tfRun(t, args...)
		if err != nil {
			return
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(img))
		if err != nil {
			cfg, err = jpeg.DecodeConfig(bytes.NewReader(img))
		}
		if err != nil {
			t.Fatalf("transform accepted an input its decoders reject: %v", err)
		}
		if got := tfReadPNG(t, out); got.W != cfg.Width || got.H != cfg.Height {
			t.Fatalf("output %dx%d, input %dx%d", got.W, got.H, cfg.Width, cfg.Height)
		}
	})
}

// -seed picks the draws of a random relation: the default 0 is Apply's
// follow-up, another seed is mr.ApplySeed's; a deterministic relation
// ignores it.
func TestTransformSeed(t *testing.T) {
	dir := t.TempDir()
	src := goldentest.RandomImage(32, 32, 9)
	in := tfWriteFile(t, dir, "in.png", tfEncodePNG(t, src))
	for _, tc := range []struct {
		spec string
		seed string
	}{{"gaussian_noise:3", ""}, {"gaussian_noise:3", "7"}, {"fog:2,invert", "7"}, {"contrast:2", "7"}} {
		out := filepath.Join(dir, "out.png")
		args := []string{"transform", "-mr", tc.spec}
		var seed uint64
		if tc.seed != "" {
			args = append(args, "-seed", tc.seed)
			seed = 7
		}
		if _, _, err := tfRun(t, append(args, in, out)...); err != nil {
			t.Fatal(err)
		}
		rel, err := mr.Parse(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := tfReadPNG(t, out), mr.ApplySeed(rel, src, seed); !got.Equal(want) {
			t.Errorf("%s -seed %q: output differs from mr.ApplySeed", tc.spec, tc.seed)
		}
	}
}
