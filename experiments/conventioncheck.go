package experiments

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/amt-dev/amt/nn/preprocess"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/sut"
)

// The convention check: a model fed the wrong input convention (BGR as
// RGB, 0-255 as [0, 1], …) predicts garbage, and every metamorphic
// relation then "violates": false alarms that look like findings. Before
// testing, the classifier runs on the first images; predictions that look
// like a wrong convention get one warning line that names the likely fix.

// conventionImages is how many images the check classifies.
const conventionImages = 100

// The rules: a wrong convention shows as predictions collapsing onto one
// class, or, with labels of the model's own classes, as accuracy near
// chance.
const (
	// collapseShare is the share of images of the most predicted class
	// from which predictions have collapsed.
	collapseShare = 0.9
	// chanceFactor: accuracy at most chanceFactor × chance (1/classes) is
	// "near chance".
	chanceFactor = 1.5
	// minCheckImages and minLabelled are the fewest images (labelled
	// ones) a rule needs.
	minCheckImages, minLabelled = 10, 20
)

// ConventionCheck is the outcome of the convention check on a classifier.
type ConventionCheck struct {
	// Images is the number of images classified, Labelled how many of
	// them have a label of the model's classes (the accuracy rule applies
	// when the data set has as many classes as the model).
	Images, Labelled int
	// Accuracy is the top-1 accuracy on the labelled images (NaN when
	// there are none).
	Accuracy float64
	// Classes is the model's number of classes.
	Classes int
	// Top is the most predicted class, TopShare its share of the images,
	// Distinct the number of classes predicted at all, Entropy the
	// entropy (bits) of the predicted classes' distribution.
	Top      int
	TopShare float64
	Distinct int
	Entropy  float64
	// Warning is the one-line warning, "" when the predictions look fine.
	Warning string
	// Fix is the alternative convention that looks right on the same
	// images, as sut keys ("channel_order: bgr, scale: pixel, mean:
	// [123.675, 116.28, 103.53]"); "" when none does.
	Fix string
}

// predictionStats summarises the predictions of one convention.
type predictionStats struct {
	n, labelled, correct int
	top, distinct        int
	topShare, entropy    float64
}

func (s predictionStats) accuracy() float64 {
	if s.labelled == 0 {
		return math.NaN()
	}
	return float64(s.correct) / float64(s.labelled)
}

// looksWrong reports whether s looks like a wrong convention for a model
// of k classes, and why, in words.
func (s predictionStats) looksWrong(k int) (bool, string) {
	if s.n >= minCheckImages && k > 1 && s.topShare >= collapseShare {
		return true, fmt.Sprintf("%d of the first %d images are predicted as class %%s", int(math.Round(s.topShare*float64(s.n))), s.n)
	}
	if s.labelled >= minLabelled && k > 1 && s.accuracy() <= chanceFactor/float64(k) {
		return true, fmt.Sprintf("accuracy %.1f %% on the first %d labelled images, chance is %.1f %%", 100*s.accuracy(), s.labelled, 100/float64(k))
	}
	return false, ""
}

// stats classifies imgs with c and summarises the predictions; labels of
// −1 (or with useLabels false) count as unlabelled.
func stats(c *sut.Classifier, imgs []rgb.Image, labels []int, useLabels bool) (predictionStats, int, error) {
	preds, err := c.Classify(imgs)
	if err != nil {
		return predictionStats{}, 0, err
	}
	s := predictionStats{n: len(preds)}
	k := 0
	count := map[int]int{}
	for i, p := range preds {
		k = max(k, len(p.Logits))
		count[p.Class]++
		if useLabels && labels[i] >= 0 {
			s.labelled++
			if p.Class == labels[i] {
				s.correct++
			}
		}
	}
	for cl, m := range count {
		if m > count[s.top] || (m == count[s.top] && cl < s.top) {
			s.top = cl
		}
		q := float64(m) / float64(len(preds))
		s.entropy -= q * math.Log2(q)
	}
	s.distinct = len(count)
	s.topShare = float64(count[s.top]) / float64(max(len(preds), 1))
	return s, k, nil
}

