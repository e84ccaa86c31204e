package mr

import (
	"fmt"
	"strconv"
	"strings"
)

// Info describes one kind of relation, for listings and error messages.
type Info struct {
	// Name is the registry name ("blur", "rotation").
	Name string
	// Summary is a one-line description.
	Summary string
	// Parametric reports whether the relation takes a parameter; if so, it
	// is an angle in degrees in [Min, Max].
	Parametric bool
	Min, Max   float64
}

// Relations lists the registered relations in the paper's order.
func Relations() []Info {
	return []Info{
		{Name: "blur", Summary: "3x3 box blur, reflect-101 border (imgaug AverageBlur(k=3))"},
		{Name: "fliplr", Summary: "mirror left-right; boxes x' = (W-1) - x"},
		{Name: "flipud", Summary: "mirror top-bottom; boxes y' = (H-1) - y"},
		{Name: "grayscale", Summary: "OpenCV RGB2GRAY luma copied to 3 channels"},
		{Name: "invert", Summary: "255 - v"},
		{Name: "rotation", Summary: "rotate about the centre, positive = clockwise, bilinear, black border", Parametric: true, Min: -MaxRotation, Max: MaxRotation},
		{Name: "shear", Summary: "skimage shear about the centre (y also scaled by cos), bilinear, black border", Parametric: true, Min: -MaxShear, Max: MaxShear},
	}
}

// lookup returns the Info registered under name.
func lookup(name string) (Info, bool) {
	for _, in := range Relations() {
		if in.Name == name {
			return in, true
		}
	}
	return Info{}, false
}

func knownNames() string {
	var names []string
	for _, in := range Relations() {
		n := in.Name
		if in.Parametric {
			n += ":DEG"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

// IsParametric reports whether the relation registered under name takes a
// parameter, and whether the name is registered at all.
func IsParametric(name string) (parametric, ok bool) {
	in, ok := lookup(name)
	return in.Parametric, ok
}

// New returns the relation registered under name. A parametric relation
// (rotation, shear) takes param in degrees within its range (see
// Relations); the others take no parameter and param must be 0.
func New(name string, param float64) (Relation, error) {
	in, ok := lookup(name)
	if !ok {
		return nil, fmt.Errorf("mr: unknown relation %q (known: %s)", name, knownNames())
	}
	if !in.Parametric {
		if param != 0 {
			return nil, fmt.Errorf("mr: relation %q takes no parameter, got %v", name, param)
		}
		switch name {
		case "blur":
			return Blur{}, nil
		case "fliplr":
			return FlipLR{}, nil
		case "flipud":
			return FlipUD{}, nil
		case "grayscale":
			return Grayscale{}, nil
		default:
			return Invert{}, nil
		}
	}
	var r interface {
		Relation
		Validate() error
	} = Shear{Degrees: param}
	if name == "rotation" {
		r = Rotation{Degrees: param}
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// Parse builds a relation from a specification: one relation "NAME" or
// "NAME:DEG" ("blur", "rotation:30", "shear:-20"), or several separated by
// commas, which are composed in order ("rotation:30,invert" rotates, then
// inverts). Names are case-insensitive and surrounding spaces are ignored.
// The original tool's names rot<d> and shear<d> ("rot-30", "shear20") are
// accepted too. A single relation is returned as itself, several as a
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
	if !hasArg {
		if _, ok := lookup(name); !ok {
			// Tetraband names: rot<d>, shear<d>.
			for _, alias := range [...]struct{ prefix, name string }{{"rotation", "rotation"}, {"rot", "rotation"}, {"shear", "shear"}} {
				if rest, ok := strings.CutPrefix(name, alias.prefix); ok && rest != "" {
					if _, err := strconv.ParseFloat(rest, 64); err == nil {
						name, arg, hasArg = alias.name, rest, true
						break
					}
				}
			}
		}
	}
	in, ok := lookup(name)
	if !ok {
		return nil, fmt.Errorf("mr: unknown relation %q (known: %s)", name, knownNames())
	}
	if !in.Parametric {
		if hasArg {
			return nil, fmt.Errorf("mr: relation %q takes no parameter, got %q", name, arg)
		}
		return New(name, 0)
	}
	if !hasArg {
		return nil, fmt.Errorf("mr: relation %q needs an angle in degrees in [%v, %v], e.g. %q", name, in.Min, in.Max, name+":30")
	}
	deg, err := strconv.ParseFloat(strings.TrimSpace(arg), 64)
	if err != nil {
		return nil, fmt.Errorf("mr: relation %q: angle %q is not a number (want degrees in [%v, %v])", name, arg, in.Min, in.Max)
	}
	return New(name, deg)
}
