// Package goldentest reads the golden reference files in shared/golden
// (raw float32 arrays, CSV tables, PNG images, the detection images.json)
// for the tests of amt's packages, and makes seeded random test images.
// Every reader fails the test on error.
package goldentest

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"hash/crc32"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/amt-dev/amt/rgb"
)

// CSV is a parsed CSV file: its header and its data rows.
type CSV struct {
	Header  []string
	Records [][]string
}

// ReadCSV reads a CSV file with a header row, failing the test on error.
func ReadCSV(t testing.TB, path string) CSV {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s: empty", path)
	}
	return CSV{Header: recs[0], Records: recs[1:]}
}

// Maps returns the data rows as maps keyed by column name.
func (c CSV) Maps() []map[string]string {
	rows := make([]map[string]string, len(c.Records))
	for i, r := range c.Records {
		m := make(map[string]string, len(c.Header))
		for j, k := range c.Header {
			if j < len(r) {
				m[k] = r[j]
			}
		}
		rows[i] = m
	}
	return rows
}

// ReadPNG decodes a PNG file into an RGB image.
func ReadPNG(t testing.TB, path string) rgb.Image {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	im, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rgb.FromImage(im)
}

// Floats parses every field as float64, failing the test on error.
func Floats(t testing.TB, file string, fields []string) []float64 {
	t.Helper()
	out := make([]float64, len(fields))
	for i, s := range fields {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s: field %d: %v", file, i, err)
		}
		out[i] = v
	}
	return out
}

// ReadF32 reads a little-endian float32 file.
func ReadF32(t testing.TB, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b)%4 != 0 {
		t.Fatalf("%s: %d bytes is not a whole number of float32", path, len(b))
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[i*4:]))
	}
	return out
}

// BitEqualF32 fails the test unless got and want are bit-identical,
// reporting the first few differences and their count.
func BitEqualF32(t testing.TB, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			if bad < 5 {
				t.Errorf("%s[%d] = %v, want %v", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ (want bit-exact)", what, bad, len(got))
	}
}

// Images is the part of golden/detection/images.json the tests use.
type Images struct {
	ClassIndexToCategoryID []int `json:"class_index_to_category_id"`
	Images                 []struct {
		ImageID   int `json:"image_id"`
		Width     int `json:"width"`
		Height    int `json:"height"`
		Letterbox struct {
			NW int     `json:"nw"`
			NH int     `json:"nh"`
			DX int     `json:"dx"`
			DY int     `json:"dy"`
			R  float64 `json:"r"`
		} `json:"letterbox"`
		NDets int     `json:"n_dets"`
		MAP   float64 `json:"map"`
	} `json:"images"`
}

// ReadImages reads images.json from the golden detection folder dir.
func ReadImages(t testing.TB, dir string) Images {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "images.json"))
	if err != nil {
		t.Fatal(err)
	}
	var im Images
	if err := json.Unmarshal(b, &im); err != nil {
		t.Fatalf("images.json: %v", err)
	}
	return im
}

// RandomImage returns a w×h image of seeded random pixels, the same for
// the same arguments.
func RandomImage(w, h int, seed uint64) rgb.Image {
	r := rand.New(rand.NewPCG(seed, 1))
	im := rgb.New(w, h)
	for i := range im.Pix {
		im.Pix[i] = uint8(r.UintN(256))
	}
	return im
}

// BombPNG returns a PNG of a few dozen bytes whose header declares a w×h
// 8-bit RGB image: a "decompression bomb" (its pixel data is missing, so a
// decoder that trusts the header allocates w·h·4 bytes for nothing).
func BombPNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc.Sum32())
	}
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, w), h)
	chunk("IHDR", append(ihdr, 8, 2, 0, 0, 0))
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00})
	chunk("IEND", nil)
	return b.Bytes()
}
