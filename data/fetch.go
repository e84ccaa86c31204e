package data

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/amt-dev/amt/internal/atomicfile"
)

// The official CIFAR-10 binary archive and its published md5.
const (
	CIFAR10URL     = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
	CIFAR10MD5     = "c32a1d4ab5d03f1284b67883e8d87530"
	cifar10Archive = "cifar-10-binary.tar.gz"
)

// FetchOptions configures [FetchCIFAR10]. The zero value fetches the
// official archive quietly with http.DefaultClient.
type FetchOptions struct {
	// URL of the archive; empty means CIFAR10URL (set it for a mirror).
	URL string
	// MD5 is the archive's expected md5 in hex; empty means CIFAR10MD5.
	MD5 string
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
	// Progress, when not nil, is called as the archive arrives with the
	// bytes received (those of an earlier, resumed attempt included) and
	// the archive's size, or -1 when the server does not say; at most every
	// progressEvery, and once at the end.
	Progress func(done, total int64)
}

// maxExtract bounds the size of an extracted file (test_batch.bin is
// 30,730,000 bytes) so that a hostile archive cannot fill the disk.
const maxExtract = 1 << 30

// FetchCIFAR10 downloads the CIFAR-10 binary archive into dir (created if
// needed) and extracts its test_batch.bin and batches.meta.txt there. It
// returns the path of test_batch.bin.
//
// The download is resumable: bytes go to dir/cifar-10-binary.tar.gz.part,
// and a later call after an interruption asks the server for the rest
// with an HTTP Range request (starting over when the server ignores it).
// The complete download is checked against the md5 before it is renamed
// to cifar-10-binary.tar.gz (a mismatch deletes it and is an error), and
// an archive already there is checked and reused instead of downloaded.
// Extracted files are written to temporary files and renamed, so dir
// never holds a partial test_batch.bin. Cancelling ctx stops the download
// and keeps what was received for the next call.
func FetchCIFAR10(ctx context.Context, dir string, opt FetchOptions) (string, error) {
	if opt.URL == "" {
		opt.URL = CIFAR10URL
	}
	if opt.MD5 == "" {
		opt.MD5 = CIFAR10MD5
	}
	opt.MD5 = strings.ToLower(opt.MD5)
	if b, err := hex.DecodeString(opt.MD5); err != nil || len(b) != md5.Size {
		return "", fmt.Errorf("fetch: md5 %q is not 32 hex digits", opt.MD5)
	}
	if opt.Client == nil {
		opt.Client = http.DefaultClient
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("fetch: %w", err)
	}
	archive := filepath.Join(dir, cifar10Archive)
	if _, err := os.Stat(archive); err == nil {
		sum, err := fileMD5(archive)
		if err != nil {
			return "", fmt.Errorf("fetch: %w", err)
		}
		if sum != opt.MD5 {
			return "", fmt.Errorf("fetch: %s exists but its md5 is %s, want %s: delete it and fetch again", archive, sum, opt.MD5)
		}
	} else {
		if err := download(ctx, opt, archive); err != nil {
			return "", err
		}
	}
	return extractCIFAR10(archive, dir)
}

// download fetches opt.URL into archive via archive+".part", resuming a
// partial file, and renames it once its md5 matches.
//
// This is deliberately not internal/atomicfile: the partial download must
// survive an interruption under a name a later call can find, to resume it
// with a Range request, whereas an atomicfile temporary is private to one
// write and removed on failure. The end is the same: the file is synced
// and renamed into place only when complete and checked. A failure before
// any byte arrived leaves no (empty) partial file.
func download(ctx context.Context, opt FetchOptions, archive string) error {
	err := downloadPart(ctx, opt, archive)
	if err != nil {
		if st, e := os.Stat(archive + ".part"); e == nil && st.Size() == 0 {
			os.Remove(archive + ".part")
		}
	}
	return err
}

