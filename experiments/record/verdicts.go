package record

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/amt-dev/amt/internal/limits"
	"github.com/amt-dev/amt/scenario"
)

// Verdict is one row of the exhaustive verdict table: one follow-up
// (an MR with an optional parameter) of one source image.
type Verdict struct {
	Image int    // index of the image in the data set
	MR    string // blur, fliplr, flipud, grayscale, invert, rotation, shear, …
	// Param is the parameter in degrees; NaN for MRs without one.
	Param     float64
	Violation bool
	// Classification: predicted classes and the true label (−1 if unknown).
	PredOriginal, PredTransformed, Label int
	// Detection: per-image mAP of the source and the follow-up (−1 when the
	// image has no annotations). NaN for classification tables.
	MapOriginal, MapTransformed float64
}

// HasParam reports whether the row's MR is parameterised.
func (v Verdict) HasParam() bool { return !math.IsNaN(v.Param) }

// ParamKey returns the row's variant key (scenario.Key: "rotation:-30",
// "blur"), the key used in Run.Params.
func (v Verdict) ParamKey() string { return scenario.Key(v.MR, v.Param) }

// Table kinds, by header.
var (
	// ClassificationHeader is the CSV header of a classification table.
	ClassificationHeader = []string{"image", "mr", "param", "pred_original", "pred_transformed", "violation", "label"}
	// DetectionHeader is the CSV header of a detection table.
	DetectionHeader = []string{"image_id", "mr", "param", "map_original", "map_transformed", "violation"}
)

// WriteVerdictsCSV writes rows as CSV (classification or detection columns
// as chosen by detection) to path, atomically. Detection tables name the
// image column image_id and hold the data set's image ids in Image.
func WriteVerdictsCSV(path string, rows []Verdict, detection bool) error {
	var buf bytes.Buffer
	if err := EncodeVerdictsCSV(&buf, rows, detection); err != nil {
		return fmt.Errorf("record: %s: %w", path, err)
	}
	return WriteFileAtomic(path, buf.Bytes())
}

