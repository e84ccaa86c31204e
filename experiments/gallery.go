package experiments

import (
	"context"
	"fmt"
	"math"
	"path"
	"path/filepath"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/plural"
	"github.com/amt-dev/amt/plots/gallery"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/sut"
)

// The gallery is drawn here, at the end of a run or check, rather than by
// amt plot: it needs the source images, the relations and, for detection,
// the detector, which only an experiment has open (the plots package reads
// result files only). The reports link the sheets by their names in
// package record.

// galleryScore is the lowest score of a detection drawn in the gallery
// (the SUT keeps detections down to sut.score_threshold, 0.005 by default,
// far too many to draw), and galleryBoxes the most drawn per image.
const (
	galleryScore = 0.3
	galleryBoxes = 12
)

// galleryLog returns the log of the violations the gallery of amt run
// shows, those of the first agent's (i == 0) first seed, adding it to
// o.Trace; nil when agent i draws none.
func (e *Experiment) galleryLog(i int, o *SeedsOptions) *violationLog {
	cfg := e.Config
	if i != 0 || cfg.Gallery <= 0 {
		return nil
	}
	l := &violationLog{sc: cfg.Scenario, perMR: cfg.Gallery, seed: &cfg.Seeds[0]}
	if t := o.Trace; t != nil {
		o.Trace = func(seed uint64, s Step) { l.add(seed, s); t(seed, s) }
	} else {
		o.Trace = l.add
	}
	return l
}

// drawRunGallery draws the gallery of an amt run from l (nil: nothing).
func (e *Experiment) drawRunGallery(ctx context.Context, agent string, l *violationLog) error {
	if l == nil {
		return nil
	}
	if err := e.fillIDs(l.out); err != nil {
		return err
	}
	return e.drawGallery(ctx, agent, l.out, fmt.Sprintf("seed %d", e.Config.Seeds[0]))
}

// drawGallery draws the first Config.Gallery violations of each relation
// in vs (in scenario order) into Output/gallery/<agent>/<mr>.png, one sheet
// per relation, and removes the agent's sheets of relations without
// violations this time. Each case is drawn from the data set again: the
// source image and its follow-up (the relation applied afresh, which gives
// the image the SUT saw), captioned with the relation, the parameter and
// what the SUT said (classes by name where known; for detection the APs,
// and the detector's boxes on both images). what says whose violations
// they are ("seed 1").
func (e *Experiment) drawGallery(ctx context.Context, agent string, vs []record.Violation, what string) error {
	var keep []string
	if e.Config.Gallery > 0 && len(vs) > 0 {
		boxes, err := e.galleryBoxer()
		if err != nil {
			return err
		}
		byMR := map[string][]record.Violation{}
		for _, v := range vs {
			byMR[v.MR] = append(byMR[v.MR], v)
		}
		mrs := e.Config.Scenario.Actions()
		for _, mr := range mrs {
			all := byMR[mr]
			if len(all) == 0 {
				continue
			}
			shown := all[:min(len(all), e.Config.Gallery)]
			var pairs []gallery.Pair
			side := 128
			for _, v := range shown {
				if err := ctx.Err(); err != nil {
					return err
				}
				p, err := e.galleryPair(v, boxes)
				if err != nil {
					return fmt.Errorf("gallery: %w", err)
				}
				if b := p.Source.Bounds(); max(b.Dx(), b.Dy()) > 64 {
					side = 224
				}
				pairs = append(pairs, p)
			}
			title := fmt.Sprintf("%s — %s (%s, agent %s, %s)", mr, plural.Count(len(all), "violating case"), firstOf(len(shown), len(all)), agent, what)
			img, err := gallery.Sheet(title, pairs, gallery.Options{Side: side, Columns: 3})
			if err != nil {
				return err
			}
			b, err := gallery.EncodePNG(img)
			if err != nil {
				return err
			}
			name := filepath.Join(e.Config.Output, filepath.FromSlash(record.GalleryFile(agent, mr)))
			if err := record.WriteFileAtomic(name, b); err != nil {
				return err
			}
			keep = append(keep, record.GalleryFile(agent, mr))
		}
	}
	// Sheets of an earlier run in the same folder that this one did not
	// rewrite would show violations it did not find: they are deleted, but
	// only those amt wrote (record.ReplaceWritten), never a file of
	// someone else's.
	return record.ReplaceWritten(e.Config.Output, []string{path.Join(record.GalleryDir, agent)}, keep)
}

