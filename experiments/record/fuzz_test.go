package record

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// FuzzVerdictCSV: no input makes the verdict table reader panic or accept
// a row it cannot write back; its errors name the file; an accepted table
// written again as CSV reads back to the same rows.
func FuzzVerdictCSV(f *testing.F) {
	var buf bytes.Buffer
	rows := []Verdict{
		{Image: 0, MR: "blur", Param: math.NaN(), PredOriginal: 3, PredTransformed: 5, Violation: true, Label: 3, MapOriginal: math.NaN(), MapTransformed: math.NaN()},
		{Image: 1, MR: "rotation", Param: -30, PredOriginal: 1, PredTransformed: 1, Label: -1, MapOriginal: math.NaN(), MapTransformed: math.NaN()},
	}
	EncodeVerdictsCSV(&buf, rows, false)
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()-7])
	buf.Reset()
	EncodeVerdictsCSV(&buf, []Verdict{{Image: 139, MR: "shear", Param: 20, MapOriginal: 0.5, MapTransformed: 0.25, Violation: true}}, true)
	f.Add(buf.Bytes())
	f.Add([]byte("image,mr,param,violation\n0,blur,None,true\n"))
	f.Add([]byte("image,mr,param,violation\n0,\"blur\n"))
	f.Add([]byte(""))
	f.Add([]byte("image\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		rows, err := DecodeVerdictsCSV(bytes.NewReader(raw), "fuzz.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "record: fuzz.csv") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, r := range rows {
			if r.Image < 0 || r.Image > MaxImage || r.MR == "" || math.IsInf(r.Param, 0) {
				t.Fatalf("accepted row %+v", r)
			}
		}
		var out bytes.Buffer
		if err := EncodeVerdictsCSV(&out, rows, false); err != nil {
			t.Fatalf("writing back: %v", err)
		}
		again, err := DecodeVerdictsCSV(&out, "again.csv")
		if err != nil {
			t.Fatalf("reading back: %v\n%s", err, out.Bytes())
		}
		if len(again) != len(rows) {
			t.Fatalf("%d rows read back, want %d", len(again), len(rows))
		}
		for k, r := range rows {
			a := again[k]
			if a.Image != r.Image || a.MR != r.MR || a.Violation != r.Violation || a.PredOriginal != r.PredOriginal ||
				a.PredTransformed != r.PredTransformed || a.Label != r.Label || a.HasParam() != r.HasParam() || (r.HasParam() && a.Param != r.Param) {
				t.Fatalf("row %d: %+v read back as %+v", k, r, a)
			}
		}
	})
}

// FuzzFeatures: no bytes, row count or dimension make the features reader
// panic or return a matrix of another shape than it says.
func FuzzFeatures(f *testing.F) {
	f.Add(EncodeFeatures([]float32{1, 2, 3, 4, 5, 6}), 2, 0)
	f.Add(EncodeFeatures([]float32{1, 2, 3, 4, 5, 6}), 0, 3)
	f.Add(EncodeFeatures([]float32{float32(math.NaN()), 2}), 1, 2)
	f.Add([]byte{1, 2, 3}, 1, 0)
	f.Add([]byte{}, 0, 0)
	f.Add(EncodeFeatures([]float32{1, 2}), -1, -2)
	f.Fuzz(func(t *testing.T, raw []byte, rows, dim int) {
		out, d, err := DecodeFeatures(raw, "fuzz.f32", rows, dim)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "features: fuzz.f32") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if d <= 0 || len(out)*4 != len(raw) || len(out)%d != 0 || (dim > 0 && d != dim) || (rows > 0 && len(out)/d != rows) {
			t.Fatalf("%d bytes, rows %d, dim %d: got %d values of dimension %d", len(raw), rows, dim, len(out), d)
		}
		if again := EncodeFeatures(out); string(again) != string(raw) {
			t.Fatal("values do not encode back to the bytes")
		}
	})
}
