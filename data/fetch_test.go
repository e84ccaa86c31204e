package data

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testArchive builds a small cifar-10-binary.tar.gz look-alike holding
// records and returns it with its md5.
func testArchive(t *testing.T, records int) ([]byte, []byte, string) {
	t.Helper()
	var batch []byte
	for i := 0; i < records; i++ {
		var err error
		if batch, err = AppendCIFAR10Record(batch, testImage(32, 32, byte(i)), i%10); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	files := []struct {
		name string
		data []byte
	}{
		{"cifar-10-batches-bin/", nil},
		{"cifar-10-batches-bin/data_batch_1.bin", batch[:CIFARRecordSize]},
		{"cifar-10-batches-bin/batches.meta.txt", []byte(strings.Join(CIFAR10ClassNames(), "\n") + "\n\n")},
		{"cifar-10-batches-bin/test_batch.bin", batch},
		{"cifar-10-batches-bin/readme.html", []byte("<html>")},
	}
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}
		if strings.HasSuffix(f.name, "/") {
			hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(buf.Bytes())
	return buf.Bytes(), batch, hex.EncodeToString(sum[:])
}

// archiveServer serves archive on 127.0.0.1 with Range support. While
// cut is positive, a full (non-range) request is aborted after cut bytes.
type archiveServer struct {
	*httptest.Server
	mu     sync.Mutex
	ranges []string // Range header of each request ("" for none)
	cut    int
}

func newArchiveServer(t *testing.T, archive []byte, cut int) *archiveServer {
	s := &archiveServer{cut: cut}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.ranges = append(s.ranges, r.Header.Get("Range"))
		cut := s.cut
		s.cut = 0
		s.mu.Unlock()
		if cut > 0 {
			w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
			w.WriteHeader(http.StatusOK)
			w.Write(archive[:cut])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // drop the connection mid-body
		}
		http.ServeContent(w, r, "cifar-10-binary.tar.gz", time.Time{}, bytes.NewReader(archive))
	}))
	t.Cleanup(s.Close)
	return s
}

