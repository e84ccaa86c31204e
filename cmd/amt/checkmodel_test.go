package main

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/sharedpath"
)

// pngFolder writes the first n shared CIFAR-10 test images as PNG files
// into a new folder and returns it.
func pngFolder(t *testing.T, n int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sharedpath.ForTest(t, "assets/cifar10"), "test_batch_first1017.bin"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := range n {
		r := b[i*3073+1 : (i+1)*3073]
		img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
		for p := range 1024 {
			img.SetNRGBA(p%32, p/32, color.NRGBA{r[p], r[1024+p], r[2048+p], 255})
		}
		var buf strings.Builder
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "img"+string(rune('a'+i/26))+string(rune('a'+i%26))+".png"), []byte(buf.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// timeFree removes what measured times and the results folder's name
// change between two runs of one configuration: timing.json is left out
// by the caller, junit.xml's time attributes and summary.md's time line
// go, and the folder's name becomes OUT.
func timeFree(b []byte, dir string) string {
	s := strings.ReplaceAll(string(b), dir, "OUT")
	s = regexp.MustCompile(` time="[0-9.]+"`).ReplaceAllString(s, "")
	return regexp.MustCompile(`(?m)^- Time: .*\n`).ReplaceAllString(s, "")
}

// TestCheckModel runs amt check without a configuration: the model's
// convention from its input shape, hts on the hierarchical scenario, the
// complete configuration written to OUT/config.yaml; a second check from
// that file, into another folder, reproduces every result file byte for
// byte (times and the folder's name aside). Conditions given as flags go
// into the file; bad flag combinations are errors (exit status 2).
func TestCheckModel(t *testing.T) {
	t.Setenv("AMT_ASSETS", sharedpath.ForTest(t, "assets"))
	images := pngFolder(t, 20)
	resnet := filepath.Join(sharedpath.ForTest(t, "assets/models"), "cifar10_resnet20.onnx")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	p := runAmt(t, "check", "-model", resnet, "-images", images, "-budget", "20", "-out", a)
	if p.code != exitPass {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", p.code, p.stderr)
	}
	cfg := filepath.Join(a, "config.yaml")
	doc, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n  layout: nchw ", "\n  input_size: 32 ", "kind: [model, sut]", "\n  - hts\n", "action_set: hierarchical", "timing: false", "  budget: 20\n", "output: " + a + "\n"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("config.yaml lacks %q:\n%s", want, doc)
		}
	}
	if strings.Contains(p.stderr, "warning") {
		t.Errorf("a warning on a correctly configured model:\n%s", p.stderr)
	}
	p = runAmt(t, "check", "-config", cfg, "-out", b)
	if p.code != exitPass {
		t.Fatalf("rerun: exit status %d, want 0; stderr:\n%s", p.code, p.stderr)
	}
	n := 0
	filepath.WalkDir(a, func(path string, d os.DirEntry, err error) error {
		// timing.json holds measured times and a state's .lock file the pid
		// of the process that held it: neither is a result.
		if err != nil || d.IsDir() || d.Name() == "timing.json" || strings.HasSuffix(d.Name(), ".lock") {
			return err
		}
		rel, _ := filepath.Rel(a, path)
		x, _ := os.ReadFile(path)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			t.Errorf("rerun lacks %s", rel)
			return nil
		}
		if rel == "config.yaml" { // the same file, byte for byte
			if string(x) != string(y) {
				t.Errorf("the rerun's config.yaml differs")
			}
		} else if timeFree(x, a) != timeFree(y, b) {
			t.Errorf("%s differs between the run and its rerun from config.yaml", rel)
		}
		n++
		return nil
	})
	if n < 8 {
		t.Errorf("compared %d files", n)
	}

	// A condition as a flag fails the check and is written into the file.
	c := filepath.Join(dir, "c")
	p = runAmt(t, "check", "-model", resnet, "-images", images, "-budget", "20", "-out", c, "-fail-rate", "0")
	if p.code != exitFail {
		t.Fatalf("-fail-rate 0: exit status %d, want 1; stderr:\n%s", p.code, p.stderr)
	}
	if doc, _ := os.ReadFile(filepath.Join(c, "config.yaml")); !strings.Contains(string(doc), "  fail_on:\n    violation_rate: 0\n") {
		t.Errorf("config.yaml lacks the condition:\n%s", doc)
	}

	// An NHWC model: its layout is read from its shape.
	nhwc, _ := filepath.Abs(filepath.Join("..", "..", "sut", "testdata", "conventions", "nhwc.onnx"))
	p = runAmt(t, "check", "-model", nhwc, "-images", images, "-budget", "5", "-out", filepath.Join(dir, "d"))
	if doc, _ := os.ReadFile(filepath.Join(dir, "d", "config.yaml")); p.code != exitPass || !strings.Contains(string(doc), "\n  layout: nhwc ") {
		t.Errorf("nhwc model: exit status %d; stderr %s; config.yaml:\n%s", p.code, p.stderr, doc)
	}
	// A 0-255 BGR model run with the defaults: the one-line warning.
	bgr, _ := filepath.Abs(filepath.Join("..", "..", "sut", "testdata", "conventions", "bgr_pixel.onnx"))
	p = runAmt(t, "check", "-model", bgr, "-images", images, "-budget", "5", "-out", filepath.Join(dir, "e"))
	if p.code != exitPass || strings.Count(p.stderr, "warning: ") != 1 || !strings.Contains(p.stderr, "20 of the first 20 images are predicted as class 3") ||
		!strings.Contains(p.stderr, "sut.scale: pixel") {
		t.Errorf("bgr pixel model as rgb unit: exit status %d, stderr:\n%s", p.code, p.stderr)
	}

	for _, e := range []struct {
		name string
		args []string
		want string
	}{
		{"model and config", []string{"-config", cfg, "-model", resnet, "-images", images}, "want -config FILE, or -model M.onnx -images DIR"},
		{"no images", []string{"-model", resnet, "-out", filepath.Join(dir, "f")}, "without -config, want -model M.onnx and -images DIR"},
		{"not a classifier", []string{"-model", filepath.Join(sharedpath.ForTest(t, "assets/models"), "coco_yolov3-tiny.onnx"), "-images", images, "-out", filepath.Join(dir, "g")}, "want the logits [N, classes] of an image classifier"},
	} {
		p := runAmt(t, append([]string{"check"}, e.args...)...)
		if p.code != exitError || !strings.Contains(p.stderr, e.want) {
			t.Errorf("%s: exit status %d, want 2; stderr %q, want %q", e.name, p.code, p.stderr, e.want)
		}
	}
}

// examples/ci/amt-check.sh MODEL.onnx IMAGES_DIR CACHE_DIR runs amt check
// without a configuration; a second run continues the agent state and
// compares with the first, as with a configuration.
func TestCIExampleModel(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	t.Setenv("AMT_ASSETS", sharedpath.ForTest(t, "assets"))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "examples", "ci", "amt-check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	images := pngFolder(t, 10)
	cache := filepath.Join(t.TempDir(), "ci")
	model := filepath.Join(sharedpath.ForTest(t, "assets/models"), "cifar10_resnet20.onnx")
	for i := range 2 {
		cmd := exec.Command("sh", script, model, images, cache, "-budget", "5")
		cmd.Env = append(os.Environ(), "AMT="+exe, runMainEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, out)
		}
		c, err := record.ReadCheck(filepath.Join(cache, "previous", record.CheckFile))
		if err != nil {
			t.Fatal(err)
		}
		if c.State.Loaded != (i == 1) || (c.Baseline != nil) != (i == 1) {
			t.Errorf("run %d: state %+v, baseline %+v", i+1, c.State, c.Baseline)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "current", "config.yaml")); err != nil {
		t.Error(err)
	}
}
