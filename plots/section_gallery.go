package plots

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
)

// gallery links the contact sheets of violating cases that amt run drew
// (record.GalleryDir: the first few violations of each MR found by the
// first agent's first seed, source and follow-up side by side), one
// subsection per agent that has sheets, MRs in scenario order. It reads
// the sheets' names only; the experiment draws them, since drawing needs
// the data set and the relations.
func (b *builder) gallery() error {
	root := filepath.Join(b.e.Dir, record.GalleryDir)
	agents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	var order []string // MRs in scenario order
	if b.e.Meta != nil {
		for _, a := range b.e.Meta.Scenario.Arms {
			if !slices.Contains(order, a.Action) {
				order = append(order, a.Action)
			}
		}
	}
	rank := func(mr string) int {
		if i := slices.Index(order, mr); i >= 0 {
			return i
		}
		return len(order)
	}
	type sheet struct{ agent, mr string }
	var sheets []sheet
	for _, a := range agents {
		if !a.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(root, a.Name()))
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		var mrs []string
		for _, f := range files {
			if f.Type().IsRegular() && strings.HasSuffix(f.Name(), ".png") {
				mrs = append(mrs, strings.TrimSuffix(f.Name(), ".png"))
			}
		}
		slices.SortStableFunc(mrs, func(x, y string) int {
			if d := rank(x) - rank(y); d != 0 {
				return d
			}
			return strings.Compare(x, y)
		})
		for _, mr := range mrs {
			sheets = append(sheets, sheet{a.Name(), mr})
		}
	}
	if len(sheets) == 0 {
		return nil
	}
	b.p("## Gallery of violations\n\n")
	b.p("The first violating cases of each MR that an agent found (amt run draws those of the first agent's first seed): ")
	b.p("the source image and its follow-up side by side, small images enlarged by a whole factor (nearest neighbour), ")
	b.p("captioned with the MR, its parameter and what the SUT said (class names where the data set has them; for detection ")
	b.p("the per-image AP and the detector's boxes). Each sheet's title gives the MR's number of violating cases in that run. ")
	b.p("Not a figure of the paper.\n\n")
	last := ""
	for _, s := range sheets {
		if s.agent != last {
			b.p("### Agent %s\n\n", s.agent)
			if vs, err := record.ReadViolations(filepath.Join(b.e.Dir, s.agent, record.ViolationsFile)); err == nil {
				b.p("%d violating cases drawn; the list is in `%s/%s`.\n\n", len(vs), s.agent, record.ViolationsFile)
			}
			last = s.agent
		}
		rel := record.GalleryFile(s.agent, s.mr)
		b.p("![%s: violating cases of agent %s](%s)\n\n", s.mr, s.agent, rel)
	}
	return nil
}
