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
