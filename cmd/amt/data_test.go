package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/rgb"
)

func runData(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := dispatch(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, append([]string{"data"}, args...))
	return out.String(), errb.String(), err
}

func cifarFile(t *testing.T, labels ...int) string {
	t.Helper()
	var raw []byte
	for _, l := range labels {
		var err error
		if raw, err = data.AppendCIFAR10Record(raw, rgb.New(32, 32), l); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), "t.bin")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDataInspect(t *testing.T) {
	p := cifarFile(t, 3, 3, 9)
	out, _, err := runData(t, "inspect", "-check", p)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, want := range []string{"format: cifar10", "records: 3 (32×32 RGB)", "classes: 10", "label name records", "3 cat 2", "9 truck 1", "0 airplane 0", "check: all 3 images decode"} {
		if !lines[want] {
			t.Errorf("output lacks the line %q:\n%s", want, out)
		}
	}
	// Errors: truncated file, missing file, bad arguments.
	raw, _ := os.ReadFile(p)
	os.WriteFile(p, raw[:len(raw)-10], 0o644)
	if _, _, err := runData(t, "inspect", p); err == nil || !strings.Contains(err.Error(), "holds 2 whole records") {
		t.Errorf("truncated: error %v", err)
	}
	if _, _, err := runData(t, "inspect", filepath.Join(t.TempDir(), "none.bin")); err == nil || !strings.Contains(err.Error(), "none.bin") {
		t.Errorf("missing: error %v", err)
	}
	if _, _, err := runData(t, "inspect"); err == nil || !strings.Contains(err.Error(), "want one FILE or DIR") {
		t.Errorf("no argument: error %v", err)
	}
	if _, _, err := runData(t, "frobnicate"); err == nil || !strings.Contains(err.Error(), `unknown subcommand "frobnicate" (want`) {
		t.Errorf("bad subcommand: error %v", err)
	}
	if _, _, err := runData(t, "inpsect"); err == nil || !strings.Contains(err.Error(), `unknown subcommand "inpsect"; did you mean "inspect"?`) {
		t.Errorf("misspelt subcommand: error %v", err)
	}
	if _, stderr, err := runData(t); err != errUsage || !strings.Contains(stderr, "amt data inspect") {
		t.Errorf("no subcommand: error %v, stderr %q", err, stderr)
	}
	if _, _, err := runData(t, "inspect", "-h"); err != nil {
		t.Errorf("-h: error %v", err)
	}
}

func TestDataInspectShared(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	out, _, err := runData(t, "inspect", filepath.Join(assets, "coco_val2017_subset158", "instances_val2017_subset158.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"format:", "coco", "images:", "158 (0 without annotations)", "annotations:", "1424 (16 crowd)", "categories:", "80", "toothbrush"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runData(t, "inspect", "-format", "folder", filepath.Join(assets, "coco_val2017_subset158", "val2017"))
	if err != nil || !strings.Contains(out, "158 (unlabelled)") {
		t.Errorf("folder: %v\n%s", err, out)
	}
}

func TestDataFetch(t *testing.T) {
	// The archive: a tar.gz with a 2-record test_batch.bin, served locally.
	archive := testCIFARArchive(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "a.tar.gz", time.Time{}, bytes.NewReader(archive.data))
	}))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "c")
	out, stderr, err := runData(t, "fetch", "cifar10", "-dir", dir, "-url", srv.URL, "-md5", archive.md5)
	if err != nil {
		t.Fatal(err)
	}
	// Not on a terminal, the progress display writes plain lines: the
	// stage, then the end.
	if !strings.Contains(out, filepath.Join(dir, "test_batch.bin")) ||
		!strings.HasPrefix(stderr, "download cifar-10: ") || !strings.Contains(stderr, " (100.0%) in ") || strings.Contains(stderr, "\r") {
		t.Errorf("stdout %q, stderr %q (want the download's plain progress lines)", out, stderr)
	}
	if _, _, err := runData(t, "fetch", "-dir", dir, "cifar100"); err == nil || !strings.Contains(err.Error(), "cifar10") {
		t.Errorf("cifar100: error %v", err)
	}
	if _, _, err := runData(t, "fetch", "-dir", t.TempDir(), "-url", srv.URL, "-md5", strings.Repeat("a", 32), "cifar10"); err == nil || !strings.Contains(err.Error(), "md5") {
		t.Errorf("wrong md5: error %v", err)
	}
}

type testArchive struct {
	data []byte
	md5  string
}

// testCIFARArchive builds a tar.gz holding a 2-record test_batch.bin.
func testCIFARArchive(t *testing.T) testArchive {
	t.Helper()
	var batch []byte
	for l := range 2 {
		batch, _ = data.AppendCIFAR10Record(batch, rgb.New(32, 32), l)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "cifar-10-batches-bin/test_batch.bin", Mode: 0o644, Size: int64(len(batch)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(batch)
	tw.Close()
	zw.Close()
	sum := md5.Sum(buf.Bytes())
	return testArchive{buf.Bytes(), hex.EncodeToString(sum[:])}
}