func downloadPart(ctx context.Context, opt FetchOptions, archive string) error {
	part := archive + ".part"
	f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	defer f.Close()
	have, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, opt.URL, nil)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := opt.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		return fmt.Errorf("fetch: cannot download %s (no network?): %w; put %s, downloaded elsewhere, in %s and fetch again (it is checked and extracted), or give a mirror with -url",
			opt.URL, err, filepath.Base(archive), filepath.Dir(archive))
	}
	defer resp.Body.Close()
	total := int64(-1)
	switch resp.StatusCode {
	case http.StatusPartialContent:
		start, size, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err != nil || start != have {
			return fmt.Errorf("fetch: %s: asked for bytes from %d, got Content-Range %q", opt.URL, have, resp.Header.Get("Content-Range"))
		}
		total = size
	case http.StatusOK:
		// The server sent the whole file (no Range support, or a fresh start).
		if err := f.Truncate(0); err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		have = 0
		total = resp.ContentLength
	case http.StatusRequestedRangeNotSatisfiable:
		// The partial file is probably complete already: check it below.
		total = have
	default:
		return fmt.Errorf("fetch: %s: HTTP %s", opt.URL, resp.Status)
	}
	if resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		p := &progress{report: opt.Progress, done: have, total: total}
		p.send()
		n, err := io.Copy(f, io.TeeReader(resp.Body, p))
		p.send()
		if err != nil {
			return fmt.Errorf("fetch: download of %s interrupted after %d bytes (kept in %s; fetch again to resume): %w", opt.URL, have+n, part, err)
		}
		if total >= 0 && have+n != total {
			return fmt.Errorf("fetch: download of %s stopped at %d of %d bytes (kept in %s; fetch again to resume)", opt.URL, have+n, total, part)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	sum, err := fileMD5(part)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	if sum != opt.MD5 {
		os.Remove(part)
		return fmt.Errorf("fetch: %s: md5 of the download is %s, want %s (the download was deleted; fetch again, or check the URL)", opt.URL, sum, opt.MD5)
	}
	if err := os.Rename(part, archive); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	return nil
}

// parseContentRange parses "bytes START-END/SIZE" (SIZE may be "*", giving -1).
func parseContentRange(s string) (start, size int64, err error) {
	rest, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, 0, fmt.Errorf("bad Content-Range %q", s)
	}
	rng, sz, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, fmt.Errorf("bad Content-Range %q", s)
	}
	a, _, ok := strings.Cut(rng, "-")
	if !ok {
		return 0, 0, fmt.Errorf("bad Content-Range %q", s)
	}
	if start, err = strconv.ParseInt(a, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("bad Content-Range %q", s)
	}
	size = -1
	if sz != "*" {
		if size, err = strconv.ParseInt(sz, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("bad Content-Range %q", s)
		}
	}
	return start, size, nil
}

// extractCIFAR10 writes the archive's test_batch.bin and batches.meta.txt
// into dir, atomically, and returns the path of test_batch.bin.
func extractCIFAR10(archive, dir string) (string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return "", fmt.Errorf("fetch: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("fetch: %s: %w", archive, err)
	}
	tr := tar.NewReader(zr)
	want := map[string]bool{"test_batch.bin": true, "batches.meta.txt": true}
	got := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("fetch: %s: %w", archive, err)
		}
		base := path.Base(hdr.Name)
		if hdr.Typeflag != tar.TypeReg || !want[base] || got[base] {
			continue
		}
		if hdr.Size > maxExtract {
			return "", fmt.Errorf("fetch: %s: %s is %d bytes, more than the %d allowed", archive, hdr.Name, hdr.Size, maxExtract)
		}
		if base == "test_batch.bin" && (hdr.Size == 0 || hdr.Size%CIFARRecordSize != 0) {
			return "", fmt.Errorf("fetch: %s: %s is %d bytes, not a whole number of %d-byte records", archive, hdr.Name, hdr.Size, CIFARRecordSize)
		}
		if err := writeAtomic(filepath.Join(dir, base), io.LimitReader(tr, hdr.Size), hdr.Size); err != nil {
			return "", fmt.Errorf("fetch: %s: %s: %w", archive, hdr.Name, err)
		}
		got[base] = true
	}
	if !got["test_batch.bin"] {
		return "", fmt.Errorf("fetch: %s holds no test_batch.bin (not the CIFAR-10 binary archive?)", archive)
	}
	return filepath.Join(dir, "test_batch.bin"), nil
}

// writeAtomic writes size bytes from r to dst atomically
// (internal/atomicfile: a temporary file in the same folder, synced, then
// renamed); a short read leaves dst untouched.
func writeAtomic(dst string, r io.Reader, size int64) error {
	f, err := atomicfile.Create(dst, 0o644)
	if err != nil {
		return err
	}
	defer f.Cleanup()
	n, err := io.Copy(f, r)
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("got %d of %d bytes", n, size)
	}
	return f.Commit()
}

func fileMD5(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// progressEvery spaces the download's progress reports.
const progressEvery = 200 * time.Millisecond

// progress counts the bytes written through it and reports them to report
// when the download starts, at most every progressEvery as it goes, and at
// its end.
type progress struct {
	report      func(done, total int64)
	done, total int64
	last        time.Time
}

func (p *progress) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if time.Since(p.last) >= progressEvery {
		p.send()
	}
	return len(b), nil
}

// send reports the count now.
func (p *progress) send() {
	if p.report != nil {
		p.last = time.Now()
		p.report(p.done, p.total)
	}
}
