package plots

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
)

// caveats lists how these results differ from the paper's setup, from
// run.json and the results, then the caveats other sections added and the
// caller's notes.
func (b *builder) caveats() error {
	b.p("## Caveats\n\n")
	m := b.e.Meta
	var cs []string
	if b.detection {
		cs = append(cs,
			"The paper's SUT is SSD-ResNet50-FPN on 5,000 COCO val2017 images, which cannot be obtained here and would be far too slow on a CPU; amt's default stand-in is yolov3-tiny (the Darknet COCO weights) on a 158-image COCO subset.",
			"The paper's detection per-MR and per-degree results exist only as figures; only Table 2's detection row has numbers.",
			"Images are decoded with Go's image/jpeg, which differs from libjpeg-turbo (what Pillow, and so the original tool, used) by a few grey levels (0.24 on average, at most 4, on the COCO subset); that moves about 1 % of the detection verdicts. Everything after decoding matches the reference pipeline's goldens exactly.",
			"Images without annotations score an mAP of −1 on the source and every follow-up and so always pass, as in the original; they count as iterations.")
	} else {
		switch {
		case m != nil && m.SUT.SHA256 == paperSUTSHA256:
			cs = append(cs, "The SUT is the paper's SqueezeNet-1.1 CIFAR-10 checkpoint (the one the paper names; the released original code actually loaded ResNet-34 for CIFAR-10, original-implementation.md §4).")
		case m != nil:
			cs = append(cs, fmt.Sprintf("The SUT is %s (sha256 %.12s…), not the paper's SqueezeNet-1.1: compare shapes, not values.", filepath.Base(m.SUT.Path), m.SUT.SHA256))
		default:
			cs = append(cs, fmt.Sprintf("No run metadata (%s) to tell which SUT produced these results; the paper's, and amt's default, is the SqueezeNet-1.1 CIFAR-10 checkpoint.", record.MetaFile))
		}
		switch n := analysis.Images(b.e.Verdicts); {
		case n > 1017 && (m == nil || m.Data.SHA256 == mixed10000SHA256):
			cs = append(cs, fmt.Sprintf("The data are %d CIFAR-10 test images: records 1,017 and later are recovered from JPEG copies (mean absolute pixel error ≈ 6/255; classifiers lose about 10 points of accuracy on them), so accuracies are not comparable with the paper's.", n))
		case b.paper && n > 0 && n < 10000:
			c := fmt.Sprintf("The exhaustive table covers %d images, not the paper's 10,000: a pass has %d iterations instead of 10,000", n, n)
			if b.t1 != nil {
				per := max(n/10, 1)
				c += fmt.Sprintf(", and each Table 1 cell rests on about %d %s (a sampling error of several points)", per, map[bool]string{true: "image", false: "images"}[per == 1])
			}
			cs = append(cs, c+".")
		}
		if !b.labelled {
			cs = append(cs, "The data have no labels: a violation is any change of the top-1 class, and accuracies are undefined (shown as –).")
		}
	}
	if !b.paper {
		data := "These data"
		if m != nil {
			data = fmt.Sprintf("The data (%d images, %s `%s`)", m.Data.Images, m.Data.Format, filepath.Base(m.Data.Path))
		}
		cs = append(cs, data+" are not one of the paper's data sets, so the paper's numbers have no counterpart here: its Table 1 and Table 2 values and the statements of its text are left out.")
	}
	if c := featuresCaveat(m, b.detection); c != "" {
		cs = append(cs, c)
	}
	for _, a := range b.e.Agents {
		if b.e.Kind(a) == "cover" || a.Name == "cover" {
			cs = append(cs, "Agent `cover` reproduces Vowpal Wabbit 8.6.1's cover as the original ran it (`--cover 3 --nn 16`, DR, ψ = 1): `--epsilon 0.1` has no effect there and at most 3 arms have non-zero probability; `cover-modern` follows later VW semantics (original-implementation.md §1, vw-cover-dr-nn.md).")
			break
		}
	}
	if m != nil {
		var seeded []string
		for _, a := range m.Agents {
			if a.Name != "random" && a.Name != "ucb1" && a.Name != "linucb" && (a.Options["seed"] == "" || a.Options["seed"] == "run") {
				seeded = append(seeded, "`"+a.ID+"`")
			}
		}
		if len(seeded) > 0 {
			cs = append(cs, fmt.Sprintf("Agents %s seed their internal randomness (the networks' initialisation) from each run's seed, one stream per bandit. The original never seeded Vowpal Wabbit: every run, main and parameter bandits alike, used VW's default seed 0, so its runs differed only in image order and sampling; the agent option `seed: 0` does the same.", strings.Join(seeded, ", ")))
		}
	}
	if b.e.Verdicts != nil {
		cs = append(cs, "The original's baseline skipped the first image (a reset() side effect); amt's table includes every image.")
	}
	timed := false
	for _, a := range b.e.Agents {
		timed = timed || analysis.AccuracyOf(a.Summary.Runs).MeanIterationMS > 0
	}
	if timed {
		cs = append(cs, "Runtimes depend on the machine: the paper's ran on a cluster with PyTorch/TensorFlow, ours on a shared CPU in pure Go; compare the ratio of agent to random (both timed as the original timed them: features only for agents that read them, image loading excluded), not absolute times.")
	}
	cs = append(cs, b.caveatsOf...)
	cs = append(cs, b.opt.Notes...)
	for _, c := range cs {
		b.p("- %s\n", c)
	}
	b.p("\n")
	return nil
}

