package experiments

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// scalarOf reads a single value that conv converts; a value conv refuses
// is an error "%q is not " + want.
func scalarOf[T any](want string, conv func(s string) (T, bool)) reader[T] {
	return reader[T]{want: want, parse: func(p *parser, n *yaml.Node, key string) (T, error) {
		var zero T
		s, err := p.scalar(n, key)
		if err != nil {
			return zero, err
		}
		v, ok := conv(s)
		if !ok {
			return zero, p.errf(n, key, "%q is not %s", s, want)
		}
		return v, nil
	}}
}

// intIn reads an integer in [lo, hi].
func intIn(lo, hi int) reader[int] {
	return scalarOf(fmt.Sprintf("an integer in [%d, %d]", lo, hi), func(s string) (int, bool) {
		v, err := strconv.Atoi(s)
		return v, err == nil && v >= lo && v <= hi
	})
}

// floatIn reads a finite number in [lo, hi].
func floatIn(lo, hi float64) reader[float64] {
	return scalarOf(fmt.Sprintf("a number in [%g, %g]", lo, hi), func(s string) (float64, bool) {
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil && v >= lo && v <= hi
	})
}

// rgbTriple reads three finite numbers, one per channel (positive ones
// with positive).
func rgbTriple(positive bool) reader[[3]float64] {
	each := "a finite number"
	if positive {
		each = "a positive number"
	}
	want := fmt.Sprintf("a list of 3 numbers (R, G, B), or of 1 (a grey model's channel, or the same for all three), each %s", each)
	return reader[[3]float64]{want: want, parse: func(p *parser, n *yaml.Node, key string) ([3]float64, error) {
		var out [3]float64
		if n.Kind != yaml.SequenceNode || (len(n.Content) != 3 && len(n.Content) != 1) {
			return out, p.errf(n, key, "want %s, got %s", want, kindName(n))
		}
		for i, c := range n.Content {
			v, err := strconv.ParseFloat(c.Value, 64)
			if c.Kind != yaml.ScalarNode || err != nil || math.IsNaN(v) || math.IsInf(v, 0) || (positive && v <= 0) {
				return out, p.errf(c, key, "%q is not %s", c.Value, each)
			}
			out[i] = v
		}
		if len(n.Content) == 1 {
			out[1], out[2] = out[0], out[0]
		}
		return out, nil
	}}
}

// maxInputSide bounds a model's input side.
const maxInputSide = 1 << 14

// inputSize reads an input size, one integer (a square) or [width,
// height], into two int fields.
func inputSize(f func(*Config) (w, h *int)) value {
	want := fmt.Sprintf("an integer in [1, %d] (a square) or [width, height]", maxInputSide)
	side := func(n *yaml.Node) (int, bool) {
		v, err := strconv.Atoi(n.Value)
		return v, n.Kind == yaml.ScalarNode && err == nil && v > 0 && v <= maxInputSide
	}
	return value{want: want,
		read: func(p *parser, n *yaml.Node, key string, dst any) error {
			bad := p.errf(n, key, "want a positive integer or [width, height], got %s", kindName(n))
			var w, h int
			switch {
			case n.Kind == yaml.ScalarNode:
				v, ok := side(n)
				if !ok {
					return bad
				}
				w, h = v, v
			case n.Kind == yaml.SequenceNode && len(n.Content) == 2:
				var ok1, ok2 bool
				w, ok1 = side(n.Content[0])
				h, ok2 = side(n.Content[1])
				if !ok1 || !ok2 {
					return bad
				}
			default:
				return bad
			}
			pw, ph := f(dst.(*Config))
			*pw, *ph = w, h
			return nil
		},
		fields: func(dst any) []any { w, h := f(dst.(*Config)); return []any{w, h} },
	}
}

// seedList reads seeds: a specification of ParseSeeds, or a list of
// seeds.
func seedList() reader[[]uint64] {
	return reader[[]uint64]{want: fmt.Sprintf("a range such as 1-10, a seed, a comma list of both, or a list of seeds (at most %d)", maxSeeds),
		parse: func(p *parser, n *yaml.Node, key string) ([]uint64, error) {
			switch n.Kind {
			case yaml.ScalarNode:
				s, err := ParseSeeds(n.Value)
				if err != nil {
					return nil, p.errf(n, key, "%v", err)
				}
				return s, nil
			case yaml.SequenceNode:
				if len(n.Content) > maxSeeds {
					return nil, p.errf(n, key, "%d seeds, more than the limit of %d", len(n.Content), maxSeeds)
				}
				seeds := make([]uint64, 0, len(n.Content))
				seen := make(map[uint64]bool, len(n.Content))
				for _, e := range n.Content {
					v, err := strconv.ParseUint(e.Value, 10, 64)
					if e.Kind != yaml.ScalarNode || err != nil {
						return nil, p.errf(e, key, "%q is not a non-negative integer", e.Value)
					}
					if seen[v] {
						return nil, p.errf(e, key, "seed %d given twice", v)
					}
					seen[v] = true
					seeds = append(seeds, v)
				}
				if len(seeds) > 0 {
					return seeds, nil
				}
			}
			return nil, p.errf(n, key, "want a list of seeds or a range such as 1-10")
		}}
}

// uintValue reads a non-negative integer (a seed).
func uintValue() reader[uint64] {
	return scalarOf("a non-negative integer", func(s string) (uint64, bool) {
		v, err := strconv.ParseUint(s, 10, 64)
		return v, err == nil
	})
}

// maxDuration bounds a time budget.
const maxDuration = 7 * 24 * time.Hour

// duration reads a positive Go duration ("90s", "1m30s").
func duration() reader[time.Duration] {
	return scalarOf("a duration such as 90s or 1m30s (at most 168h)", func(s string) (time.Duration, bool) {
		d, err := time.ParseDuration(s)
		return d, err == nil && d > 0 && d <= maxDuration
	})
}

// optRate reads a rate in [0, 1] into an optional value.
func optRate() reader[*float64] {
	r := floatIn(0, 1)
	return reader[*float64]{want: r.want, parse: func(p *parser, n *yaml.Node, key string) (*float64, error) {
		v, err := r.parse(p, n, key)
		if err != nil {
			return nil, err
		}
		return &v, nil
	}}
}

// openUnit reads a number in (0, 1).
func openUnit() reader[float64] {
	return scalarOf("a number in (0, 1)", func(s string) (float64, bool) {
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil && v > 0 && v < 1
	})
}