func TestFetchResume(t *testing.T) {
	archive, batch, sum := testArchive(t, 40)
	cut := len(archive) / 2
	srv := newArchiveServer(t, archive, cut)
	dir := filepath.Join(t.TempDir(), "new", "dir")
	opt := FetchOptions{URL: srv.URL + "/cifar-10-binary.tar.gz", MD5: sum, Client: srv.Client()}

	// First attempt: the connection drops half-way.
	_, err := FetchCIFAR10(context.Background(), dir, opt)
	if err == nil || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("interrupted download: error %v, want one that says to resume", err)
	}
	part, err := os.ReadFile(filepath.Join(dir, "cifar-10-binary.tar.gz.part"))
	if err != nil {
		t.Fatal(err)
	}
	if len(part) == 0 || len(part) > cut || !bytes.Equal(part, archive[:len(part)]) {
		t.Fatalf("partial file has %d bytes, want a prefix of at most %d", len(part), cut)
	}
	if _, err := os.Stat(filepath.Join(dir, "test_batch.bin")); !os.IsNotExist(err) {
		t.Fatal("test_batch.bin exists after a failed download")
	}

	// Second attempt resumes with a Range request.
	var reports [][2]int64
	opt.Progress = func(done, total int64) { reports = append(reports, [2]int64{done, total}) }
	got, err := FetchCIFAR10(context.Background(), dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if want := "bytes=" + strconv.Itoa(len(part)) + "-"; srv.ranges[1] != want {
		t.Errorf("second request Range %q, want %q", srv.ranges[1], want)
	}
	if got != filepath.Join(dir, "test_batch.bin") {
		t.Errorf("path %s", got)
	}
	b, err := os.ReadFile(got)
	if err != nil || !bytes.Equal(b, batch) {
		t.Fatalf("extracted test_batch.bin differs (%v)", err)
	}
	// The reports count the resumed bytes too, never go back, and end at
	// the archive's size.
	if len(reports) == 0 {
		t.Fatal("no progress reports")
	}
	for i, r := range reports {
		if r[1] != int64(len(archive)) || r[0] < int64(len(part)) || (i > 0 && r[0] < reports[i-1][0]) {
			t.Fatalf("progress report %d: %d of %d bytes, want ≥ %d (resumed) of %d, not decreasing (%v)", i, r[0], r[1], len(part), len(archive), reports)
		}
	}
	if last := reports[len(reports)-1]; last[0] != int64(len(archive)) {
		t.Errorf("last progress report %d bytes, want %d", last[0], len(archive))
	}
	c, err := OpenCIFAR10(got)
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 40 || c.Classes()[9] != "truck" {
		t.Errorf("fetched data set: %d records, classes %v", c.Len(), c.Classes())
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "batches.meta.txt,cifar-10-binary.tar.gz,test_batch.bin" {
		t.Errorf("folder holds %v (temporary or partial files left?)", names)
	}

	// A third call reuses the verified archive without downloading.
	n := len(srv.ranges)
	if _, err := FetchCIFAR10(context.Background(), dir, opt); err != nil {
		t.Fatal(err)
	}
	if len(srv.ranges) != n {
		t.Error("fetch downloaded again although the archive was there")
	}
}

func TestFetchErrors(t *testing.T) {
	archive, _, sum := testArchive(t, 3)
	srv := newArchiveServer(t, archive, 0)
	url := srv.URL + "/a.tar.gz"

	t.Run("wrong md5", func(t *testing.T) {
		dir := t.TempDir()
		wrong := strings.Repeat("0", 32)
		_, err := FetchCIFAR10(context.Background(), dir, FetchOptions{URL: url, MD5: wrong, Client: srv.Client()})
		if err == nil || !strings.Contains(err.Error(), "md5 of the download is "+sum) || !strings.Contains(err.Error(), "want "+wrong) {
			t.Fatalf("error %v", err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("folder not empty after a bad download: %v", entries)
		}
	})
	t.Run("bad md5 option", func(t *testing.T) {
		_, err := FetchCIFAR10(context.Background(), t.TempDir(), FetchOptions{URL: url, MD5: "abc"})
		if err == nil || !strings.Contains(err.Error(), "32 hex digits") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("HTTP 404", func(t *testing.T) {
		srv404 := httptest.NewServer(http.NotFoundHandler())
		defer srv404.Close()
		_, err := FetchCIFAR10(context.Background(), t.TempDir(), FetchOptions{URL: srv404.URL + "/x", MD5: sum, Client: srv404.Client()})
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("server ignores Range", func(t *testing.T) {
		plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(archive) }))
		defer plain.Close()
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "cifar-10-binary.tar.gz.part"), []byte("stale bytes"), 0o644)
		if _, err := FetchCIFAR10(context.Background(), dir, FetchOptions{URL: plain.URL, MD5: sum, Client: plain.Client()}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("complete part file", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "cifar-10-binary.tar.gz.part"), archive, 0o644)
		if _, err := FetchCIFAR10(context.Background(), dir, FetchOptions{URL: url, MD5: sum, Client: srv.Client()}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("corrupt archive on disk", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "cifar-10-binary.tar.gz"), []byte("junk"), 0o644)
		_, err := FetchCIFAR10(context.Background(), dir, FetchOptions{URL: url, MD5: sum, Client: srv.Client()})
		if err == nil || !strings.Contains(err.Error(), "delete it") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("no test batch", func(t *testing.T) {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		tw.WriteHeader(&tar.Header{Name: "x/readme", Size: 1, Mode: 0o644, Typeflag: tar.TypeReg})
		tw.Write([]byte("x"))
		tw.Close()
		zw.Close()
		h := md5.Sum(buf.Bytes())
		other := newArchiveServer(t, buf.Bytes(), 0)
		_, err := FetchCIFAR10(context.Background(), t.TempDir(), FetchOptions{URL: other.URL, MD5: hex.EncodeToString(h[:]), Client: other.Client()})
		if err == nil || !strings.Contains(err.Error(), "no test_batch.bin") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := FetchCIFAR10(ctx, t.TempDir(), FetchOptions{URL: url, MD5: sum, Client: srv.Client()})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
	})
}

// TestFetchUnreachable: with no network (here a closed port), fetch says
// what to do instead and leaves no empty partial file.
func TestFetchUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/cifar-10-binary.tar.gz"
	l.Close()
	dir := t.TempDir()
	_, err = FetchCIFAR10(context.Background(), dir, FetchOptions{URL: url})
	if err == nil || !strings.Contains(err.Error(), "fetch: cannot download "+url+" (no network?)") ||
		!strings.Contains(err.Error(), "put cifar-10-binary.tar.gz, downloaded elsewhere, in "+dir) {
		t.Fatalf("error %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v", entries)
	}
}