// CheckConvention runs the convention check of a classification
// experiment on its first images (at most 100; data.limit applies) and
// returns its outcome, nil for a detection experiment. It only reads:
// nothing is written, no cache is touched.
func (e *Experiment) CheckConvention(ctx context.Context) (*ConventionCheck, error) {
	st, ok := e.study.(*classificationStudy)
	if !ok || st.model == nil {
		return nil, nil
	}
	n := min(conventionImages, e.src.Len())
	imgs := make([]rgb.Image, n)
	labels := make([]int, n)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		img, label, err := e.src.Image(i)
		if err != nil {
			return nil, fmt.Errorf("convention check: image %d: %w", i, err)
		}
		imgs[i], labels[i] = img, label
	}
	classify := func(cc sut.ClassifierConfig, useLabels bool) (predictionStats, int, error) {
		c, err := sut.NewClassifier(st.model.Clone(), cc)
		if err != nil {
			return predictionStats{}, 0, err
		}
		return stats(c, imgs, labels, useLabels)
	}
	s, k, err := classify(st.cc, true)
	if err != nil {
		return nil, fmt.Errorf("convention check: %w", err)
	}
	// Labels count only when the data set's classes are the model's.
	useLabels := len(e.classes) == k
	if !useLabels {
		s.labelled, s.correct = 0, 0
	}
	res := &ConventionCheck{Images: s.n, Labelled: s.labelled, Accuracy: s.accuracy(), Classes: k,
		Top: s.top, TopShare: s.topShare, Distinct: s.distinct, Entropy: s.entropy}
	wrong, why := s.looksWrong(k)
	if !wrong {
		return res, nil
	}
	if strings.Contains(why, "%s") {
		why = fmt.Sprintf(why, e.classLabel(s.top))
	}
	// The likely fix: the other conventions on the same images that do
	// not look wrong; with labels the most accurate, else the one closest
	// to the configured convention (fewest of channel order and scale
	// changed; unlabelled images cannot tell more), in alternatives'
	// order.
	var best *alternative
	bestAcc := s.accuracy()
	for _, alt := range alternatives(st.cc) {
		a, _, err := classify(alt.cc, useLabels)
		if err != nil {
			continue
		}
		if w, _ := a.looksWrong(k); w {
			continue
		}
		switch {
		case useLabels && s.labelled > 0:
			if acc := a.accuracy(); best == nil || acc > bestAcc {
				best, bestAcc = &alt, acc
			}
		case best == nil || alt.changes < best.changes:
			best = &alt
		}
	}
	now := fmt.Sprintf("layout %s, channel_order %s, scale %s, mean %s, std %s", st.cc.Layout, preprocess.ChannelOrder(st.cc.BGR), st.cc.Scale,
		floats(st.cc.Mean[:channelsOf(st.cc)]), floats(st.cc.Std[:channelsOf(st.cc)]))
	fix := "check sut.channel_order (bgr?), sut.scale (pixel: 0-255? symmetric: [-1, 1]?) and sut.mean/std against how the model was trained"
	if best != nil {
		res.Fix = strings.Join(best.keys, ", ")
		fix = "on the same images sut." + strings.Join(best.keys, ", sut.") + " looks right"
	}
	res.Warning = fmt.Sprintf("warning: %s: %s, as when the model is fed the wrong input convention (now %s); %s", e.Config.Name, why, now, fix)
	return res, nil
}

// WarnConvention runs CheckConvention and writes its warning, if any, as
// one line to log.
func (e *Experiment) WarnConvention(ctx context.Context, log io.Writer) error {
	c, err := e.CheckConvention(ctx)
	if err != nil || c == nil || c.Warning == "" {
		return err
	}
	_, err = fmt.Fprintln(log, c.Warning)
	return err
}

// classLabel names class k for messages: "3 (cat)" where the experiment
// knows its name.
func (e *Experiment) classLabel(k int) string {
	if k < len(e.classes) && e.classes[k] != "" {
		return fmt.Sprintf("%d (%s)", k, e.classes[k])
	}
	return fmt.Sprint(k)
}

// alternative is a convention to try, with its configuration keys and
// how many of channel order and scale it changes.
type alternative struct {
	cc      sut.ClassifierConfig
	keys    []string
	changes int
}

// alternatives returns the conventions other than cc's that the check
// tries: every channel order and scale (layout is the model's), each with
// the usual mean and std of its scale (ImageNet's; in pixel units for
// pixel; none for symmetric), the channel order kept first, then the
// scales unit, symmetric, pixel.
func alternatives(cc sut.ClassifierConfig) []alternative {
	var out []alternative
	nc := channelsOf(cc)
	for _, bgr := range []bool{cc.BGR, !cc.BGR} {
		if bgr && nc == 1 {
			continue
		}
		for _, sc := range []preprocess.Scale{preprocess.ScaleUnit, preprocess.ScaleSymmetric, preprocess.ScalePixel} {
			a := cc
			a.BGR, a.Scale = bgr, sc
			switch sc {
			case preprocess.ScaleUnit:
				a.Mean, a.Std = [3]float64{0.485, 0.456, 0.406}, [3]float64{0.229, 0.224, 0.225}
			case preprocess.ScalePixel:
				a.Mean, a.Std = [3]float64{123.675, 116.28, 103.53}, [3]float64{1, 1, 1}
			default:
				a.Mean, a.Std = [3]float64{}, [3]float64{1, 1, 1}
			}
			if a.BGR == cc.BGR && a.Scale == cc.Scale {
				continue
			}
			alt := alternative{cc: a}
			if bgr != cc.BGR {
				alt.keys = append(alt.keys, "channel_order: "+preprocess.ChannelOrder(bgr))
				alt.changes++
			}
			if sc != cc.Scale {
				alt.keys = append(alt.keys, "scale: "+sc.String())
				alt.changes++
			}
			if a.Mean != cc.Mean {
				alt.keys = append(alt.keys, "mean: "+floats(a.Mean[:nc]))
			}
			if a.Std != cc.Std {
				alt.keys = append(alt.keys, "std: "+floats(a.Std[:nc]))
			}
			out = append(out, alt)
		}
	}
	return out
}

func channelsOf(cc sut.ClassifierConfig) int {
	if cc.Channels == 1 {
		return 1
	}
	return 3
}

// floats writes numbers as a YAML flow list: [0.485, 0.456, 0.406].
func floats(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// NoteSkipped writes one line to log naming the files of the image folder
// that the experiment does not read (hidden files, other formats,
// folders), so that none is left out without a word; nothing when it
// reads them all or the data is not a folder.
func (e *Experiment) NoteSkipped(log io.Writer) {
	if note := e.data.Info().SkippedNote(); note != "" {
		fmt.Fprintf(log, "%s: data.path %s\n", e.Config.Name, note)
	}
}
