package mr

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/scenario"
)

// Info is one relation's registry entry: everything the rest of amt knows
// about a kind of relation. A new relation is its own file (the type and
// its Apply/ApplyBoxes) plus one entry in Relations.
type Info struct {
	// Name is the registry name ("blur", "rotation"): the relation's name
	// in specifications, action sets and result files.
	Name string
	// Summary is a one-line description.
	Summary string
	// Param describes the relation's parameter (name, unit, valid range,
	// halving-reward scale); the zero Param for a relation without one.
	Param scenario.Param
	// Aliases are other names Parse accepts in the form ALIAS<value>, as
	// the original tool wrote them ("rot-30").
	Aliases []string
	// Paper marks the paper's seven relations, the arms of the built-in
	// scenarios; Grid is a parametric paper relation's grid (the
	// hierarchical scenario's parameter bandit and the flat scenario's
	// arms).
	Paper bool
	Grid  []float64
	// Corruption marks Hendrycks & Dietterich's common corruptions (their
	// parameter is the severity 1–5, Grid 1…5), the arms of the built-in
	// corruptions scenarios.
	Corruption bool
	// New returns the relation at a parameter value (ignored without a
	// parameter), or an error naming the value and the valid range.
	New func(param float64) (Relation, error)
}

// Parametric reports whether the relation takes a parameter.
func (in Info) Parametric() bool { return in.Param != (scenario.Param{}) }

// angle is the parameter of the affine relations; its halving reward
// halves every 5° (the paper's 10000/2^(|deg|/5 − 1)).
func angle(max float64) scenario.Param {
	return scenario.Param{Name: "angle", Unit: "degrees", Symbol: "DEG", Min: -max, Max: max, Scale: 5}
}

// plain is the constructor of a relation without a parameter.
func plain(r Relation) func(float64) (Relation, error) {
	return func(float64) (Relation, error) { return r, nil }
}

// Relations returns the registry: the paper's seven relations in its
// order, then amt's own, then the common corruptions (see corruptions). Each call returns fresh values.
func Relations() []Info {
	return append([]Info{
		{Name: "blur", Summary: "3x3 box blur, reflect-101 border (imgaug AverageBlur(k=3))", Paper: true, New: plain(Blur{})},
		{Name: "fliplr", Summary: "mirror left-right; boxes x' = (W-1) - x", Paper: true, New: plain(FlipLR{})},
		{Name: "flipud", Summary: "mirror top-bottom; boxes y' = (H-1) - y", Paper: true, New: plain(FlipUD{})},
		{Name: "grayscale", Summary: "OpenCV RGB2GRAY luma copied to 3 channels", Paper: true, New: plain(Grayscale{})},
		{Name: "invert", Summary: "255 - v", Paper: true, New: plain(Invert{})},
		{Name: "rotation", Summary: "rotate about the centre, positive = clockwise, bilinear, black border",
			Param: angle(MaxRotation), Aliases: []string{"rot"}, Paper: true, Grid: steps(-90, 90, 5),
			New: func(d float64) (Relation, error) { r := Rotation{Degrees: d}; return r, r.Validate() }},
		{Name: "shear", Summary: "skimage shear about the centre (y also scaled by cos), bilinear, black border",
			Param: angle(MaxShear), Paper: true, Grid: steps(-45, 45, 5),
			New: func(d float64) (Relation, error) { s := Shear{Degrees: d}; return s, s.Validate() }},
		{Name: "brightness", Summary: "add DELTA to every channel value, saturating at 0 and 255; boxes unchanged",
			Param: scenario.Param{Name: "delta", Unit: "levels", Symbol: "DELTA", Min: -MaxBrightness, Max: MaxBrightness, Scale: 10},
			New:   func(d float64) (Relation, error) { b := Brightness{Delta: d}; return b, b.Validate() }},
	}, corruptions()...)
}

// steps returns start, start+step, … ≤ stop, without 0.
func steps(start, stop, step int) []float64 {
	var out []float64
	for v := start; v <= stop; v += step {
		if v != 0 {
			out = append(out, float64(v))
		}
	}
	return out
}

