package ope

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/internal/limits"
)

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestReadJSONLBounds checks the log's size budget (#34, class 1): an arm
// index or a context beyond the limits, an endless line and an endless
// log end in clear errors before anything is built for them, and
// Evaluate refuses more record-arm cells than limits.OPECells.
func TestReadJSONLBounds(t *testing.T) {
	bad := []struct{ in, want string }{
		{`{"context":[1],"arm":2000000000,"prob":1,"cost":1}`, "line 1: arm 2000000000, want 0 <= arm < 65536"},
		{`{"context":[` + strings.Repeat("0,", limits.ContextDim) + `0],"arm":0,"prob":1,"cost":1}`, "context has 65537 values, more than the limit"},
	}
	for _, c := range bad {
		if _, err := ReadJSONL(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadJSONL(%.60q…) err = %v, want %q", c.in, err, c.want)
		}
	}
	var tl *limits.TooLargeError
	if _, err := ReadJSONL(zeros{}); !errors.As(err, &tl) {
		t.Errorf("endless line: err = %v", err)
	}
	blank := io.LimitReader(bytes.NewReader(bytes.Repeat([]byte("\n"), limits.LogBytes+2)), limits.LogBytes+2)
	if _, err := ReadJSONL(blank); !errors.As(err, &tl) {
		t.Errorf("endless log: err = %v", err)
	}
	log := make([]Record, 2)
	for i := range log {
		log[i] = Record{Context: []float32{1}, Arm: 0, Prob: 1, Cost: 1}
	}
	p, err := bandit.NewPolicy("random", limits.Arms, 1, bandit.Config{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]Record, limits.OPECells/limits.Arms+1)
	for i := range big {
		big[i] = log[0]
	}
	if _, err := Evaluate(context.Background(), big, p, Options{Arms: limits.Arms, Level: 0.9}); !errors.As(err, &tl) {
		t.Errorf("%d records × %d arms: err = %v", len(big), limits.Arms, err)
	}
	if _, err := Evaluate(context.Background(), log, p, Options{Arms: limits.Arms, Level: 0.9, ModelHidden: 100000000}); err == nil || !strings.Contains(err.Error(), "hidden units") {
		t.Errorf("a cost model of 1e8 hidden units: err = %v", err)
	}
}

// FuzzReadJSONL: no log makes ReadJSONL panic, and what it accepts is
// within the limits.
func FuzzReadJSONL(f *testing.F) {
	f.Add([]byte(`{"context":[1,2],"arm":1,"prob":0.5,"cost":1}` + "\n\n" + `{"context":[0.5,-2],"arm":0,"prob":1,"cost":0}`))
	f.Add([]byte(`{"context":[1],"arm":2000000000,"prob":1,"cost":1}`))
	f.Add([]byte(`{"context":[1],"arm":0,"prob":1,"cost":1,"seed":1,"iteration":2,"image":3,"variant":"blur","violated":true}`))
	f.Add([]byte("{\"context\":[1e39],\"arm\":0,\"prob\":1,\"cost\":1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadJSONL(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range recs {
			if r.Arm < 0 || r.Arm >= limits.Arms || len(r.Context) == 0 || len(r.Context) > limits.ContextDim || !(r.Prob > 0 && r.Prob <= 1) {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}