// featuresCaveat says where the context features came from and how that
// differs from the paper's independent ImageNet ResNet-18 (512-d).
func featuresCaveat(m *record.Meta, detection bool) string {
	const original = " (The original also added an unseeded random fc bias to every feature.)"
	tensor := func(f record.FeaturesMeta) string {
		if f.Output == "" {
			return "the output"
		}
		return "tensor `" + f.Output + "`"
	}
	switch {
	case m != nil && m.Features.Kind == "phash":
		return "Context features are a 256-bit perceptual hash (pHash), the alternative the paper tried and found not expressive enough; the paper's results used 512 ResNet-18 features."
	case m != nil && m.Features.Kind == "none":
		return "There are no context features (a constant 1): the agents cannot tell images apart, unlike the paper's, which saw 512 ResNet-18 features."
	case m == nil || m.Features.Model == nil:
		return ""
	case m.Features.Model.SHA256 == features512SHA256 && m.Features.Output == "" && !detection && m.SUT.SHA256 == paperSUTSHA256:
		return "Context features come from the SUT itself: amt's default feature model is the trunk of the very SqueezeNet-1.1 under test (its last Fire module, global-average-pooled — bit for bit the SUT's penultimate layer), so the agents see white-box information that the paper's independent ImageNet ResNet-18 (512-d, which cannot be obtained here) did not give. `make ablations` compares them with features of an independent network (ResNet-56, 64-d), pHash and none." + original
	case m.Features.Model.SHA256 == features512SHA256 && m.Features.Output == "":
		return "Context features come from a 512-d SqueezeNet-1.1 trunk (global-average-pooled, fine-tuned on CIFAR-10; not part of this SUT), standing in for the paper's ImageNet ResNet-18 (512-d), which cannot be obtained here." + original
	case m.Features.Model.SHA256 == m.SUT.SHA256:
		return fmt.Sprintf("Context features are %s of the SUT's own model %s: the agents see white-box information about the model they test, which the paper's independent ResNet-18 features did not give.", tensor(m.Features), filepath.Base(m.Features.Model.Path))
	default:
		return fmt.Sprintf("Context features are %s of %s (sha256 %.12s…), a network other than the SUT, in place of the paper's ImageNet ResNet-18 (512-d).", tensor(m.Features), filepath.Base(m.Features.Model.Path), m.Features.Model.SHA256)
	}
}
