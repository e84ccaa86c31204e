package plots

// The paper's published numbers, transcribed from
// /work/shared/paper/adaptive-metamorphic-testing.tex (line numbers below
// refer to that file). Everything else the paper shows (the per-MR bars of
// the agent, the per-degree curves of Figures cs1a/cs1b and
// robustness_classification/detection) exists only as figures whose data
// is not in the .tex, so there are no numbers to compare those with.
//
// The values are returned by functions so callers cannot change them.

import (
	"github.com/amt-dev/amt/plots/analysis"
	"github.com/amt-dev/amt/scenario"
)

// CIFAR10Classes are the CIFAR-10 class names in label order (0 = airplane),
// as the paper's Table 1 capitalises them.
func CIFAR10Classes() []string {
	return []string{"Airplane", "Automobile", "Bird", "Cat", "Deer", "Dog", "Frog", "Horse", "Ship", "Truck"}
}

// PaperTable1Row is one MR row of the paper's Table 1: the percentage of a
// class's images whose predicted class changes under the MR (exhaustive
// baseline), per class in label order, and the row's average over classes.
type PaperTable1Row struct {
	MR    string // MR name as in amt ("fliplr")
	Label string // the paper's row label ("Flip L/R")
	// Params are the parameters the paper's numbers really used (rotation
	// ±30°, shear ±20°: original-implementation.md §9), empty for
	// unparameterised MRs. The caption claims 30° for both.
	Params  []float64
	Classes [10]float64
	Avg     float64
}

// PaperTable1 returns the rows of the paper's Table 1 (tex lines 628–634,
// header line 626: Airplane … Truck, Avg.).
func PaperTable1() []PaperTable1Row {
	return []PaperTable1Row{
		{MR: "blur", Label: "Blur", Classes: [10]float64{10.60, 11.40, 13.10, 9.81, 7.30, 13.50, 17.70, 9.00, 6.00, 6.20}, Avg: 10.46},            // line 628
		{MR: "fliplr", Label: "Flip L/R", Classes: [10]float64{2.90, 1.00, 4.10, 6.71, 2.20, 6.80, 1.30, 2.40, 0.90, 2.40}, Avg: 3.07},            // line 629
		{MR: "flipud", Label: "Flip U/D", Classes: [10]float64{14.90, 74.60, 37.80, 33.13, 59.10, 53.90, 29.30, 92.40, 72.20, 43.30}, Avg: 51.06}, // line 630
		{MR: "grayscale", Label: "Grayscale", Classes: [10]float64{4.70, 5.40, 28.10, 7.91, 18.10, 26.00, 14.30, 6.70, 4.80, 5.30}, Avg: 12.13},   // line 631
		{MR: "invert", Label: "Invert", Classes: [10]float64{16.50, 29.40, 29.50, 33.13, 41.40, 70.30, 41.80, 38.30, 27.30, 35.70}, Avg: 36.33},   // line 632
		{MR: "rotation", Label: "Rotation", Params: []float64{-30, 30},
			Classes: [10]float64{25.49, 37.09, 35.43, 17.70, 69.00, 46.10, 20.63, 60.44, 42.44, 50.01}, Avg: 40.43}, // line 633
		{MR: "shear", Label: "Shear", Params: []float64{-20, 20},
			Classes: [10]float64{11.22, 4.99, 26.69, 35.79, 45.45, 51.97, 15.63, 40.24, 19.78, 55.24}, Avg: 30.70}, // line 634
	}
}

// paperMRs returns the paper's seven MRs in its order (Table 1's rows, the
// order of its figures).
func paperMRs() []string {
	var out []string
	for _, r := range PaperTable1() {
		out = append(out, r.MR)
	}
	return out
}

// paperOrder returns the MRs of present in the paper's order (paperMRs),
// then the others sorted; it empties present.
func paperOrder(present map[string]bool) []string {
	var out []string
	for _, m := range paperMRs() {
		if present[m] {
			out = append(out, m)
			delete(present, m)
		}
	}
	return append(out, analysis.SortedKeys(present)...)
}

// displayName returns the paper's label of an MR ("fliplr" → "Flip L/R");
// other names are returned unchanged.
func displayName(mr string) string {
	for _, r := range PaperTable1() {
		if r.MR == mr {
			return r.Label
		}
	}
	return mr
}

// table1Selectors returns the rows of the per-class effects table: the
// paper's Table 1 rows with the parameters its numbers used ("Rotation
// ±30°"), then shear ±30° as an extra row the paper does not have.
func table1Selectors() []analysis.Selector {
	var out []analysis.Selector
	for _, r := range PaperTable1() {
		name := r.Label
		if len(r.Params) == 2 && r.Params[0] == -r.Params[1] {
			name += " ±" + scenario.FormatValue(r.Params[1]) + "°"
		}
		out = append(out, analysis.Selector{Name: name, MR: r.MR, Params: r.Params})
	}
	return append(out, analysis.Selector{Name: "Shear ±30° (extra)", MR: "shear", Params: []float64{-30, 30}})
}

