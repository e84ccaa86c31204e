package experiments

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/amt-dev/amt/nn"
)

// CheckModelOptions are the inputs of amt check without a configuration
// (amt check -model M.onnx -images DIR): everything CheckModelConfig
// writes into the configuration it makes.
type CheckModelOptions struct {
	// Model is the ONNX classifier, Images its folder of PNG/JPEG images
	// (unlabelled), Labels an optional file naming the model's classes
	// (sut.labels).
	Model, Images, Labels string
	// FeatureModel is the context's feature model (features.kind [model,
	// sut]); "" means phash features ([phash, sut]).
	FeatureModel string
	// Output is the results folder (output), relative to the working
	// directory; "" means results/<name>, the name being check-<the
	// model file's name>.
	Output string
	// Budget (0 = every image once), Time, FailRate, FailMR, Baseline,
	// Margin and Alpha are the check section's keys (nil, 0 or "" = the
	// key's default).
	Budget   int
	Time     time.Duration
	FailRate *float64
	FailMR   map[string]float64
	Baseline string
	Margin   *float64
	Alpha    *float64
}

// CheckModelAgent is the agent amt check uses without a configuration: the
// recommended agent of the suite benchmark (experiments/configs/suite.yaml).
const CheckModelAgent = "hts"

// CheckModelConfig returns the complete configuration of amt check
// without a configuration file: the model's input convention as its input
// shape says (DetectSUT: layout, channels and size inferred, the rest at
// its defaults), the folder of images, the hierarchical scenario, the
// recommended agent (hts) with seed 1, the context [model, sut] (or
// [phash, sut] without a feature model), timing off (so that a rerun
// gives the same files, byte for byte), and the check keys given. Paths
// are made absolute, so that the file works from its own folder (amt
// check -config OUT/config.yaml); the same options give the same bytes.
//
// It returns the configuration and its results folder.
func CheckModelConfig(o CheckModelOptions) (doc []byte, output string, err error) {
	abs := func(what, p string) (string, error) {
		a, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("check: %s %s: %w", what, p, err)
		}
		return a, nil
	}
	var model string
	model, err = abs("-model", o.Model)
	if err != nil {
		return nil, "", err
	}
	images, err := abs("-images", o.Images)
	if err != nil {
		return nil, "", err
	}
	mi, err := nn.Inspect(model)
	if err != nil {
		return nil, "", fmt.Errorf("check: -model: %w", err)
	}
	if len(mi.Inputs) != 1 {
		return nil, "", fmt.Errorf("check: -model %s has %d inputs, want one image input", o.Model, len(mi.Inputs))
	}
	if len(mi.Outputs) == 0 || len(mi.Outputs[0].Shape) != 2 {
		return nil, "", fmt.Errorf("check: -model %s: first output %v, want the logits [N, classes] of an image classifier", o.Model, mi.Outputs)
	}
	d, err := DetectSUT(mi.Inputs[0].Shape)
	if err != nil {
		return nil, "", fmt.Errorf("check: -model %s: %w", o.Model, err)
	}
	name := "check-" + folderSafe(strings.TrimSuffix(filepath.Base(model), filepath.Ext(model)))
	var b strings.Builder
	fmt.Fprintf(&b, "# amt check -model %s -images %s: the complete configuration it ran\n", filepath.Base(model), filepath.Base(images))
	fmt.Fprintf(&b, "# (amt check -config THIS_FILE runs it again; amt config -ref explains every key).\n")
	fmt.Fprintf(&b, "# Input convention from the model's input %s: %s.\n", dimsWords(d.Shape), d.Summary())
	fmt.Fprintf(&b, "name: %s\n", name)
	fmt.Fprintf(&b, "description: %s\n", yamlString(fmt.Sprintf("amt check of %s on the images of %s", filepath.Base(model), images)))
	b.WriteString("case_study: classification\nmode: online\n")
	fmt.Fprintf(&b, "data:\n  format: folder\n  path: %s\n", yamlString(images))
	sutYAML := d.SUTYAML(model)
	if o.Labels != "" {
		labels, err := abs("-labels", o.Labels)
		if err != nil {
			return nil, "", err
		}
		sutYAML += fmt.Sprintf("  labels: %s\n", yamlString(labels))
	}
	b.WriteString(sutYAML)
	if o.FeatureModel != "" {
		fm, err := abs("feature model", o.FeatureModel)
		if err != nil {
			return nil, "", err
		}
		fmt.Fprintf(&b, "features:\n  kind: [model, sut]\n  model: %s\n", yamlString(fm))
	} else {
		b.WriteString("features:\n  kind: [phash, sut]\n")
	}
	fmt.Fprintf(&b, "action_set: hierarchical\nagents:\n  - %s\nseeds: 1\ntiming: false\n", CheckModelAgent)
	output = o.Output
	if output == "" {
		output = filepath.Join("results", name)
	}
	fmt.Fprintf(&b, "output: %s\n", yamlString(output))
	b.WriteString("check:\n")
	if o.Budget == 0 {
		b.WriteString("  budget: 0                          # every image once\n")
	} else {
		fmt.Fprintf(&b, "  budget: %d\n", o.Budget)
	}
	if o.Time > 0 {
		fmt.Fprintf(&b, "  time: %s\n", o.Time)
	}
	if o.FailRate != nil || len(o.FailMR) > 0 {
		b.WriteString("  fail_on:\n")
		if o.FailRate != nil {
			fmt.Fprintf(&b, "    violation_rate: %s\n", strconv.FormatFloat(*o.FailRate, 'g', -1, 64))
		}
		if len(o.FailMR) > 0 {
			b.WriteString("    mr:\n")
			for _, k := range slices.Sorted(maps.Keys(o.FailMR)) {
				fmt.Fprintf(&b, "      %s: %s\n", k, strconv.FormatFloat(o.FailMR[k], 'g', -1, 64))
			}
		}
	}
	if o.Baseline != "" {
		fmt.Fprintf(&b, "  baseline: %s\n", yamlString(o.Baseline))
	}
	if o.Margin != nil || o.Alpha != nil {
		b.WriteString("  regression:\n")
		if o.Margin != nil {
			fmt.Fprintf(&b, "    margin: %s\n", strconv.FormatFloat(*o.Margin, 'g', -1, 64))
		}
		if o.Alpha != nil {
			fmt.Fprintf(&b, "    alpha: %s\n", strconv.FormatFloat(*o.Alpha, 'g', -1, 64))
		}
	}
	return []byte(b.String()), output, nil
}

// folderSafe makes s usable as a name: characters other than letters,
// digits, '-', '_' and '.' become '_'.
func folderSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, s)
}
