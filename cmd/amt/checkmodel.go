package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/features"
	"github.com/amt-dev/amt/nn"
)

// modelCheck holds amt check's flags for a check without a configuration
// file: amt check -model M.onnx -images DIR [-labels FILE].
type modelCheck struct {
	model, images, labels *string
}

// active reports whether the flags ask for a check without a
// configuration.
func (m modelCheck) active() bool { return *m.model != "" || *m.images != "" || *m.labels != "" }

// writeConfig makes the complete configuration of a check without a
// configuration file (experiments.CheckModelConfig: the convention the
// model's input shape says, the hierarchical scenario, the recommended
// agent, the check flags given) and writes it to OUT/config.yaml, where
// the next check reads it (amt check -config OUT/config.yaml), and
// returns its path. The feature model is the assets' default one when the
// assets have it, else the context is phash.
func (m modelCheck) writeConfig(env *cliEnv, assets, out string, budget int, timeBudget time.Duration, failRate *float64, failMR mrLimits,
	baseline string, margin, alpha float64) (string, error) {
	if *m.model == "" || *m.images == "" {
		return "", errors.New("check: without -config, want -model M.onnx and -images DIR (and optionally -labels FILE)")
	}
	o := experiments.CheckModelOptions{Model: *m.model, Images: *m.images, Labels: *m.labels, Output: out,
		Budget: max(budget, 0), Time: timeBudget, FailRate: failRate, FailMR: failMR, Baseline: baseline}
	if margin >= 0 {
		o.Margin = &margin
	}
	if alpha > 0 {
		o.Alpha = &alpha
	}
	if dir := assetsOr(assets); dir != "" {
		if fm := filepath.Join(dir, "models", features.DefaultModelFile); fileExists(fm) {
			o.FeatureModel = fm
		}
	}
	doc, output, err := experiments.CheckModelConfig(o)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(output, 0o755); err != nil {
		return "", fmt.Errorf("check: %w", err)
	}
	path := filepath.Join(output, record.ConfigFile)
	if err := record.WriteFileAtomic(path, doc); err != nil {
		return "", fmt.Errorf("check: %w", err)
	}
	if mi, err := nn.Inspect(*m.model); err == nil && len(mi.Inputs) == 1 {
		if d, err := experiments.DetectSUT(mi.Inputs[0].Shape); err == nil {
			fmt.Fprintf(env.stderr, "check: %s: input convention from its input shape %v: %s\n", filepath.Base(*m.model), mi.Inputs[0].Shape, d.Summary())
		}
	}
	fmt.Fprintf(env.stderr, "check: wrote %s (the next run: amt check -config %s)\n", path, path)
	return path, nil
}

// assetsOr returns the assets folder: dir when set, else data.AssetsDir's
// ("" when there is none).
func assetsOr(dir string) string {
	if dir != "" {
		return dir
	}
	d, _ := data.AssetsDir()
	return d
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