func firstOf(shown, all int) string {
	if shown == all {
		return "all shown"
	}
	return fmt.Sprintf("the first %d shown", shown)
}

// galleryPair draws one violation: the source image, the follow-up, their
// boxes (detection) and the caption.
func (e *Experiment) galleryPair(v record.Violation, boxes func(rgb.Image) ([]gallery.Box, error)) (gallery.Pair, error) {
	img, _, err := e.full.Image(v.Image)
	if err != nil {
		return gallery.Pair{}, fmt.Errorf("image %d: %w", v.Image, err)
	}
	r := e.relations[v.Variant]
	if r == nil {
		return gallery.Pair{}, fmt.Errorf("image %d: no relation for follow-up %s", v.Image, v.Variant)
	}
	follow := r.Apply(img)
	p := gallery.Pair{Source: img, FollowUp: follow}
	head := fmt.Sprintf("image %d", v.Image)
	if v.Name != "" {
		head = fmt.Sprintf("image %d (%s)", v.Image, v.Name)
	} else if v.ID != int64(v.Image) {
		head = fmt.Sprintf("image %d (id %d)", v.Image, v.ID)
	}
	p.Caption = append(p.Caption, head+" · "+record.DescribeScenario(e.Config.Scenario).VariantText(v.Variant))
	if boxes != nil {
		if p.SourceBoxes, err = boxes(img); err != nil {
			return p, fmt.Errorf("image %d: %w", v.Image, err)
		}
		if p.FollowUpBoxes, err = boxes(follow); err != nil {
			return p, fmt.Errorf("image %d, %s: %w", v.Image, v.Variant, err)
		}
		p.Caption = append(p.Caption, fmt.Sprintf("AP %.2f → %.2f", v.ScoreOriginal, v.ScoreTransformed),
			fmt.Sprintf("boxes: detections scoring ≥ %.1f", galleryScore))
		return p, nil
	}
	p.Caption = append(p.Caption, e.className(v.PredOriginal)+" → "+e.className(v.PredTransformed))
	if v.Label >= 0 {
		p.Caption = append(p.Caption, "label "+e.className(v.Label)+fmt.Sprintf(" · iteration %d", v.Iteration))
	} else {
		p.Caption = append(p.Caption, fmt.Sprintf("iteration %d", v.Iteration))
	}
	return p, nil
}

// className returns the name of class c ("class 7" without names).
func (e *Experiment) className(c int) string {
	if c >= 0 && c < len(e.classes) && e.classes[c] != "" {
		return e.classes[c]
	}
	return fmt.Sprintf("class %d", c)
}

// A galleryBoxer is a case study whose gallery shows its SUT's boxes.
type galleryBoxer interface {
	boxer(names map[int]string) (func(rgb.Image) ([]gallery.Box, error), error)
}

// galleryBoxer returns the function drawing the SUT's boxes on an image,
// nil for case studies without boxes.
func (e *Experiment) galleryBoxer() (func(rgb.Image) ([]gallery.Box, error), error) {
	gb, ok := e.study.(galleryBoxer)
	if !ok {
		return nil, nil
	}
	names := map[int]string{}
	if e.data != nil {
		for _, c := range e.data.Info().Classes {
			names[c.ID] = c.Name
		}
	}
	return gb.boxer(names)
}

// boxer runs the detector and returns its detections scoring at least
// galleryScore (at most galleryBoxes), labelled with the category's name
// and the score.
func (s *detectionStudy) boxer(names map[int]string) (func(rgb.Image) ([]gallery.Box, error), error) {
	d, err := s.newDetector()
	if err != nil {
		return nil, err
	}
	return func(img rgb.Image) ([]gallery.Box, error) {
		dets, err := d.Detect(img)
		if err != nil {
			return nil, err
		}
		var out []gallery.Box
		for _, x := range dets {
			if x.Score < galleryScore || len(out) == galleryBoxes {
				continue
			}
			out = append(out, detectionBox(x, names))
		}
		return out, nil
	}, nil
}

func detectionBox(d sut.Detection, names map[int]string) gallery.Box {
	name := names[d.CategoryID]
	if name == "" {
		name = fmt.Sprintf("category %d", d.CategoryID)
	}
	return gallery.Box{X: d.Box.X, Y: d.Box.Y, W: d.Box.W, H: d.Box.H,
		Label: fmt.Sprintf("%s %.0f%%", name, math.Round(100*d.Score))}
}