// The sha256 of the assets the paper's setup uses (shared/assets/SHA256SUMS),
// by which the report's caveats recognise them in run.json.
const (
	// paperSUTSHA256 is models/cifar10_squeezenet1_1.onnx, the paper's
	// SqueezeNet-1.1 CIFAR-10 checkpoint.
	paperSUTSHA256 = "7c36e5a721441b7cef1e6e3ebaf233f0976bfee1ca9061f87229af039e476aee"
	// features512SHA256 is models/features512_squeezenet1_1.onnx, amt's
	// default 512-d context features.
	features512SHA256 = "4b76f46edf12f452683fa2aa2b848496949c46bd46de33a3e816afe242660edc"
	// mixed10000SHA256 is cifar10/test_batch_10000_mixed.bin, whose records
	// 1,017 and later are recovered from JPEG copies.
	mixed10000SHA256 = "226ca9c158f52d5e071bd3f04e2c04a58ff91832526defec75ed85e04d634631"
)

// PaperTable1AvgRow returns Table 1's "Avg." row (tex line 635): the mean
// over the seven MRs per class, and in the last entry the overall mean.
func PaperTable1AvgRow() (classes [10]float64, overall float64) {
	return [10]float64{12.33, 23.41, 24.96, 20.60, 34.65, 38.37, 20.10, 35.64, 24.77, 28.31}, 26.31
}

// PaperTable2Row is one row of the paper's Table 2 (computational cost and
// accuracy of the agent and of random selection).
type PaperTable2Row struct {
	CaseStudy string // "classification" or "detection"
	// Seeds and Iterations are the paper's protocol behind the row: runs
	// per agent and iterations per run (line 598; original-implementation
	// §5: 10 seeds × 10,000 iterations, detection 10 × 5,000).
	Seeds, Iterations int
	// RuntimeAgentS and RuntimeRandomS are the mean wall times per
	// iteration in seconds (the original timed act + step + update: the
	// agent's act extracted features, the random agent's did not).
	RuntimeAgentS, RuntimeRandomS float64
	// Accuracies in percent: on unmodified images, on images modified by
	// the agent's choices and by random choices (mAP for detection).
	Unmodified, Agent, Random float64
}

// PaperTable2 returns the rows of the paper's Table 2 (tex lines 789–790;
// the classification accuracies are repeated in the text, lines 808–809,
// the detection ones on line 810, the runtimes on lines 800 and 802).
func PaperTable2() []PaperTable2Row {
	return []PaperTable2Row{
		{CaseStudy: "classification", Seeds: 10, Iterations: 10000, RuntimeAgentS: 0.1, RuntimeRandomS: 0.06, Unmodified: 96.6, Agent: 54.0, Random: 72.9}, // line 789
		{CaseStudy: "detection", Seeds: 10, Iterations: 5000, RuntimeAgentS: 0.63, RuntimeRandomS: 0.56, Unmodified: 54.3, Agent: 23.1, Random: 36.3},      // line 790
	}
}

// PaperClaim is a number the paper states in its text.
type PaperClaim struct {
	ID        string // stable key used by the report
	Line      int    // line in the .tex
	CaseStudy string // "classification", "detection" or "" for both
	Text      string // the claim, quoted or closely paraphrased
}

// PaperClaims returns the numeric statements of the paper's text that the
// reproduction can be checked against (those not already in Tables 1–2).
func PaperClaims() []PaperClaim {
	return []PaperClaim{
		{ID: "setup", Line: 598, Text: "Each run is one pass over the data: 10,000 iterations (classification), 5,000 (detection); mean of 10 runs with different seeds (line 599)."},
		{ID: "variants", Line: 798, Text: "The exhaustive search applies 59 transformations per image (5 MRs + 36 rotations + 18 shears)."},
		{ID: "flipud-over-50", Line: 612, CaseStudy: "classification", Text: "Flip U/D affects over 50 % of the images in the test set."},
		{ID: "flipud-automobile", Line: 613, CaseStudy: "classification", Text: "Flip U/D: 74.6 % of the automobile images are misclassified."},
		{ID: "fliplr-least", Line: 615, CaseStudy: "classification", Text: "Flip L/R is the least effective MR."},
		{ID: "agent-exceeds-baseline", Line: 707, CaseStudy: "classification", Text: "The agent's violation rate exceeds the baseline for all MRs except Rotation, where it is close to the baseline."},
		{ID: "rotation-10deg", Line: 860, CaseStudy: "classification", Text: "For more than 10 % of the source test cases a rotation of at least 10 degrees leads to a different classification."},
		{ID: "detection-70", Line: 731, CaseStudy: "detection", Text: "Object detection: over 70 % violation rate for four of the seven MRs."},
		{ID: "detection-rotation-most", Line: 734, CaseStudy: "detection", Text: "Object detection: Rotation is the most effective MR (and Shear with parameter selection is more efficient than in classification, lines 732–733)."},
		{ID: "detection-lowest", Line: 735, CaseStudy: "detection", Text: "Object detection: Flip L/R, Blur and Grayscale have the lowest violation rates (the model is most robust to them)."},
	}
}
