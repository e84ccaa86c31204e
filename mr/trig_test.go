package mr

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"testing"
)

// TestSincos compares sincos with correctly rounded sin and cos of 1601
// angles (testdata/sincos.csv, from testdata/gen_sincos.py: exact values by
// 60-digit decimal series, including all the paper's grid angles).
func TestSincos(t *testing.T) {
	f, err := os.Open("testdata/sincos.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 1000 {
		t.Fatalf("only %d rows", len(rows))
	}
	goWrong := 0
	for _, row := range rows[1:] {
		var v [3]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(row[i], 64); err != nil {
				t.Fatal(err)
			}
		}
		s, c := sincos(v[0])
		if s != v[1] || c != v[2] {
			t.Errorf("sincos(%v) = %v, %v; want %v, %v", v[0], s, c, v[1], v[2])
		}
		if gs, gc := math.Sincos(v[0]); gs != v[1] || gc != v[2] {
			goWrong++
		}
	}
	t.Logf("math.Sincos is not correctly rounded for %d of %d angles", goWrong, len(rows)-1)
	if s, c := sincos(math.Copysign(0, -1)); !math.Signbit(s) || c != 1 {
		t.Errorf("sincos(-0) = %v, %v", s, c)
	}
}