// EncodeVerdictsCSV writes rows as CSV to w.
func EncodeVerdictsCSV(w io.Writer, rows []Verdict, detection bool) error {
	cw := csv.NewWriter(w)
	hdr := ClassificationHeader
	if detection {
		hdr = DetectionHeader
	}
	if err := cw.Write(hdr); err != nil {
		return err
	}
	viol := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	for _, r := range rows {
		var rec []string
		if detection {
			rec = []string{strconv.Itoa(r.Image), r.MR, scenario.FormatValue(r.Param),
				strconv.FormatFloat(r.MapOriginal, 'g', -1, 64), strconv.FormatFloat(r.MapTransformed, 'g', -1, 64), viol(r.Violation)}
		} else {
			rec = []string{strconv.Itoa(r.Image), r.MR, scenario.FormatValue(r.Param),
				strconv.Itoa(r.PredOriginal), strconv.Itoa(r.PredTransformed), viol(r.Violation), strconv.Itoa(r.Label)}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadVerdictsCSV reads a verdict table. It needs at least the columns
// image (or image_id), mr, param and violation (0/1 or true/false); the
// other known columns are read when present (missing ones read as −1 or
// NaN). Errors name the file, line and column.
func ReadVerdictsCSV(path string) ([]Verdict, error) {
	return decodeFile(path, DecodeVerdictsCSV)
}

// MaxImage is the largest image index (or detection image id) a verdict
// table may hold.
const MaxImage = math.MaxInt32

// csvError describes an error of encoding/csv; extra is the number of
// fields a record had beyond the header's (negative: fewer), for a
// csv.ErrFieldCount.
func csvError(name string, err error, extra int) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("record: %s: %w", name, err)
	}
	if errors.Is(pe.Err, csv.ErrFieldCount) {
		n := "fewer"
		if extra > 0 {
			n = "more"
		}
		return fmt.Errorf("record: %s:%d: %s fields than the header's (a truncated or damaged file? rewrite it with amt sweep -csv)", name, pe.Line, n)
	}
	return fmt.Errorf("record: %s:%d:%d: %v", name, pe.Line, pe.Column, pe.Err)
}

// DecodeVerdictsCSV reads a verdict table from r; name is used in errors.
// The table is bounded as it is read (internal/limits): at most
// limits.TableBytes in all, lines of at most limits.LineBytes and fields
// of at most limits.FieldBytes; errors quote at most the start of a
// field.
func DecodeVerdictsCSV(r io.Reader, name string) ([]Verdict, error) {
	cr := csv.NewReader(limits.LineReader(r, name, limits.TableBytes, limits.LineBytes))
	cr.ReuseRecord = true
	hdr, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("record: %s: empty file: want a header line such as %s", name, strings.Join(ClassificationHeader, ","))
	}
	if err != nil {
		return nil, csvError(name, err, 0)
	}
	if err := checkFields(name, 1, hdr); err != nil {
		return nil, err
	}
	nf := len(hdr)
	col := map[string]int{}
	for i, h := range hdr {
		col[strings.TrimSpace(strings.ToLower(h))] = i
	}
	if _, ok := col["image"]; !ok {
		if i, ok := col["image_id"]; ok {
			col["image"] = i
		}
	}
	for _, need := range []string{"image", "mr", "param", "violation"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("record: %s: header %q lacks column %q", name, clip(strings.Join(hdr, ",")), need)
		}
	}
	var out []Verdict
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(name, err, len(rec)-nf)
		}
		if err := checkFields(name, line, rec); err != nil {
			return nil, err
		}
		field := func(c string) (string, bool) {
			i, ok := col[c]
			if !ok || i >= len(rec) {
				return "", false
			}
			return strings.TrimSpace(rec[i]), true
		}
		bad := func(c, v, want string) error {
			return fmt.Errorf("record: %s:%d: column %q: %q is not %s", name, line, c, clip(v), want)
		}
		v := Verdict{Param: math.NaN(), PredOriginal: -1, PredTransformed: -1, Label: -1, MapOriginal: math.NaN(), MapTransformed: math.NaN()}
		s, _ := field("image")
		if v.Image, err = strconv.Atoi(s); err != nil || v.Image < 0 || v.Image > MaxImage {
			return nil, bad("image", s, fmt.Sprintf("an image index or id in [0, %d]", MaxImage))
		}
		v.MR, _ = field("mr")
		if v.MR == "" {
			return nil, bad("mr", v.MR, "an MR name")
		}
		if s, _ = field("param"); s != "" && s != "None" {
			if v.Param, err = strconv.ParseFloat(s, 64); err != nil || math.IsNaN(v.Param) || math.IsInf(v.Param, 0) {
				return nil, bad("param", s, "degrees or empty")
			}
		}
		s, _ = field("violation")
		switch strings.ToLower(s) {
		case "1", "true":
			v.Violation = true
		case "0", "false":
		default:
			return nil, bad("violation", s, "0/1 or true/false")
		}
		for _, c := range []struct {
			name string
			dst  *int
		}{{"pred_original", &v.PredOriginal}, {"pred_transformed", &v.PredTransformed}, {"label", &v.Label}} {
			if s, ok := field(c.name); ok && s != "" {
				if *c.dst, err = strconv.Atoi(s); err != nil {
					return nil, bad(c.name, s, "an integer")
				}
			}
		}
		for _, c := range []struct {
			name string
			dst  *float64
		}{{"map_original", &v.MapOriginal}, {"map_transformed", &v.MapTransformed}} {
			if s, ok := field(c.name); ok && s != "" {
				if *c.dst, err = strconv.ParseFloat(s, 64); err != nil {
					return nil, bad(c.name, s, "a number")
				}
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// checkFields refuses a record with a field over limits.FieldBytes.
func checkFields(name string, line int, rec []string) error {
	for i, f := range rec {
		if len(f) > limits.FieldBytes {
			return fmt.Errorf("record: %s:%d: %w", name, line,
				&limits.TooLargeError{What: fmt.Sprintf("field %d", i+1), Size: int64(len(f)), Limit: limits.FieldBytes, Unit: "bytes"})
		}
	}
	return nil
}

// clip shortens a value from a file for an error message.
func clip(s string) string { return limits.Clip(s, 80) }