// Lookup returns the registry entry of the relation called name.
func Lookup(name string) (Info, bool) {
	for _, in := range Relations() {
		if in.Name == name {
			return in, true
		}
	}
	return Info{}, false
}

// Names returns the relations' registry names, in the registry's order.
func Names() []string {
	var names []string
	for _, in := range Relations() {
		names = append(names, in.Name)
	}
	return names
}

// unknownRelation is the error for a name that no relation has: the
// closest name when it looks like a typo of one, and every name.
func unknownRelation(name string) error {
	return fmt.Errorf("unknown relation %q%s (known: %s)", name, suggest.DidYouMean(name, Names()), knownNames())
}

func knownNames() string {
	var names []string
	for _, in := range Relations() {
		n := in.Name
		if in.Parametric() {
			n += ":" + in.Param.Symbol
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

// New returns the relation registered under name. A parametric relation
// takes param within its range (see Relations); the others take no
// parameter and param must be 0.
func New(name string, param float64) (Relation, error) {
	in, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("mr: %w", unknownRelation(name))
	}
	if !in.Parametric() && param != 0 {
		return nil, fmt.Errorf("mr: relation %q takes no parameter, got %v", name, param)
	}
	return in.New(param)
}

// ForVariant returns the relation of one variant of a scenario whose
// actions are relations.
func ForVariant(v scenario.Variant) (Relation, error) {
	p := v.Value
	if p != p { // NaN: no parameter
		p = 0
	}
	return New(v.Action, p)
}

// Parse builds a relation from a specification: one relation "NAME" or
// "NAME:VALUE" ("blur", "rotation:30", "shear:-20"), or several separated
// by commas, which are composed in order ("rotation:30,invert" rotates,
// then inverts). Names are case-insensitive and surrounding spaces are
// ignored. A parametric relation's name or alias directly followed by its
// value is accepted too, as the original tool wrote them ("rot-30",
// "shear20"). A single relation is returned as itself, several as a
// Compose.
func Parse(spec string) (Relation, error) {
	parts := strings.Split(spec, ",")
	rels := make(Compose, 0, len(parts))
	for i, p := range parts {
		r, err := parseOne(p)
		if err != nil {
			if len(parts) > 1 {
				return nil, fmt.Errorf("mr: relation %d of %q: %w", i+1, spec, err)
			}
			return nil, err
		}
		rels = append(rels, r)
	}
	if len(rels) == 1 {
		return rels[0], nil
	}
	return rels, nil
}

func parseOne(s string) (Relation, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return nil, fmt.Errorf("mr: empty relation name (known: %s)", knownNames())
	}
	name, arg, hasArg := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if _, ok := Lookup(name); !ok && !hasArg {
		name, arg, hasArg = cutAlias(name)
	}
	in, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("mr: %w", unknownRelation(name))
	}
	if !in.Parametric() {
		if hasArg {
			return nil, fmt.Errorf("mr: relation %q takes no parameter, got %q", name, arg)
		}
		return New(name, 0)
	}
	p := in.Param
	if !hasArg {
		return nil, fmt.Errorf("mr: relation %q needs %s %s, e.g. %q", name, article(p.Name), p.Describe(), name+":"+p.Symbol)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(arg), 64)
	if err != nil {
		return nil, fmt.Errorf("mr: relation %q: %s %q is not a number (want %s in [%v, %v])", name, p.Name, arg, p.Unit, p.Min, p.Max)
	}
	return New(name, v)
}

// cutAlias splits "rot-30" into the relation "rotation" and "-30" when
// name is a parametric relation's name or alias followed by a number;
// otherwise it returns name unchanged without an argument.
func cutAlias(name string) (string, string, bool) {
	for _, in := range Relations() {
		if !in.Parametric() {
			continue
		}
		for _, prefix := range append([]string{in.Name}, in.Aliases...) {
			if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" {
				if _, err := strconv.ParseFloat(rest, 64); err == nil {
					return in.Name, rest, true
				}
			}
		}
	}
	return name, "", false
}

// article returns "an" before a vowel, else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
